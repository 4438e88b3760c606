#!/bin/bash
# A cluster without the moeflow plugin (plugstack.conf has none), whose
# containers start in "/" the way pyxis starts in an image's WORKDIR:
#  - gen of a study that does not say cluster.plugin refuses, naming the
#    plugin and both remedies, and writes nothing;
#  - with cluster.plugin: none, every stage's script carries no --moe-*
#    option, and submit.sh runs the whole chain to the end, every task in
#    the stand-in container (tests/doubles/container-standin.c) started in
#    "/": the scripts name every file of the study by absolute path;
#  - the scripts enforce the contract themselves (moeflow contract check):
#    frozen at the contract stage, every run sealed under runs/, a run that
#    changes two variables or meets another NCCL on its node refused before
#    the trainer starts.
. "$MOEFLOW_SRCDIR/tests/integration/lib.sh"
require_root
[ -x "$MOEFLOW_BIN" ] || skip_all "moeflow not built"
STANDIN=$MOEFLOW_BUILDDIR/tests/doubles/.libs/container_standin.so
[ -f "$STANDIN" ] || skip_all "the container stand-in is not built (make check builds it)"

tap_plan 27
cluster_up plugin-free --nodes 1 --plugin "" --extra-plugin "$STANDIN"
U=slurmtest
id $U > /dev/null 2>&1 || useradd -m $U
as_user() { runuser -u $U -- env SLURM_CONF="$SLURM_CONF" PATH="$PATH" "$@"; }
export MOEFLOW_TEMPLATE_DIR=$MOEFLOW_SRCDIR/templates

sbatch --help > "$WORK/help.out" 2>&1
sbatch --test-only --container-image=x --wrap true > "$WORK/test-only.out" 2>&1
tap_ok $? "this cluster's sbatch takes the stand-in's --container-image"
diag < "$WORK/test-only.out"
ok "... and no --moe-stage: the moeflow plugin is not loaded" hasnt "$WORK/help.out" "--moe-stage"

# The trainer: fake-megatron behind a wrapper that says where the task
# started and in which image, so the logs show it.
cat > "$WORK/where.sh" <<'EOF'
#!/bin/bash
echo "standin: cwd=$PWD image=${MOEFLOW_STANDIN_IMAGE:-none}"
exec "$@"
EOF
chmod 0755 "$WORK/where.sh"
FAKE=$(printf '%q %q %q' "$WORK/where.sh" "$MOEFLOW_SRCDIR/tests/doubles/fake-megatron" \
    "$MOEFLOW_SRCDIR/tests/data/megatron/argparse-core_v0.19.0.txt")
sed "s|command: python pretrain_gpt.py|command: ${FAKE//\\/\\\\}|" \
    "$MOEFLOW_SRCDIR/etc/studies/tiny-moe-2gpu.yaml" > "$WORK/auto.yaml"

"$MOEFLOW_BIN" gen "$WORK/auto.yaml" -o "$WORK/auto" > "$WORK/auto.out" 2>&1
tap_ok $(( $? != 2 )) "gen of a study that does not say cluster.plugin refuses here (exit 2)"
ok "naming the plugin and what sbatch showed" \
    has "$WORK/auto.out" "does not load the moeflow SPANK plugin \(sbatch --help lists no --moe-stage\)"
ok "and both remedies" has "$WORK/auto.out" "set cluster.plugin: none in the study.*ask the cluster's admin to install spank_moeflow.so"
ok "and writes nothing" test ! -e "$WORK/auto"

# Without the plugin, in a container that starts in "/" (workdir: /).
{
    sed '/^  launcher:/i\  plugin: none\n  container:\n    image: "nvcr.io#nvidia/nemo:25.09"\n    workdir: /' \
        "$WORK/auto.yaml"
} > "$WORK/free.yaml"
OUT=$WORK/free
"$MOEFLOW_BIN" gen "$WORK/free.yaml" -o "$OUT" > "$WORK/gen.out" 2>&1
tap_ok $? "gen writes the study with cluster.plugin: none"
diag < "$WORK/gen.out"
ok "and says it mounts the study directory at its own path" \
    has "$WORK/gen.out" "note: the jobs mount the study directory $OUT in the container"
