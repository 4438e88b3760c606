#!/bin/bash
# The plugin's cases of issue 21's hostile round (tests/data/hardening/round,
# group plugin) through a real sbatch on a local cluster: each --moe-*
# option and study path goes to sbatch instead of tests/cli/plugin_opts.  A
# case expected refused must make sbatch refuse the job (no job is created)
# with the plugin's message; one expected accepted must be submitted.  The
# plugstack.conf cases stay with plugin_opts (a cluster reads plugstack.conf
# at start; tests/integration/faults-plugstack.sh covers those on nodes).
# Afterwards every job has left the queue and every node is IDLE.
. "$MOEFLOW_SRCDIR/tests/integration/lib.sh"
require_root
cluster_up round --nodes 1

cat > "$WORK/job.sh" <<'EOF'
#!/bin/sh
true
EOF
# plugin_opts' stand-in: sbatch with the case's options.  sbatch's own line
# after the plugin's message ("Invalid --moe-stage argument: VALUE") echoes
# the raw value; it is Slurm's, so it is left out of what the round checks.
cat > "$WORK/sbatch-opts" <<EOF
#!/bin/bash
export SLURM_CONF=$SLURM_CONF
err=\$(mktemp) || exit 4
job=\$(/usr/bin/sbatch --parsable --chdir=/tmp -o /dev/null "\$@" $WORK/job.sh 2> "\$err")
rc=\$?
grep -av '^sbatch: error: Invalid --moe-' "\$err" >&2
rm -f "\$err"
[ \$rc = 0 ] || exit 2
echo "submitted: job \$job"
EOF
chmod 0755 "$WORK" "$WORK/job.sh" "$WORK/sbatch-opts"

MOEFLOW_ROUND_PLUGIN=$WORK/sbatch-opts MOEFLOW_ROUND_GROUPS=plugin \
    bash "$MOEFLOW_SRCDIR/tests/cli/hostile-round.sh" > "$WORK/round.tap" 2>&1
rc=$?
plan=$(sed -n 's/^1\.\.\([0-9]*\)$/\1/p' "$WORK/round.tap")
[ -n "$plan" ] || { diag < "$WORK/round.tap"; echo "Bail out! the round printed no plan"; exit 1; }
tap_plan $((plan + 1))
grep -v '^1\.\.[0-9]*$' "$WORK/round.tap"
TAP_N=$plan
for _ in $(seq 100); do queue_empty && break; sleep 0.2; done
queue_empty && nodes_all_idle
tap_ok $? "every accepted job left the queue and the node is IDLE"
[ $rc = 0 ] && tap_done
