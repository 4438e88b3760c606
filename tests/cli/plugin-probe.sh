#!/bin/bash
# gen's plugin probe (cluster.plugin: auto, issue 40) against sbatch
# stand-ins on PATH: what sbatch --help says decides the scripts, and a
# SLURM_CONF that names no file is not asked at all (Slurm retries such a
# file for 60 s before it prints anything, so every gen waited out the
# probe's 15 s: the test suite's gen calls took 15 s each and CI ran out).
. "$MOEFLOW_SRCDIR/tests/integration/lib.sh"
[ -x "$MOEFLOW_BIN" ] || skip_all "moeflow not built"
W=$(mktemp -d /tmp/mfprobe.XXXXXX)
trap 'rm -rf "$W"' EXIT
S=$MOEFLOW_SRCDIR/etc/studies/tiny-moe-2gpu.yaml
export MOEFLOW_TEMPLATE_DIR=${MOEFLOW_TEMPLATE_DIR:-$MOEFLOW_SRCDIR/templates} LC_ALL=C
mkdir -p "$W/bin"
# sbatch: records each call, prints $STUB_HELP for --help
cat > "$W/bin/sbatch" <<'S'
#!/bin/sh
echo "$*" >> "$STUB_CALLS"
printf '%s\n' "$STUB_HELP"
S
chmod 0755 "$W/bin/sbatch"
: > "$W/slurm.conf"
# gen NAME CONF HELP: gen with the stand-in first on PATH; exit status in $rc
gen() {
    rm -rf "${W:?}/$1" "$W/calls"
    env PATH="$W/bin:$PATH" SLURM_CONF="$2" STUB_HELP="$3" STUB_CALLS="$W/calls" \
        "$MOEFLOW_BIN" gen "$S" -o "$W/$1" > "$W/$1.out" 2>&1
    rc=$?
}
usage='Usage: sbatch [OPTIONS(0)...] [ : [OPTIONS(N)...]] script(0) [args(0)...]'

tap_plan 8

gen noconf "$W/missing.conf" "$usage"
[ $rc = 0 ] && [ ! -e "$W/calls" ]
tap_ok $? "SLURM_CONF names no file: sbatch is not asked, gen exits 0 (rc $rc)"
ok "... and writes the plugin's scripts (submit.sh checks for the plugin)" \
    has "$W/noconf/contract.sbatch" "moe-stage"

gen absent "$W/slurm.conf" "$usage"
[ $rc = 2 ] && grep -q -- '--help' "$W/calls" && [ ! -e "$W/absent" ]
tap_ok $? "sbatch's usage without --moe-stage: gen exits 2 and writes nothing (rc $rc)"
ok "... naming the plugin and both remedies" \
    has "$W/absent.out" "does not load the moeflow SPANK plugin.*cluster.plugin: none.*admin"

gen present "$W/slurm.conf" "$usage"$'\n''      --moe-stage=stage       moeflow workflow stage'
[ $rc = 0 ]
tap_ok $? "sbatch --help lists --moe-stage: gen exits 0 (rc $rc)"
ok "... with the plugin's scripts" has "$W/present/contract.sbatch" "moe-stage"

gen other "$W/slurm.conf" "a site wrapper around sbatch"
[ $rc = 0 ] && has "$W/other/contract.sbatch" "moe-stage" > /dev/null
tap_ok $? "a wrapper that prints no sbatch usage tells nothing: the plugin's scripts (rc $rc)"

sed '/^cluster:/a\  plugin: required' "$S" > "$W/required.yaml"
rm -rf "$W/req" "$W/calls"
env PATH="$W/bin:$PATH" SLURM_CONF="$W/slurm.conf" STUB_HELP="$usage" STUB_CALLS="$W/calls" \
    "$MOEFLOW_BIN" gen "$W/required.yaml" -o "$W/req" > "$W/req.out" 2>&1
rc=$?
[ $rc = 0 ] && [ ! -e "$W/calls" ]
tap_ok $? "cluster.plugin: required asks sbatch nothing and writes the plugin's scripts (rc $rc)"
tap_done
