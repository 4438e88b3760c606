#!/bin/bash
# submit.sh stops at the first failed submission: a refused contract job, a
# failed sbatch of a later stage, or no sbatch at all each end it with a
# message naming the stage and a non-zero exit, and nothing after the failure
# is submitted.  A stand-in sbatch on PATH records every call.
. "$MOEFLOW_SRCDIR/tests/integration/lib.sh"
export MOEFLOW_TEMPLATE_DIR=$MOEFLOW_SRCDIR/templates
T=$(mktemp -d) && trap 'rm -rf "$T"' EXIT
tap_plan 14
"$MOEFLOW_BIN" gen "$MOEFLOW_SRCDIR/etc/studies/tiny-moe-2gpu.yaml" -o "$T/s" > /dev/null 2>&1

# sbatch double: fails (exit 1, Slurm's message) for the script named in
# $FAIL_ON, else prints a job id; logs each call's script name.  Its --help
# lists the plugin's --moe-stage unless $NO_PLUGIN is set.
mkdir "$T/bin"
cat > "$T/bin/sbatch" <<'SB'
#!/bin/bash
# --help as an sbatch that loads the moeflow plugin answers it, unless
# NO_PLUGIN is set
if [ "$1" = --help ]; then
    [ -n "${NO_PLUGIN:-}" ] || echo "      --moe-stage=STAGE       moeflow workflow stage"
    exit 0
fi
script=${!#}
echo "$script" >> "$CALLS"
if [ "$script" = "${FAIL_ON:-}" ]; then
    echo "sbatch: error: Batch job submission failed: Access/permission denied" >&2
    exit 1
fi
n=$(wc -l < "$CALLS")
echo "$(( 100 + n ))"
SB
chmod +x "$T/bin/sbatch"

run() {  # run NAME [FAIL_ON] [PATH]
    : > "$T/$1.calls"
    (cd "$T/s" && CALLS=$T/$1.calls FAIL_ON=${2:-} PATH=${3:-$T/bin:$PATH} ./submit.sh) \
        > "$T/$1.out" 2> "$T/$1.err"
}

run ok
tap_ok $? "every stage submits: exit 0"
ok "... six stages submitted" test "$(wc -l < "$T/ok.calls")" = 6
ok "... the last dependency names the validate job (106)" \
    has "$T/ok.out" 'last dependency: --dependency=afterok:106$'

run contract contract.sbatch
tap_ok $(( $? == 0 )) "a refused contract job: non-zero exit"
ok "... nothing after it was submitted" test "$(cat "$T/contract.calls")" = contract.sbatch
ok "... the message names the stage" has "$T/contract.err" 'submit.sh: contract: sbatch failed \(exit 1\)'
ok "... and 'all stages submitted' is never printed" hasnt "$T/contract.out" 'all stages submitted'

run scale scale.sbatch
tap_ok $(( $? == 0 )) "a failed scale submission: non-zero exit"
ok "... profile, retune and validate were not submitted" \
    test "$(tr '\n' ' ' < "$T/scale.calls")" = "contract.sbatch fit.sbatch scale.sbatch "

# An sbatch without the moeflow plugin (issue 40): submit.sh says so and
# submits nothing.
: > "$T/noplugin.calls"
(cd "$T/s" && CALLS=$T/noplugin.calls NO_PLUGIN=1 PATH=$T/bin:$PATH ./submit.sh) \
    > "$T/noplugin.out" 2> "$T/noplugin.err"
tap_ok $(( $? == 0 )) "an sbatch without the moeflow plugin: non-zero exit"
ok "... nothing was submitted" test ! -s "$T/noplugin.calls"
ok "... naming the plugin and both remedies" has "$T/noplugin.err" \
    'moeflow SPANK plugin \(spank_moeflow.so\) is not loaded here.*install it.*set cluster.plugin: none'

# No sbatch at all (SLURM not installed or not on PATH): bash exits 127.
mkdir "$T/empty"
for c in dirname mkdir; do ln -s "$(command -v $c)" "$T/empty/$c"; done
(cd "$T/s" && PATH=$T/empty /bin/bash ./submit.sh) > "$T/none.out" 2> "$T/none.err"
tap_ok $(( $? == 0 )) "no sbatch on PATH: non-zero exit"
ok "... with the stage named" has "$T/none.err" 'submit.sh: contract: sbatch failed \(exit 127\)'
tap_done
