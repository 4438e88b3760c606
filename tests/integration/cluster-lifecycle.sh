#!/bin/bash
# tests/cluster/localcluster.sh as a README reader uses it: "up" on a
# running cluster says what it does and replaces it (jobs included); "down"
# stops every process, removes the prefix and is a no-op the second time;
# a directory that holds no cluster of ours is never removed.
. "$MOEFLOW_SRCDIR/tests/integration/lib.sh"
require_root
tap_plan 10
P=/tmp/mfit-life-$$
T=$(mktemp -d)
trap '"$LC" down --prefix "$P" > /dev/null 2>&1; rm -rf "$P" "$P.other" "$T"' EXIT
cd "$T" || exit 1

"$LC" up --prefix "$P" --nodes 1 --plugin "$MOEFLOW_PLUGIN" > up1.out 2>&1
tap_ok $? "up starts a one-node cluster"
tag1=$(cat "$P/tag")
SLURM_CONF=$P/etc/slurm.conf sbatch --parsable --wrap 'sleep 300' > job.id 2>&1
tap_ok $? "a long job is running on it"
"$LC" up --prefix "$P" --nodes 1 --plugin "$MOEFLOW_PLUGIN" > up2.out 2>&1
tap_ok $? "up again on the running cluster succeeds"
ok "... and says it stops the running cluster and its jobs first" \
    has up2.out "up: a cluster is already running at $P \(slurmctld pid [0-9]+\): stopping it and its jobs, then starting a new one"
ok "... none of the first cluster's processes survive (its job included)" \
    test -z "$("$LC" pids --prefix "$P" --tag "$tag1")"
tag2=$(cat "$P/tag")
"$LC" down --prefix "$P" > down1.out 2>&1
tap_ok $? "down succeeds"
ok "... no process of the cluster is left" test -z "$("$LC" pids --prefix "$P" --tag "$tag2")"
ok "... and nothing on disk: $P is gone" test ! -e "$P"
"$LC" down --prefix "$P" > down2.out 2>&1
tap_ok $? "down again is a no-op"
mkdir -p "$P.other" && touch "$P.other/keep"
"$LC" down --prefix "$P.other" > /dev/null 2>&1
ok "down never removes a directory without a cluster of ours" test -f "$P.other/keep"
tap_done
