#!/bin/bash
# moeflow gen without a cluster: every example study generates exactly its
# reviewed golden directory (tests/data/golden/NAME), every generated script
# passes bash -n and shellcheck, and the output directory appears whole or
# not at all.
. "$MOEFLOW_SRCDIR/tests/integration/lib.sh"
[ -x "$MOEFLOW_BIN" ] || skip_all "moeflow not built"
# shellcheck is part of the check, not an extra: without it the scripts
# fail their check (build-aux/install-deps.sh --test installs it).
have_shellcheck=1
command -v shellcheck > /dev/null || have_shellcheck=0
export MOEFLOW_TEMPLATE_DIR=$MOEFLOW_SRCDIR/templates
T=$(mktemp -d /tmp/moeflow-gen-golden.XXXXXX)
trap 'rm -rf "$T"' EXIT

STUDIES="qwen3-30b-a3b-16xh100 qwen3-235b-a22b-256xh100 deepseek-v3-1024xh100 mixtral-8x7b-16xh100 tiny-moe-2gpu"
tap_plan 38

for n in $STUDIES; do
    # Run from the study folder so that messages and copies name it the same
    # way the golden files were made.
    (cd "$MOEFLOW_SRCDIR/etc/studies" && "$MOEFLOW_BIN" gen "$n.yaml" -o "$T/$n") 2>&1 | diag
    rmdir "$T/$n/logs"
    # The capture script is copied byte for byte: compared with its source,
    # not kept five more times under golden/.
    cmp "$MOEFLOW_SRCDIR/templates/moeflow_capture.py" "$T/$n/moeflow_capture.py" 2>&1 | diag
    tap_ok "${PIPESTATUS[0]}" "$n: moeflow_capture.py is the template folder's, unchanged"
    rm -f "$T/$n/moeflow_capture.py"
    # So is the fit stage's Python folder, where a fit stage runs (a flex
    # dispatcher's study has none).
    if grep -q '"stage": "fit"' "$T/$n/manifest.json" && [ -f "$T/$n/fit.sbatch" ]; then
        diff -r "$MOEFLOW_SRCDIR/templates/fit-python" "$T/$n/fit-python" 2>&1 | diag
        tap_ok "${PIPESTATUS[0]}" "$n: fit-python/ is the template folder's, unchanged"
    else
        ok "$n: no fit stage runs, and no fit-python/ is written" test ! -e "$T/$n/fit-python"
    fi
    rm -rf "$T/$n/fit-python"
    # --moe-study holds the absolute output path; the golden files say @OUTDIR@.
    grep -rl "$T/$n" "$T/$n" | xargs -r sed -i "s|$T/$n|@OUTDIR@|g"
    diff -ru "$MOEFLOW_SRCDIR/tests/data/golden/$n" "$T/$n" > "$T/$n.diff"
    tap_ok $? "$n: output matches tests/data/golden/$n"
    [ -s "$T/$n.diff" ] && head -40 "$T/$n.diff" | diag
    rc=0
    for s in "$T/$n"/*.sbatch "$T/$n"/*.sh; do
        # each command's own status, not diag's
        bash -n "$s" 2>&1 | diag
        [ "${PIPESTATUS[0]}" = 0 ] || { rc=1; echo "bash -n fails on $s" | diag; }
        if [ "$have_shellcheck" = 1 ]; then
            shellcheck "$s" 2>&1 | diag
            [ "${PIPESTATUS[0]}" = 0 ] || { rc=1; echo "shellcheck fails on $s" | diag; }
        else
            rc=1
            echo "shellcheck is not installed (build-aux/install-deps.sh --test installs it)" | diag
        fi
    done
    tap_ok $rc "$n: every script passes bash -n and shellcheck"
    rc=0
    for s in "$T/$n"/*.sbatch "$T/$n"/*.sh; do [ -x "$s" ] || rc=1; done
    tap_ok $rc "$n: scripts are executable"
done

study=$MOEFLOW_SRCDIR/etc/studies/tiny-moe-2gpu.yaml
"$MOEFLOW_BIN" gen "$study" -o "$T/tiny-moe-2gpu" 2> "$T/exists.err"
tap_ok $(( $? == 1 ? 0 : 1 )) "an existing output directory is refused (exit 1, usage)"
ok "... and the message says why" has "$T/exists.err" "already exists"

rc=0
"$MOEFLOW_BIN" gen "$study" -o "$T/dry" --dry-run > "$T/dry.out" || rc=1
[ -e "$T/dry" ] && rc=1
tap_ok $rc "--dry-run writes nothing"
ok "--dry-run lists the files" has "$T/dry.out" "retune.sbatch"

"$MOEFLOW_BIN" gen "$study" -o "$T/only" --stage retune 2>&1 | diag
ok "--stage retune writes the retune script" test -f "$T/only/retune.sbatch"
tap_ok "$(ls "$T/only"/*.sbatch | wc -l | awk '{ print ($1 == 1) ? 0 : 1 }')" "... and no other stage's"
ok "... and submit.sh submits only retune" test "$(grep -c '^id=\$(submit' "$T/only/submit.sh")" = 1

# From the build tree, with no --templates and no MOEFLOW_TEMPLATE_DIR, gen
# uses the source tree's templates (not the install path, which may not
# exist): the same output as the golden files.
# (The build tree's own binary: MOEFLOW_BIN may be a copy for the job user.)
(cd "$MOEFLOW_SRCDIR/etc/studies" && env -u MOEFLOW_TEMPLATE_DIR "$MOEFLOW_BUILDDIR/gen/moeflow" gen \
    tiny-moe-2gpu.yaml -o "$T/nodefault") > "$T/nodefault.out" 2>&1
tap_ok $? "gen from the build tree finds its templates without flags"
rmdir "$T/nodefault/logs" 2> /dev/null
rm -rf "$T/nodefault/moeflow_capture.py" "$T/nodefault/fit-python"
grep -rl "$T/nodefault" "$T/nodefault" | xargs -r sed -i "s|$T/nodefault|@OUTDIR@|g"
ok "... the source tree's: the output matches the golden files" \
    diff -r "$MOEFLOW_SRCDIR/tests/data/golden/tiny-moe-2gpu" "$T/nodefault"
"$MOEFLOW_BIN" gen --help > "$T/help.out"
ok "gen --help's example does not run submit.sh as root" \
    has "$T/help.out" "submit.sh as the job user"

mkdir "$T/broken-templates"
cp -r "$MOEFLOW_SRCDIR"/templates/* "$T/broken-templates/"
echo "{{no_such_variable}}" >> "$T/broken-templates/validate.sbatch.in"
rc=1
"$MOEFLOW_BIN" gen "$study" -o "$T/broken" --templates "$T/broken-templates" 2> "$T/broken.err" \
    || rc=0
[ -e "$T/broken" ] && rc=1
tap_ok $rc "a template error leaves no output directory"
ok "... and names the template file and line" has "$T/broken.err" \
    "validate.sbatch.in:[0-9]+: undefined template variable 'no_such_variable'"
left=$(find "$T" -maxdepth 1 -name 'broken.tmp-*' | wc -l)
tap_ok "$left" "... nor a temporary directory"
tap_done
