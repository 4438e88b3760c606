#!/bin/bash
# The per-boot topology cache on a real cluster (no hwloc_xml=): the first
# step with GPUs discovers the node and writes the cache as root, 0644 in a
# 0755 directory; later steps load it, and one still at the size and mtime
# it was written with is taken without hashing it, so libcrypto stays out
# of slurmstepd.  A cache from another boot, one given to another owner or a
# damaged one (its checksum comment no longer matches) is rebuilt, never
# trusted, and an unsafe directory is left alone; the tasks come out the
# same every time.  This host has no GPU: the fake GPUs are in
# SLURM_STEP_GPUS but not on the PCI bus, so each task reports why it keeps
# Slurm's binding; that report and the task's real CPU mask must not depend
# on where the topology came from.
. "$MOEFLOW_SRCDIR/tests/integration/lib.sh"
require_root
tap_plan 21

C=/tmp/mfit-topocache-$$/topo-cache   # inside the cluster's prefix: removed with it
F=$C/topology.xml
cluster_up topocache --plugstack-args "cache_dir=$C"
[ "$C" = "$LC_PREFIX/topo-cache" ] || echo "Bail out! cluster prefix is $LC_PREFIX"
cd "$WORK" || exit 1
cat > show.sh <<'EOS'
#!/bin/sh
mask=$(sed -n 's/^Cpus_allowed_list:[[:space:]]*//p' /proc/self/status)
echo "node=$SLURMD_NODENAME task=$SLURM_LOCALID local=$LOCAL_RANK cpus=$MOEFLOW_CPUSET mask=$mask skip=$MOEFLOW_AFFINITY_SKIPPED"
# whether the slurmstepd that forked this task has libcrypto mapped
{ grep -c libcrypto "/proc/$PPID/maps" || :; } > "crypto.$SLURMD_NODENAME.$SLURM_LOCALID"
EOS
chmod +x show.sh
boot=$(cat /proc/sys/kernel/random/boot_id)

# step NAME: 4 nodes x 2 tasks with GPUs; NAME.log gets what the four
# slurmstepds logged (the slurmd logs are opened O_APPEND: safe to empty).
step() {
    local rc
    for l in "$LC_PREFIX"/log/slurmd-n*.log; do : > "$l"; done
    rm -f crypto.*
    timeout 60 srun -N4 --ntasks-per-node=2 --gres=gpu:2 ./show.sh > "$1.raw" 2> "$1.err"
    rc=$?
    [ $rc = 0 ] || diag < "$1.err"
    # Slurm may hand each job other core numbers: compare what they mean
    sed -E "s/core [0-9]+ of '[^']*'/core C of 'CORES'/" "$1.raw" | sort > "$1.out"
    cat "$LC_PREFIX"/log/slurmd-n*.log > "$1.log"
    return $rc
}
same_tasks() {  # the tasks of step $1 came out as those of the first step
    cmp -s first.out "$1.out" && return 0
    diff first.out "$1.out" | diag
    return 1
}
owner_mode() { stat -c '%U %a' "$1"; }
cache_boot() { sed -n 's/.*name="MoeflowBootId" value="\([^"]*\)".*/\1/p' "$F"; }
# reseal XML: installs it as the cache with a checksum that matches, as the
# plugin writes it, so that only the check under test can refuse it.  The
# recorded mtime is not the file's, so the plugin checks the digest.
reseal() {
    grep -v '^<!-- moeflow-cache sha256=' "$1" > "$WORK/body.xml"
    { cat "$WORK/body.xml"
      printf '<!-- moeflow-cache sha256=%s mtime=%020d.%09d -->\n' \
          "$(sha256sum < "$WORK/body.xml" | cut -c1-64)" 0 0
    } > "$WORK/sealed.xml"
    install -m 0644 "$WORK/sealed.xml" "$F"
}