rc=0; grep -E -- '--moe-(stage|study|candidate|enforce)' "$OUT"/*.sbatch "$OUT"/submit.sh \
    > "$WORK/moe.out" && rc=1
tap_ok $rc "no script carries an option of the moeflow plugin"
diag < "$WORK/moe.out"
ok "the training steps start in the study's container, in /" \
    has "$OUT/scale.sbatch" "--container-image='nvcr.io#nvidia/nemo:25.09' --container-mounts=$OUT:$OUT --container-workdir=/ "
ok "and bind CPUs with Slurm's own binding" has "$OUT/scale.sbatch" "^srun --cpu-bind=cores "

chown -R $U "$OUT"
(cd "$OUT" && PATH="$MOEFLOW_SRCDIR/tests/doubles/bin:$(dirname "$MOEFLOW_BIN"):$PATH" \
    as_user ./submit.sh) > "$WORK/submit.out" 2> "$WORK/submit.err"
tap_ok $? "submit.sh submits every stage on a cluster without the plugin"
diag < "$WORK/submit.err"
last=$(grep -Eo 'validate: job [0-9]+' "$WORK/submit.err" | grep -Eo '[0-9]+$')
wait_job "$last" 300
tap_ok $? "the validate job ($last) left the queue"

# every candidate the manifest lists (23 since issue 41: the tiny study's
# 2 warm-up steps end before a CUDA graph's capture, so its graph
# candidates are skipped)
ncand=$(python3 -c 'import json, sys; m = json.load(open(sys.argv[1]))
print(sum(len(s["candidates"]) for s in m["stages"]))' "$OUT/manifest.json")
n=$(cat "$OUT"/results/*/*.rc 2> /dev/null | grep -c '^0$')
tap_ok $(( n != ncand || ncand < 20 )) "all $ncand runs exited 0 (got $n)"
[ "$n" = "$ncand" ] || { tail -n 20 "$OUT"/logs/* | diag; }
ok "the contract stage froze the baseline itself" test -f "$OUT/contract/frozen.json"
"$MOEFLOW_BIN" contract verify "$OUT" > "$WORK/verify.out" 2>&1
ok "the frozen contract is intact" has "$WORK/verify.out" "^$OUT: intact, sha256 "
ok "the capture measured the environment inside the container" test -s "$OUT/contract/measured.json"
nruns=$(ls -d "$OUT"/runs/*/ 2> /dev/null | wc -l)
# the contract stage's run is the frozen contract itself
tap_ok $(( nruns < ncand - 1 )) "every run is sealed under runs/ ($nruns)"
run=$(dirname "$(grep -l '"ep_overlap":true' "$OUT"/runs/*/contract.json | head -1)")
"$MOEFLOW_BIN" contract verify "$run" > "$WORK/verify-run.out" 2>&1
ok "the EP-overlap run is allowed by the retune rule, as with the plugin" \
    has "$WORK/verify-run.out" "allowed by rule retune-one-variable: changes one tuning variable: ep_overlap"
bad=$(grep -h '^standin: ' "$OUT"/results/*/*.log | grep -v "^standin: cwd=/ image=nvcr.io#nvidia/nemo:25.09$" | sort -u)
tap_ok $(( $(grep -h '^standin: ' "$OUT"/results/*/*.log | wc -l) == 0 )) \
    "every training task ran in the stand-in container"
tap_ok $(( ${#bad} != 0 )) "every one started in / and still found the study's files"
echo "$bad" | diag
n=$(grep -h 'moeflow contract check: scale .*sealed runs/' "$OUT"/logs/scale-*.out | wc -l)
tap_ok $(( n != 5 )) "each scale run was checked and sealed once on its one node (got $n for 5 runs)"
ok "every task was told its candidate, as the plugin does" \
    hasnt "$OUT/results/retune/$(basename "$(ls "$OUT"/results/retune/*.log | head -1)")" "moeflow candidate none"

# The scripts refuse what the plugin would refuse, before the trainer starts.
read -r index cand < <(awk -F'\t' '$1 == "retune" && $4 == "ep_overlap" { print $2, $3; exit }' \
    "$OUT/candidates.tsv")
sed -i 's/"manual_gc":false/"manual_gc":true/' "$OUT/contracts/$cand.json"
rm -f "$OUT/results/retune/$cand.rc" "$OUT/results/retune/$cand.log"
job=$(cd "$OUT" && as_user sbatch --parsable --array="$index" retune.sbatch)
wait_job "$job" 60
ok "a retune run changing two variables is refused by its script (rc 3)" \
    test "$(cat "$OUT/results/retune/$cand.rc" 2> /dev/null)" = 3
ok "naming the rule" has "$OUT/logs/retune-${job}_$index.out" "refused by rule retune-one-variable"
ok "before the trainer started" test ! -s "$OUT/results/retune/$cand.log"
sed -i 's/"manual_gc":true/"manual_gc":false/' "$OUT/contracts/$cand.json"
job=$(cd "$OUT" && as_user sbatch --parsable --export=ALL,NCCL_VERSION=2.27.3 --array="$index" retune.sbatch)
wait_job "$job" 60
ok "a node whose container reports another NCCL is refused on that node" \
    has "$OUT/logs/retune-${job}_$index.out" "check at job start: refused by rule"
