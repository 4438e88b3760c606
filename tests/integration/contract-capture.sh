#!/bin/bash
# The contract stage's capture on a real local Slurm cluster, as the job
# user: a study whose launcher is `python3 TREE/pretrain_gpt.py` declares
# Transformer Engine 2.9 while TREE holds TE 2.4 (Python imports from the
# entry script's folder).  submit.sh's contract job fails naming both
# values, and neither fit nor any later stage runs.  The same study over a
# tree with TE 2.9: the contract job succeeds, measured.json is there, and
# the chain goes on to the fit stage.
. "$MOEFLOW_SRCDIR/tests/integration/lib.sh"
require_root
[ -x "$MOEFLOW_BIN" ] || skip_all "moeflow not built"
command -v python3 > /dev/null || skip_all "python3 not installed"

tap_plan 17
cluster_up capture --nodes 1
U=slurmtest
id $U > /dev/null 2>&1 || useradd -m $U
as_user() { runuser -u $U -- env SLURM_CONF="$SLURM_CONF" PATH="$PATH" "$@"; }
export MOEFLOW_TEMPLATE_DIR=$MOEFLOW_SRCDIR/templates

# tree DIR TE_VERSION: a Megatron-LM checkout with core 0.19 and a TE
# package beside pretrain_gpt.py, which hands over to the test double
# (tests/doubles/fake-megatron) so that the later stages can run.
tree() {
    mkdir -p "$1/megatron/core" "$1/transformer_engine"
    echo '__version__ = "0.19.0"' > "$1/megatron/core/package_info.py"
    echo "__version__ = \"$2\"" > "$1/transformer_engine/__init__.py"
    cat > "$1/pretrain_gpt.py" <<PY
import os, sys
fake = "$MOEFLOW_SRCDIR/tests/doubles/fake-megatron"
os.execv(fake, [fake, "$MOEFLOW_SRCDIR/tests/data/megatron/argparse-core_v0.19.0.txt"] + sys.argv[1:])
PY
    chmod -R a+rX "$1"
}
# study NAME TREE: the tiny study with TREE's trainer, TE 2.9 and no Apex declared.
study() {
    sed -e "s|command: python pretrain_gpt.py|command: python3 $2/pretrain_gpt.py|" \
        -e 's|^  transformer_engine: .*|  transformer_engine: "2.9"\n  apex: false|' \
        "$MOEFLOW_SRCDIR/etc/studies/tiny-moe-2gpu.yaml" > "$WORK/$1.yaml"
    as_user "$MOEFLOW_BIN" gen "$WORK/$1.yaml" -o "$WORK/$1" 2>&1 | diag
}
tree "$WORK/te24" 2.4.0
tree "$WORK/te29" 2.9.0
cd "$WORK" || exit 1

# --- TE 2.9 declared, 2.4 found ------------------------------------------
study bad "$WORK/te24"
(cd "$WORK/bad" && as_user ./submit.sh) > bad.out 2> bad.err
tap_ok $(( $? == 0 )) "submit.sh stops when the contract job fails"
diag < bad.err
# sbatch --wait printed the id before it failed: submit.sh quotes it.
cid=$(sed -n "s/.*contract: sbatch failed (exit [0-9]*, printed '\([0-9]*\)'.*/\1/p" bad.err)
ok "the contract job (${cid:-none}) ran" test -n "$cid"
ok "... and failed with the capture's exit code" has <(scontrol show job -o "$cid") 'JobState=FAILED .*ExitCode=3:0'
ok "its log names the field, the declared and the measured value" \
    has "$WORK/bad/logs/contract-$cid.out" '^moeflow capture: software.transformer_engine: declared 2.9, measured 2.4.0$'
ok "... and says the later stages will not run" \
    has "$WORK/bad/logs/contract-$cid.out" '^contract: the capture exited 3; fit and later stages will not run'
ok "measured.json records TE 2.4.0 from the tree the launcher imports from" \
    python3 -c 'import json,sys; m=json.load(open(sys.argv[1])); assert m["transformer_engine"]["version"] == "2.4.0" and m["megatron"]["path"] == sys.argv[2], m' \
    "$WORK/bad/contract/measured.json" "$WORK/te24/megatron"
ok "submit.sh submitted nothing after it" has bad.err 'contract: sbatch failed \(exit 3.*later stages were not submitted'
hasnt bad.err '^  fit: job'
tap_ok $? "... no fit job"
ok "no results were written" test ! -e "$WORK/bad/results/fit"
# A chain submitted without --wait (afterok on the failed contract job)
# never starts: Slurm refuses it at once, as its dependency can never be
# satisfied, or (if it was queued first) it pends DependencyNeverSatisfied.
fid=$(cd "$WORK/bad" && as_user sbatch --parsable --dependency=afterok:"$cid" fit.sbatch 2> "$WORK/dep.err")
reason=$(cat "$WORK/dep.err")
for _ in $(seq 100); do
    [ -n "$fid" ] || break
    reason=$(squeue -h -j "$fid" -o %r 2> /dev/null | sort -u)
    [ "$reason" = DependencyNeverSatisfied ] && break
    sleep 0.1
done
ok "fit chained afterok on it never starts (${reason:-no reason})" \
    grep -qE 'DependencyNeverSatisfied|Job dependency problem' <<< "$reason"
[ -z "$fid" ] || { scancel "$fid"; wait_job "$fid"; }
ok "... and wrote no results" test ! -e "$WORK/bad/results/fit"

# --- nothing contradicts ---------------------------------------------------
study good "$WORK/te29"
(cd "$WORK/good" && as_user ./submit.sh) > good.out 2> good.err
tap_ok $? "submit.sh submits every stage when the measurement agrees"
diag < good.err
cid=$(grep -Eo 'contract: job [0-9]+' good.err | grep -Eo '[0-9]+$')
ok "the contract job ($cid) completed" job_completed "$cid"
ok "measured.json is there: every check agrees" \
    python3 -c 'import json,sys; m=json.load(open(sys.argv[1])); assert {c["outcome"] for c in m["checks"]} == {"agrees"}, m["checks"]' \
    "$WORK/good/contract/measured.json"
ok "moeflow contract show labels it beside the frozen contract" \
    sh -c "'$MOEFLOW_BIN' contract show '$WORK/good' | grep -q '^  software.transformer_engine .*declared 2.9; measured 2.9.0; agrees$'"
fit=$(grep -Eo 'fit: job [0-9]+' good.err | grep -Eo '[0-9]+$')
wait_job "$fit" 120
n=$(ls "$WORK/good"/results/fit/*.rc 2> /dev/null | wc -l)
ok "the fit stage ran after it (5 runs, got $n)" test "$n" = 5
ok "the chain's last job is queued behind it" test -n "$(grep -Eo 'validate: job [0-9]+' good.err)"
scancel -u "$U" 2> /dev/null
if [ "$TAP_FAILED" -ne 0 ]; then
    for f in "$WORK"/*/logs/*; do echo "== $f"; tail -5 "$f"; done | diag
fi
tap_done