[ ! -e "$C" ]
tap_ok $? "no cache before the first step"
step first
tap_ok $? "the first step runs"
host_mask=$(sed -n 's/^Cpus_allowed_list:[[:space:]]*//p' /proc/self/status)
# No GPU here to bind next to; and the fake node's cores may not exist here.
[ "$(grep -cE "local=[01] cpus= mask=$host_mask skip=(local task [01]: GPU [01] does not exist \(node has 0\)|core C of 'CORES' is not on this node \([0-9]+ cores\))$" first.out)" = 8 ] &&
    [ "$(grep -c 'cache in .* rewritten (cache not used: .*no cache yet)' first.log)" -ge 1 ]
rc=$?; [ $rc = 0 ] || { diag < first.out; diag < first.log; }
tap_ok $rc "its 8 tasks keep Slurm's binding, each saying why; the log says the cache was written"
[ "$(owner_mode "$C")" = "root 755" ] && [ "$(owner_mode "$F")" = "root 644" ]
rc=$?; [ $rc = 0 ] || ls -la "$C" | diag
tap_ok $rc "the cache is written as root: directory 0755, file 0644"
[ "$(ls -A "$C")" = topology.xml ] && [ "$(cache_boot)" = "$boot" ] && lstopo-no-graphics -i "$F" > /dev/null 2>&1
tap_ok $? "four slurmstepds wrote one file, for this boot, that hwloc itself reads"

ino=$(stat -c %i "$F")
step hit && same_tasks hit && [ "$(stat -c %i "$F")" = "$ino" ] &&
    ! grep -q 'topology discovered' hit.log
rc=$?; [ $rc = 0 ] || diag < hit.log
tap_ok $rc "the next step uses the cache: same tasks, file untouched"
# The file is as written (size and mtime), so no digest: libcrypto stays out.
[ "$(cat crypto.* | sort -u | paste -sd' ')" = 0 ] && [ "$(ls crypto.* | wc -l)" = 8 ]
rc=$?; [ $rc = 0 ] || head crypto.* | diag
tap_ok $rc "a step that loads the cache as written never maps libcrypto into slurmstepd"

# moeflow topo reads the same cache, and says so; a world-writable copy of
# the directory is refused with the reason.
"$MOEFLOW_BIN" topo --cache-dir "$C" > topo.out 2>&1 && grep -q "^node: this machine (topology cache in $C): " topo.out &&
    cp -a "$C" "$WORK/open-cache" && chmod 0777 "$WORK/open-cache" &&
    "$MOEFLOW_BIN" topo --cache-dir "$WORK/open-cache" > topo-open.out 2>&1 &&
    grep -q "(discovered live; cache not used: $WORK/open-cache: writable by group or others (mode 0777): not trusted)" topo-open.out
rc=$?; [ $rc = 0 ] || cat topo.out topo-open.out | diag
tap_ok $rc "moeflow topo plans from the cache the steps wrote, and says when it cannot trust one"

# Proof that steps really use the cache: one edited down to a single core
# (by hwloc itself, keeping the root's infos) still passes every check, and
# the tasks now say that the node has one core.
lstopo-no-graphics -i "$F" --restrict 0x1 --of xml one-core.xml && reseal one-core.xml
step edited && [ "$(grep -c "skip=core C of 'CORES' is not on this node (1 cores)$" edited.out)" = 8 ]
rc=$?; [ $rc = 0 ] || diag < edited.out
tap_ok $rc "a cache that passes the checks is what the step plans from"
! grep -qx 0 crypto.*
rc=$?; [ $rc = 0 ] || head crypto.* | diag
tap_ok $rc "a cache written since (its mtime moved) has its digest checked, with libcrypto"

# The same file in a world-writable directory is not trusted: the tasks
# come from live discovery again, and the file is not touched.
chmod 0777 "$C"
ino=$(stat -c %i "$F")
step unsafe && same_tasks unsafe && [ "$(stat -c %i "$F")" = "$ino" ] &&
    ! grep -q 'topology discovered, cache' unsafe.log &&
    [ "$(grep -c "node topology discovered live, at every step until this is fixed (cache not written: $C: writable by group or others (mode 0777): not trusted)" unsafe.log)" = 4 ]
