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
tap_plan $(( 5 + 3 * n ))

"$M" --version > "$out/v" 2>&1
ok "--version names moeflow and the Slurm it was built against" \
    has "$out/v" '^moeflow [0-9]+\.[0-9]+\.[0-9]+ \(built against Slurm [0-9]+\.[0-9]{2}\.[0-9]+\)$'
ok "--help lists the subcommands" test "$n" -ge 9
"$M" > /dev/null 2>&1
tap_ok $(( $? != 1 )) "no command exits 1 (usage)"
"$M" contrct > "$out/typo" 2>&1
tap_ok $(( $? != 1 )) "an unknown command exits 1"
ok "and suggests the closest one" has "$out/typo" "unknown command 'contrct' \(did you mean 'contract'\?\)"
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
