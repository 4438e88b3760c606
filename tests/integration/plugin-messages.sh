#!/bin/bash
# The plugin as sbatch, srun and slurmstepd call it, without a cluster:
# tests/integration/plugin-host loads the built spank_moeflow.so and plays
# Slurm's part (options, items, environment), so every message can be
# reached, also those a cluster without GPUs never shows.
# Part 1: the user options (one table: registered in every context, one
# callback, idempotent in slurmstepd, recovered from Slurm's forwarded copy).
# Part 2: every error names where it lies (the study, the contract, the
# map, the topology, the variable a value came from), starts with
# "moeflow: ", and carries spank_strerror() where a SPANK call failed.
# MOEFLOW_PLUGIN may name another build of the plugin, e.g. an older one.
. "$MOEFLOW_SRCDIR/tests/integration/lib.sh"

HOST=$MOEFLOW_USER_BUILDDIR/tests/integration/plugin-host
T=$(mktemp -d /tmp/mfmsg.XXXXXX)
trap 'rm -rf "$T"' EXIT
D=$MOEFLOW_SRCDIR/tests/data
FWD=SLURM_SPANK__SLURM_SPANK_OPTION_moeflow_moe
# The slurmstepd of a 4-node step of 8 tasks per node, on node 0 (n1).
STEP=(-i jobid=42 -i stepid=0 -i nodeid=0 -i ntasks=8 -i total=32)
BATCH=(-i jobid=42 -i stepid=0xfffffffb -i nodeid=0 -i ntasks=1 -i total=1)
# Never the host's own /run/moeflow.
CACHE=(-a "cache_dir=$T/cache")
host() {  # host OUT [VAR=VALUE...] CONTEXT ARGS...: runs the plugin, output in $T/OUT
    local out=$T/$1 envs=(); shift
    while [[ $1 == *=* ]]; do envs+=("$1"); shift; done
    env SLURM_STEP_NODELIST='n[1-4]' "${envs[@]}" "$HOST" "$MOEFLOW_PLUGIN" "$@" > "$out" 2>&1
}

tap_plan 35

# --- registration: every option, in every context -------------------------
for ctx in allocator local remote; do
    host reg-$ctx $ctx "${CACHE[@]}"
    ok "$ctx: registers the 7 options, nothing fails" \
        test "$(grep -c '^register --moe-' "$T/reg-$ctx")" = 7 -a "$(grep -c '^rc .* -1$' "$T/reg-$ctx")" = 0
done
ok "the arguments are named as --help shows them" \
    has "$T/reg-allocator" '^register --moe-layout=tpN.cpN.ppN.vppN.epN.etpN$'

# --- a bad value: refused at once in sbatch, with -1, never a positive code --
host bad allocator -o moe-stage=tune
ok "sbatch: a bad --moe-stage fails its callback with -1" has "$T/bad" '^rc option --moe-stage -1$'
host badlayout local -o moe-layout=tp=x
ok "srun: a bad --moe-layout fails its callback with -1, saying where" \
    has "$T/badlayout" "^error: moeflow: --moe-layout=tp=x: column 1: tp: expected an integer"

# --- slurmstepd runs the callback twice: the second run changes nothing ----
host twice remote "${CACHE[@]}" "${STEP[@]}" -n 1 -o moe-stage=retune -o moe-candidate=c03
ok "slurmstepd: both runs of each callback succeed" \
    test "$(grep -c '^rc option --moe-[a-z]* 0$' "$T/twice")" = 4
ok "... and the task sees the value once" has "$T/twice" '^setenv MOEFLOW_STAGE=retune$'

# --- values recovered where no callback ran -------------------------------
host getopt remote "${CACHE[@]}" "${BATCH[@]}" -g moe-stage=fit -g moe-candidate=f1
ok "the batch step reads its options with spank_option_getopt" \
    has "$T/getopt" '^setenv MOEFLOW_CANDIDATE=f1$'
touch "$T/study.yaml"
host fwd "${FWD}_stage=validate" "${FWD}_study=$T/study.yaml" "${FWD}_candidate=v2" \
    "${FWD}_affinity=none" remote "${CACHE[@]}" "${STEP[@]}" -n 1
ok "--export=NONE: stage, study and candidate from Slurm's forwarded copies" \
    has "$T/fwd" '^setenv MOEFLOW_STAGE=validate$' && has "$T/fwd" "^setenv MOEFLOW_STUDY=$T/study.yaml\$" &&
    has "$T/fwd" '^setenv MOEFLOW_CANDIDATE=v2$'
ok "--export=NONE: --moe-affinity from its forwarded copy" \
    has "$T/fwd" '^setenv MOEFLOW_AFFINITY_SKIPPED=--moe-affinity=none$'
host fwdplace "${FWD}_layout=ep=32" "${FWD}_placement=nvlink-strict" remote "${CACHE[@]}" -a "topology=$D/domains/two-racks.yaml" "${STEP[@]}" -n 1
ok "--export=NONE: --moe-layout and --moe-placement from their forwarded copies" \
    has "$T/fwdplace" '^error: moeflow: nvlink-strict: the EP group of ranks 0-31 spans NVLink domains'