rc=$?; [ $rc = 0 ] || diag < unsafe.log
tap_ok $rc "a world-writable cache directory is neither read nor written; the step runs, and each node logs why at info level"
chmod 0755 "$C"

sed "s/name=\"MoeflowBootId\" value=\"[^\"]*\"/name=\"MoeflowBootId\" value=\"00000000-0000-0000-0000-000000000000\"/" "$F" > old-boot.xml
reseal old-boot.xml
step stale && same_tasks stale
tap_ok $? "a step after the boot id changed runs and its tasks are the same"
[ "$(cache_boot)" = "$boot" ] && grep -q 'rewritten (cache not used: .*written in another boot (00000000-0000-0000-0000-000000000000' stale.log
rc=$?; [ $rc = 0 ] || diag < stale.log
tap_ok $rc "the stale cache is rebuilt for this boot, and the log says why"

chown nobody "$F"
step foreign && same_tasks foreign && [ "$(owner_mode "$F")" = "root 644" ] &&
    grep -q 'rewritten (cache not used: .*owned by uid [0-9]*, not 0: not trusted' foreign.log
rc=$?; [ $rc = 0 ] || diag < foreign.log
tap_ok $rc "a cache given to nobody is not trusted: rebuilt as root's"

head -c 1000 "$F" > cut.xml && cat cut.xml > "$F"   # in place, as a crash would
step cut && same_tasks cut && [ "$(cache_boot)" = "$boot" ] && grep -q 'rewritten (cache not used: .*damaged: no checksum' cut.log
rc=$?; [ $rc = 0 ] || diag < cut.log
tap_ok $rc "a truncated cache is rebuilt"

# A step without GPUs never loads the topology, so it leaves the cache be;
# nor does a step that binds nothing.
rm -rf "$C"
timeout 60 srun -N1 -n1 ./show.sh > nogpu.out 2>&1 && grep -q 'skip=the step has no GPU' nogpu.out && [ ! -e "$C" ]
tap_ok $? "a step without GPUs neither needs nor writes the cache"
timeout 60 srun -N1 -n1 --gres=gpu:1 --moe-affinity=none ./show.sh > none.out 2>&1 &&
    grep -q 'skip=--moe-affinity=none' none.out && [ ! -e "$C" ]
rc=$?; [ $rc = 0 ] || diag < none.out
tap_ok $rc "a GPU step with --moe-affinity=none neither loads nor writes the cache"

# The batch step is never bound: its shell leaves the cache alone too,
# while the steps inside it fill it.
job=$(run_batch -N1 -n2 --gres=gpu:2 -o batch.out --wrap "./show.sh; srun -n2 ./show.sh")
tap_ok $? "a batch job with GPUs runs (job $job)"
job_completed "$job" && [ "$(grep -c "local=[01] cpus= mask=$host_mask skip=." batch.out)" = 2 ] &&
    [ "$(owner_mode "$F")" = "root 644" ]
rc=$?; [ $rc = 0 ] || diag < batch.out
tap_ok $rc "the step inside it writes the cache; the job completes"

# The admin's hwloc_xml= stays an override: used as is, no cache.
admin_files "$MOEFLOW_SRCDIR/tests/data/topology/mpibind-g4dnmetal.xml" &&
    sed -i "s|\$| hwloc_xml=$ADMIN/mpibind-g4dnmetal.xml|" "$LC_PREFIX/etc/plugstack.conf"
rm -rf "$C"
timeout 60 srun -N1 -n1 --gres=gpu:1 ./show.sh > xml.out 2>&1 &&
    grep -q 'cpus=[0-9]' xml.out && [ ! -e "$C" ]
rc=$?; [ $rc = 0 ] || diag < xml.out
tap_ok $rc "with hwloc_xml= the plan comes from that file and no cache is written"
cd / || exit 1
ok "teardown leaves nothing behind" teardown_leaves_nothing
tap_done
