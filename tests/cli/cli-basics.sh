#!/bin/bash
# The CLI's front door: --version, --help, exit code 1 for usage errors, a
# suggestion for a mistyped command or option, and a short --help with an
# example for every subcommand.
. "$MOEFLOW_SRCDIR/tests/integration/lib.sh"
M=$MOEFLOW_BIN
out=$(mktemp -d) && trap 'rm -rf "$out"' EXIT

"$M" --help > "$out/help" 2>&1
cmds=$(awk '/^commands:/ {on=1; next} on && /^  [a-z]/ {print $1}' "$out/help")
n=$(echo "$cmds" | wc -w)
tap_plan $(( 8 + 3 * n ))

"$M" --version > "$out/v" 2>&1
ok "--version names moeflow and the Slurm it was built against" \
    has "$out/v" '^moeflow [0-9]+\.[0-9]+\.[0-9]+ \(built against Slurm [0-9]+\.[0-9]{2}\.[0-9]+\)$'
ok "--help lists the subcommands" test "$n" -ge 9
"$M" > /dev/null 2>&1
tap_ok $(( $? != 1 )) "no command exits 1 (usage)"
"$M" contrct > "$out/typo" 2>&1
tap_ok $(( $? != 1 )) "an unknown command exits 1"
ok "and suggests the closest one" has "$out/typo" "unknown command 'contrct' \(did you mean 'contract'\?\)"
# The verdict is there, without a single escape character.
plain_verdict() { grep -q refused "$1" && ! grep -q "$(printf '\033')" "$1"; }

# Colour: only on a terminal (script(1) gives the command one), never with
# NO_COLOR, never into a pipe.
printf '%s' '{"environment":{},"hardware":{},"workload":{},"semantics":{},"parallel":{},"tuning":{"a":1,"b":1},"timing":{}}' > "$out/f.json"
sed 's/"a":1,"b":1/"a":2,"b":2/' "$out/f.json" > "$out/r.json"
diff_cmd=$(printf '%q ' "$M" contract diff "$out/f.json" "$out/r.json" --stage retune)
script -qc "$diff_cmd" /dev/null > "$out/tty" 2>&1
ok "on a terminal the verdict is coloured" grep -q $'\033\[31mrefused' "$out/tty"
NO_COLOR=1 script -qc "$diff_cmd" /dev/null > "$out/nocolor" 2>&1
ok "NO_COLOR turns colour off on a terminal" plain_verdict "$out/nocolor"
eval "$diff_cmd" > "$out/pipe" 2>&1
ok "into a pipe there is no colour" plain_verdict "$out/pipe"
for c in $cmds; do
    "$M" "$c" --help > "$out/$c.help" 2>&1
    tap_ok $? "moeflow $c --help exits 0"
    ok "moeflow $c --help is short and shows an example" \
        sh -c "[ \$(wc -l < '$out/$c.help') -le 40 ] && grep -qi 'example' '$out/$c.help'"
    "$M" "$c" --hepl > "$out/$c.typo" 2>&1
    tap_ok $(( $? != 1 || $(grep -c "moeflow $c: did you mean --help?" "$out/$c.typo") != 1 )) \
        "moeflow $c --hepl exits 1 and suggests --help"
done
tap_done
