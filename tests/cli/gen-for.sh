#!/bin/bash
# moeflow gen --for BOTTLENECK keeps only the retune candidates that target
# the bottleneck moeflow diagnose named, and lists the rest as skipped.
. "$MOEFLOW_SRCDIR/tests/integration/lib.sh"
M=$MOEFLOW_BIN
export MOEFLOW_TEMPLATE_DIR=$MOEFLOW_SRCDIR/templates
out=$(mktemp -d) && trap 'rm -rf "$out"' EXIT
study=$MOEFLOW_SRCDIR/etc/studies/tiny-moe-2gpu.yaml
tap_plan 10

"$M" gen "$study" -o "$out/all" --stage retune > /dev/null 2>&1
"$M" gen "$study" -o "$out/host" --stage retune --for host > /dev/null 2>&1
tap_ok $? "gen --for host succeeds"
all=$(grep -c '^retune' "$out/all/candidates.tsv")
host=$(grep -c '^retune' "$out/host/candidates.tsv")
ok "it keeps some but not all retune candidates ($host of $all)" test "$host" -gt 0 -a "$host" -lt "$all"
ok "every kept candidate targets the host" \
    test "$(awk -F'\t' '$1 == "retune" && $7 != "host"' "$out/host/candidates.tsv" | wc -l)" = 0
ok "the kept ones are exactly the host-bound ones of the full catalogue" \
    test "$(awk -F'\t' '$1 == "retune" && $7 == "host" {print $3}' "$out/all/candidates.tsv")" = \
         "$(awk -F'\t' '$1 == "retune" {print $3}' "$out/host/candidates.tsv")"
ok "the others are listed as skipped with the reason" \
    has "$out/host/manifest.json" 'targets communication, not the diagnosed bottleneck'
"$M" gen "$study" -o "$out/bad" --for cpu > /dev/null 2> "$out/bad.err"
tap_ok $(( $? != 1 )) "an unknown bottleneck is a usage error (exit 1)"

# diagnose suggests what gen --for produces and nothing else: for each
# bottleneck, every retune variable gen --for makes (in any example study)
# is in diagnose's list, and everything diagnose lists is made by some study.
for b in memory communication host compute; do
    : > "$out/made.$b"
    for y in "$MOEFLOW_SRCDIR"/etc/studies/*.yaml; do
        "$M" gen "$y" -o "$out/gen-$b-$(basename "$y" .yaml)" --stage retune --for "$b" > /dev/null 2>&1
        awk -F'\t' '$1 == "retune" { print $4 }' "$out/gen-$b-$(basename "$y" .yaml)/candidates.tsv" >> "$out/made.$b"
    done
    sort -u -o "$out/made.$b" "$out/made.$b"
    "$M" diagnose --list "$b" 2> /dev/null | sed -n 's/^  - \([a-z_]*\):.*/\1/p' | sort -u > "$out/listed.$b"
    ok "$b: diagnose lists exactly what gen --for $b produces ($(tr '\n' ' ' < "$out/made.$b"))" \
        diff "$out/listed.$b" "$out/made.$b"
done
tap_done