# A study directory with nothing frozen: the task-start check fails, which
# only --moe-enforce=warn lets through.
mkdir -p "$T/dir/contracts" && chmod -R go-w "$T/dir"
host strict "${FWD}_stage=retune" "${FWD}_study=$T/dir" remote "${CACHE[@]}" "${STEP[@]}" -n 1
host warn "${FWD}_stage=retune" "${FWD}_study=$T/dir" "${FWD}_enforce=warn" remote "${CACHE[@]}" -a enforce_override=allow "${STEP[@]}" -n 1
ok "--export=NONE: --moe-enforce=warn from its forwarded copy" \
    has "$T/strict" '^rc task_init -1$' && has "$T/warn" '^rc task_init 0$'
host both "${FWD}_stage=fit" remote "${CACHE[@]}" "${STEP[@]}" -n 1 -o moe-stage=scale
ok "an option given on the command line wins over the forwarded copy" \
    has "$T/both" '^setenv MOEFLOW_STAGE=scale$'

# --- a bad forwarded value: deferred to task_init; never fails the batch step --
host forged "${FWD}_candidate=../../etc" remote "${CACHE[@]}" "${STEP[@]}" -n 1
ok "a forged forwarded value fails the task (-1), not slurmstepd's init" \
    has "$T/forged" '^rc init_post_opt 0$' && has "$T/forged" '^rc task_init -1$'
host forgedbatch "${FWD}_candidate=../../etc" remote "${CACHE[@]}" "${BATCH[@]}" -n 1
ok "... and in the batch step it is reported, the step goes on" \
    has "$T/forgedbatch" "^error: moeflow: .*--moe-candidate '../../etc'" &&
    has "$T/forgedbatch" '^rc task_init 0$'

# --- part 2: each error names its source -----------------------------------
# Options: sbatch/srun name the option (the value's source), slurmstepd
# the variable a forwarded value came from.
ok "sbatch: the message names the option and the value" \
    has "$T/bad" "^error: moeflow: invalid --moe-stage 'tune': valid stages are"
ok "slurmstepd: a forwarded value's message names the variable it came from" \
    has "$T/forged" "^error: moeflow: ${FWD}_candidate: invalid --moe-candidate '\.\./\.\./etc'"
host nostudy allocator -o moe-stage=fit -o "moe-study=$T/no-such-study"
ok "sbatch: a missing study is named" \
    has "$T/nostudy" "^error: moeflow: --moe-study '$T/no-such-study': No such file or directory\$"

# A study directory (nothing frozen) with an unreadable manifest: a job
# array is checked candidate by candidate from the manifest.
mkdir -p "$T/man/contracts" && printf '{bad' > "$T/man/manifest.json" && chmod -R go-w "$T/man"
host manifest allocator -o moe-stage=retune -o "moe-study=$T/man" --array=0-3
ok "sbatch --array: the manifest's error names the file, line and column" \
    has "$T/manifest" "^error: moeflow: contract check at submission: $T/man/manifest\.json:1:[0-9]+: "
ok "... and the submission is refused" has "$T/manifest" '^rc init_post_opt -1$'

# The node's side of the contract check (user_init): the admin's topology
# and NVLink-domain map.
host topo remote -a "hwloc_xml=$T/missing.xml" "${STEP[@]}" -n 1 -o moe-stage=retune -o "moe-study=$T/dir"
ok "slurmstepd: an unreadable hwloc_xml= is named in the contract's node facts" \
    has "$T/topo" "^error: moeflow: node topology for the contract: $T/missing\.xml: "
host map remote "${CACHE[@]}" -a "topology=$T/missing.yaml" "${STEP[@]}" -n 1 \
    -o moe-stage=retune -o "moe-study=$T/dir"
ok "slurmstepd: an unreadable NVLink-domain map is named in the contract's node facts" \
    has "$T/map" "^error: moeflow: node facts for the contract: $T/missing\.yaml: "
# Nothing frozen and no declared contract: the check at job start names
# what it looked for.
ok "slurmstepd: the check at job start names the declared contract it lacks" \
    has "$T/map" "^error: moeflow: contract check at job start: $T/dir/contracts/baseline\.json: "

# Contracts are written as the job user, never as root: a step run as root
# freezes and records nothing, and says which study it left alone.
if [ "$(id -u)" = 0 ]; then
    S=$T/sealed
    mkdir -p "$S/contracts"
    cat > "$S/contracts/baseline.json" <<'JSON'
{"environment": {"megatron": "core_v0.16.0"}, "hardware": {"gpu_model": "H100", "gpus": 16},
 "workload": {"model": "qwen3-30b-a3b", "mbs": 1}, "semantics": {"routing": "dropless"},
 "parallel": {"tp": 1, "ep": 16}, "tuning": {"dispatcher": "alltoall", "ep_overlap": false},
 "timing": {"window": [41, 50]}}
