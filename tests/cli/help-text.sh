#!/bin/bash
# Each subcommand's --help, printed from its option table (gen/options.c),
# is the reviewed text in tests/data/cli-help/CMD.txt, byte for byte, and a
# usage error prints the same text on stderr.
. "$MOEFLOW_SRCDIR/tests/integration/lib.sh"
M=$MOEFLOW_BIN
D=$MOEFLOW_SRCDIR/tests/data/cli-help
out=$(mktemp -d) && trap 'rm -rf "$out"' EXIT

cmds=$(cd "$D" && ls ./*.txt | sed 's#^\./##; s/\.txt$//')
tap_plan $(( 2 * $(echo "$cmds" | wc -w) + 1 ))
ok "every subcommand has a reviewed help text" test "$(echo "$cmds" | wc -w)" -eq \
    "$(sed -n 's/^ *{ *"\([a-z][a-z0-9-]*\)", *".*/\1/p' "$MOEFLOW_SRCDIR/gen/commands.c" | wc -l)"

for c in $cmds; do
    "$M" "$c" --help 2>&1 | sed -E 's#^( +)[^ ]*/templates\)$#\1PKGDATADIR/templates)#' > "$out/$c"
    diff -u "$D/$c.txt" "$out/$c" | diag
    tap_ok "${PIPESTATUS[0]}" "moeflow $c --help is tests/data/cli-help/$c.txt"
    "$M" "$c" --no-such-option > /dev/null 2> "$out/$c.err"
    grep -v -e "unrecognized option" -e "did you mean" "$out/$c.err" |
        sed -E 's#^( +)[^ ]*/templates\)$#\1PKGDATADIR/templates)#' | cmp -s - "$D/$c.txt"
    tap_ok $? "moeflow $c with an unknown option prints the same help on stderr"
done
tap_done
