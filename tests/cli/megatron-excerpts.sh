#!/bin/bash
# The committed Megatron excerpts (tests/data/megatron/excerpts), which
# test_megatron_rules checks every rule citation against, are the real
# source: each line equals the line of ../shared/megatron's tarball, and
# every citation's lines are there.  The tarballs are not part of the
# project: where they are missing (CI) this skips, and tests/skips.tsv says
# that is expected.
. "$MOEFLOW_SRCDIR/tests/integration/lib.sh"
S=$MOEFLOW_SRCDIR
shared=${MOEFLOW_MEGATRON_DIR:-$S/../shared/megatron}
out=$(mktemp -d) && trap 'rm -rf "$out"' EXIT
tap_plan 2

"$MOEFLOW_BUILDDIR/tests/unit/study/test_megatron_rules" --citations > "$out/citations"
ok "test_megatron_rules lists its citations (more than 100)" \
    test "$(wc -l < "$out/citations")" -gt 100
if [ -f "$shared/megatron-lm-core_v0.19.0.tar.xz" ]; then
    python3 "$S/tests/data/megatron/excerpts.py" check "$shared" < "$out/citations" > "$out/check" 2>&1
    tap_ok $? "the excerpts match ../shared/megatron line for line, every cited line included"
    diag < "$out/check"
else
    tap_skip "the excerpts match ../shared/megatron line for line, every cited line included" \
        "no ../shared/megatron here: the tarballs are not part of the project"
fi
tap_done