JSON
    chmod 0755 "$T" && chown -R nobody "$S" && chmod -R go-w "$S"
    host rootfreeze remote "${CACHE[@]}" "${STEP[@]}" -n 1 -o moe-stage=contract -o "moe-study=$S"
    ok "as root: the refused freeze names the study" \
        has "$T/rootfreeze" "^error: moeflow: contract check at job start: $S: refusing to write contracts as root"
    (cd "$T" && runuser -u nobody -- "$HOST" "$MOEFLOW_PLUGIN" remote "${CACHE[@]}" "${STEP[@]}" \
        -n 1 -o moe-stage=contract -o "moe-study=$S" > "$T/freeze" 2>&1)
    host rootrecord remote "${CACHE[@]}" -i jobid=43 -i stepid=0 -i nodeid=0 -i ntasks=8 -i total=32 \
        -n 1 -o moe-stage=profile -o "moe-study=$S"
    ok "as root: the run that cannot be recorded names the study" \
        has "$T/rootrecord" "^error: moeflow: contract record at job start: $S: refusing to write contracts as root"
else
    tap_skip "as root: the refused freeze names the study" "needs root"
    tap_skip "as root: the run that cannot be recorded names the study" "needs root"
fi

# Binding: the plan comes from a topology that claims to be this machine
# (HWLOC_THISSYSTEM=1) but whose CPUs 48-55 are not online here.
host bind HWLOC_THISSYSTEM=1 SLURM_STEP_GPUS=0,1 remote \
    -a "hwloc_xml=$D/topology/mpibind-g4dnmetal.xml" \
    -i jobid=42 -i stepid=0 -i nodeid=0 -i ntasks=2 -i total=2 -i cores=0-7 -n 2
ok "a binding that fails names the topology it was planned from" \
    has "$T/bind" "^moeflow: task 1: $D/topology/mpibind-g4dnmetal\.xml: the planned CPUs are not all online"
ok "... and never fails the task" test "$(grep -c '^rc task_init 0$' "$T/bind")" = 2

# Placement: the step's node list, and SPANK items that cannot be read.
host nodelist SLURM_STEP_NODELIST='n[1-4' remote "${CACHE[@]}" "${STEP[@]}" -n 1 \
    -o moe-layout=ep=32 -o moe-placement=nvlink-strict
ok "nvlink-strict: a node list that does not parse names its variable" \
    has "$T/nodelist" "^error: moeflow: nvlink-strict: SLURM_STEP_NODELIST: 'n\[1-4' is not a Slurm hostlist"
host noitems remote "${CACHE[@]}" -i jobid=42 -i stepid=0 -i ntasks=8 -n 1 \
    -o moe-layout=ep=32 -o moe-placement=nvlink-strict
ok "nvlink-strict: an item SPANK cannot give carries spank_strerror" \
    has "$T/noitems" "^error: moeflow: nvlink-strict: cannot read the step's task counts: Item not available"
host noaff SLURM_STEP_GPUS=0 remote -a "hwloc_xml=$D/topology/mpibind-g4dnmetal.xml" \
    -i jobid=42 -i stepid=0 -n 1
ok "affinity: an item SPANK cannot give carries spank_strerror in MOEFLOW_AFFINITY_SKIPPED" \
    has "$T/noaff" "^setenv MOEFLOW_AFFINITY_SKIPPED=cannot read the local task count: Item not available"
host setenv PLUGIN_HOST_SETENV_FAILS=1 remote "${CACHE[@]}" "${STEP[@]}" -n 1 -o moe-stage=fit
ok "a spank_setenv that fails names the variable and carries spank_strerror" \
    has "$T/setenv" "^error: moeflow: .*MOEFLOW_STAGE.*: Bad argument\$"

# A relative --moe-study is found under SLURM_SUBMIT_DIR however deep (the
# old 2048-byte buffer fell back to the bare relative name, so the check
# silently did not apply), and a directory too long to name is an error,
# never a cut path that names another folder.
deep=$T/$(printf 'd%.0s' {1..200})
for _ in 1 2 3 4 5 6 7 8 9 10 11; do deep=$deep/$(printf 'd%.0s' {1..200}); done
mkdir -p "$deep/dir/contracts" && chmod -R go-w "$T"
host deep SLURM_SUBMIT_DIR="$deep" "${FWD}_stage=retune" "${FWD}_study=dir" remote "${CACHE[@]}" "${STEP[@]}" -n 1
ok "a relative study under a ${#deep}-byte SLURM_SUBMIT_DIR is checked there (nothing frozen: the task fails)" \
    has "$T/deep" '^rc task_init -1$'
host toolong SLURM_SUBMIT_DIR="$deep$deep" "${FWD}_stage=retune" "${FWD}_study=dir" remote "${CACHE[@]}" "${STEP[@]}" -n 1
ok "a SLURM_SUBMIT_DIR longer than PATH_MAX is an error naming the study, and the task fails" \
    has "$T/toolong" "^error: moeflow: the study directory: dir: SLURM_SUBMIT_DIR: too long" &&
    has "$T/toolong" '^rc task_init -1$'

# Every error line of every run above starts with the plugin's name.
cat "$T"/* 2>/dev/null | grep -a '^error: ' | grep -av '^error: moeflow: ' > "$T/unprefixed"
ok "every error message starts with 'moeflow: '" hasnt "$T/unprefixed" '.'

tap_done
