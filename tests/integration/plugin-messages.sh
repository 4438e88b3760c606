#!/bin/bash
# The plugin as sbatch, srun and slurmstepd call it, without a cluster:
# tests/integration/plugin-host loads the built spank_moeflow.so and plays
# Slurm's part (options, items, environment), so every message can be
# reached, also those a cluster without GPUs never shows.
# Part 1: the user options (one table: registered in every context, one
# callback, idempotent in slurmstepd, recovered from Slurm's forwarded copy).
# MOEFLOW_PLUGIN may name another build of the plugin, e.g. an older one.
. "$MOEFLOW_SRCDIR/tests/integration/lib.sh"

HOST=$MOEFLOW_BUILDDIR/tests/integration/plugin-host
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

tap_plan 16

# --- registration: every option, in every context -------------------------
for ctx in allocator local remote; do
    host reg-$ctx $ctx "${CACHE[@]}"
    ok "$ctx: registers the 7 options, nothing fails" \
        test "$(grep -c '^register --moe-' "$T/reg-$ctx")" = 7 -a "$(grep -c '^rc .* -1$' "$T/reg-$ctx")" = 0
done
ok "the arguments are named as --help shows them" \
    has "$T/reg-allocator" '^register --moe-layout=tp=N,cp=N,ep=N,etp=N,pp=N$'

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

tap_done
