#!/bin/bash
# A real Slurm cluster on one machine: munge, slurmctld and N slurmd nodes with
# 8 fake GPUs each, loading the moeflow plugin through a private plugstack.conf.
# Everything lives under one private prefix; processes are stopped by the PIDs
# recorded here and by the cluster's own tag, never by name.
#
#   localcluster.sh up     [--prefix DIR] [--nodes N] [--plugin SO] [--plugstack-args "k=v ..."]
#                          [--host-cache] [--plugstack-include FILE] [--extra-plugin SO]
#   localcluster.sh down   [--prefix DIR] [--keep-logs]
#   localcluster.sh status [--prefix DIR]
#   localcluster.sh pids   [--prefix DIR] [--tag TAG]   processes carrying the cluster's tag
#
# After "up", ". DIR/env" points sbatch/srun/squeue at the cluster.  "up" on
# a running cluster says so and replaces it; "down" stops every process and
# removes DIR (with --keep-logs, all but DIR/log).
#
# With --plugin, the plugin's topology cache is DIR/topo-cache unless the
# arguments name a cache_dir= or hwloc_xml=, so a test cluster never writes
# the host's /run/moeflow; --host-cache leaves the plugin its default.
set -u

PREFIX=${MOEFLOW_LC_PREFIX:-/tmp/moeflow-lc}
NODES=4
GPUS_PER_NODE=8
CPUS_PER_NODE=8
PLUGIN=""
PLUGSTACK_ARGS=""
PLUGSTACK_INCLUDE=""
EXTRA_PLUGIN=""
HOST_CACHE=0
KEEP_LOGS=0
TAG_ARG=""
SBIN_PATH=/usr/sbin:/sbin:/usr/bin:/bin

die() { echo "localcluster: $*" >&2; exit 1; }
say() { echo "localcluster: $*" >&2; }

parse_args() {
    while [ $# -gt 0 ]; do
        case "$1" in
            --prefix) PREFIX=$2; shift 2 ;;
            --nodes) NODES=$2; shift 2 ;;
            --plugin) PLUGIN=$2; shift 2 ;;
            --plugstack-args) PLUGSTACK_ARGS=$2; shift 2 ;;
            --plugstack-include) PLUGSTACK_INCLUDE=$2; shift 2 ;;
            --extra-plugin) EXTRA_PLUGIN=$2; shift 2 ;;
            --host-cache) HOST_CACHE=1; shift ;;
            --keep-logs) KEEP_LOGS=1; shift ;;
            --tag) TAG_ARG=$2; shift 2 ;;
            *) die "unknown argument '$1' (see the header of $0)" ;;
        esac
    done
    case "$PREFIX" in /*) ;; *) die "--prefix must be absolute: $PREFIX" ;; esac
    # unix socket paths are limited to 108 bytes
    [ ${#PREFIX} -le 60 ] || die "--prefix is too long for unix sockets (max 60): $PREFIX"
    case "$NODES" in ''|*[!0-9]*) die "--nodes must be a number: $NODES" ;; esac
    [ "$NODES" -ge 1 ] && [ "$NODES" -le 64 ] || die "--nodes must be 1..64: $NODES"
}

# True when /proc/PID belongs to this cluster (guards against PID reuse):
# daemons and tasks carry the tag.  slurmstepd does not (slurmd rebuilds its
# environment) but keeps the cluster's own SLURM_CONF; a user's shell may
# hold that too, so it counts only for a slurmstepd.
pid_has_tag() {
    local pid=$1 tag=$2 env
    env=$({ tr '\0' '\n' < "/proc/$pid/environ"; } 2>/dev/null)
    grep -qx "MOEFLOW_LC_TAG=$tag" <<< "$env" && return 0
    [ "$(cat "/proc/$pid/comm" 2>/dev/null)" = slurmstepd ] &&
        grep -qx "SLURM_CONF=$PREFIX/etc/slurm.conf" <<< "$env"
}

# Every process pid_has_tag would name, found by two greps over all of
# /proc instead of a few processes per PID: on a loaded machine (tests run
# side by side) the per-PID scan took 12 s, and down runs it until the
# processes are gone.  A PID gone by the time grep ends (grep itself, had
# it inherited the tag) is not listed.
tagged_pids() {
    local tag=$1 f pid comm
    {
        grep -lsxzF "MOEFLOW_LC_TAG=$tag" /proc/[0-9]*/environ
        grep -lsxzF "SLURM_CONF=$PREFIX/etc/slurm.conf" /proc/[0-9]*/environ |
            while read -r f; do
                pid=${f#/proc/}; pid=${pid%/environ}
                read -r comm 2>/dev/null < "/proc/$pid/comm" && [ "$comm" = slurmstepd ] && echo "$f"
            done
    } | while read -r f; do
        pid=${f#/proc/}; pid=${pid%/environ}
        [ "$pid" = "$$" ] && continue
        [ -d "/proc/$pid" ] && echo "$pid"
    done | sort -nu
}

down() {
    local tag pid f left i
    [ -f "$PREFIX/tag" ] || return 0
    tag=$(cat "$PREFIX/tag")
    [ -d "$PREFIX/run/pids" ] || return 0
    if [ -f "$PREFIX/env" ]; then
        SLURM_CONF=$PREFIX/etc/slurm.conf timeout 5 scancel --full --quiet \
            $(SLURM_CONF=$PREFIX/etc/slurm.conf timeout 5 squeue -h -o %i 2>/dev/null) \
            >/dev/null 2>&1 || true
    fi
    for f in "$PREFIX"/run/pids/slurmd-* "$PREFIX/run/pids/slurmctld" "$PREFIX/run/pids/munged"; do
        [ -f "$f" ] || continue
        pid=$(cat "$f")
        pid_has_tag "$pid" "$tag" && kill -TERM "$pid" 2>/dev/null
    done
    for i in $(seq 50); do
        left=$(tagged_pids "$tag")
        [ -z "$left" ] && break
        sleep 0.1
    done
    # slurmstepd ignores SIGTERM and outlives slurmd: finish what carries our tag.
    left=$(tagged_pids "$tag")
    if [ -n "$left" ]; then
        kill -KILL $left 2>/dev/null
        sleep 0.2
    fi
    left=$(tagged_pids "$tag")
    [ -z "$left" ] || { say "processes left behind: $left"; return 1; }
    rm -rf "$PREFIX/env" "$PREFIX/run/pids"
    return 0
}

# down, then nothing of the cluster stays on disk either.
down_all() {
    local had=0 f
    [ -f "$PREFIX/tag" ] && had=1
    down || return 1
    [ -d "$PREFIX" ] || return 0
    # Only a directory this script made (it holds our tag file) is removed.
    [ $had = 1 ] || { say "down: $PREFIX holds no cluster of ours; left as it is"; return 0; }
    if [ $KEEP_LOGS = 1 ]; then
        for f in "$PREFIX"/* "$PREFIX"/.[!.]*; do
            [ -e "$f" ] && [ "$f" != "$PREFIX/log" ] && rm -rf "$f"
        done
        say "down: stopped; logs kept in $PREFIX/log"
    else
        rm -rf "$PREFIX"
        say "down: stopped, $PREFIX removed"
    fi
}

port_in_use() {
    ss -Htan 2>/dev/null | awk '{print $4}' | grep -q "[:.]$1\$"
}

# A base port with NODES+1 consecutive free ports after it.
pick_ports() {
    local try base p ok
    for try in $(seq 50); do
        base=$(( 20000 + (RANDOM * 32768 + RANDOM) % 30000 ))
        ok=1
        for p in $(seq "$base" $(( base + NODES ))); do
            port_in_use "$p" && { ok=0; break; }
        done
        [ $ok = 1 ] && { echo "$base"; return 0; }
    done
    return 1
}

write_munge() {
    mkdir -p "$PREFIX/munge"
    chmod 0755 "$PREFIX/munge"
    dd if=/dev/urandom of="$PREFIX/munge/munge.key" bs=1024 count=1 status=none
    chmod 0400 "$PREFIX/munge/munge.key"
}

write_slurm_conf() {
    local base=$1 host
    host=$(hostname -s)
    cat > "$PREFIX/etc/slurm.conf" <<EOF
ClusterName=mflc$(( base % 100000 ))
SlurmctldHost=$host(127.0.0.1)
SlurmctldPort=$base
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
CredType=cred/munge
AuthInfo=socket=$PREFIX/munge/munge.socket
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
SelectType=select/cons_tres
SelectTypeParameters=CR_Core
GresTypes=gpu
MpiDefault=none
MailProg=/bin/true
JobCompType=jobcomp/none
AccountingStorageType=accounting_storage/none
JobAcctGatherType=jobacct_gather/none
SchedulerParameters=batch_sched_delay=0,sched_min_interval=0
SlurmdParameters=config_overrides
ReturnToService=2
PlugStackConfig=$PREFIX/etc/plugstack.conf
TaskProlog=$PREFIX/etc/taskprolog.sh
StateSaveLocation=$PREFIX/state
SlurmdSpoolDir=$PREFIX/spool/%n
SlurmctldPidFile=$PREFIX/run/slurmctld.slurm.pid
SlurmdPidFile=$PREFIX/run/slurmd-%n.slurm.pid
SlurmctldLogFile=$PREFIX/log/slurmctld.log
SlurmdLogFile=$PREFIX/log/slurmd-%n.log
SlurmctldDebug=info
SlurmdDebug=info
NodeName=n[1-$NODES] NodeHostname=$host NodeAddr=127.0.0.1 Port=[$(( base + 1 ))-$(( base + NODES ))] CPUs=$CPUS_PER_NODE RealMemory=1000 Gres=gpu:$GPUS_PER_NODE State=UNKNOWN
PartitionName=debug Nodes=ALL Default=YES MaxTime=INFINITE State=UP
EOF
    echo "NodeName=n[1-$NODES] Name=gpu File=$PREFIX/dev/fakegpu[0-$(( GPUS_PER_NODE - 1 ))]" \
        > "$PREFIX/etc/gres.conf"
}

# Fake GPUs must be character devices: slurmd drops plain files and count-only lines.
make_fake_gpus() {
    local i
    mkdir -p "$PREFIX/dev"
    for i in $(seq 0 $(( GPUS_PER_NODE - 1 ))); do
        mknod -m 0666 "$PREFIX/dev/fakegpu$i" c 195 "$i" || die "mknod failed (are you root?)"
    done
}

write_plugstack() {
    # An admin's snippet as installed (e.g. by the Debian package): the plugin
    # loads from its installed path with the installed arguments.
    if [ -n "$PLUGSTACK_INCLUDE" ]; then
        [ -f "$PLUGSTACK_INCLUDE" ] || die "plugstack snippet not found: $PLUGSTACK_INCLUDE"
        echo "include $PLUGSTACK_INCLUDE" > "$PREFIX/etc/plugstack.conf"
    elif [ -n "$PLUGIN" ]; then
        [ -f "$PLUGIN" ] || die "plugin not found: $PLUGIN"
        mkdir -p "$PREFIX/lib"
        # install gives a new inode: never overwrite a .so a daemon has mapped
        install -m 0755 "$PLUGIN" "$PREFIX/lib/spank_moeflow.so"
        local args=$PLUGSTACK_ARGS
        case " $args" in
            *" cache_dir="* | *" hwloc_xml="*) ;;
            *) [ "$HOST_CACHE" = 1 ] || args="${args:+$args }cache_dir=$PREFIX/topo-cache" ;;
        esac
        echo "required $PREFIX/lib/spank_moeflow.so $args" > "$PREFIX/etc/plugstack.conf"
    else
        : > "$PREFIX/etc/plugstack.conf"
    fi
    # Another SPANK plugin beside it (--plugin "" for none): a stand-in of
    # pyxis, say, loaded as an admin would.
    if [ -n "$EXTRA_PLUGIN" ]; then
        [ -f "$EXTRA_PLUGIN" ] || die "plugin not found: $EXTRA_PLUGIN"
        mkdir -p "$PREFIX/lib"
        install -m 0755 "$EXTRA_PLUGIN" "$PREFIX/lib/$(basename "$EXTRA_PLUGIN")"
        echo "required $PREFIX/lib/$(basename "$EXTRA_PLUGIN")" >> "$PREFIX/etc/plugstack.conf"
    fi
    # Tasks carry the cluster's tag too, so teardown finds anything a job left.
    printf '#!/bin/sh\necho export MOEFLOW_LC_TAG=%s\n' "$TAG" > "$PREFIX/etc/taskprolog.sh"
    chmod 0755 "$PREFIX/etc/taskprolog.sh"
}

start_daemon() {
    local name=$1; shift
    env MOEFLOW_LC_TAG="$TAG" PATH="$SBIN_PATH" "$@" \
        >> "$PREFIX/log/$name.out" 2>&1 < /dev/null &
    echo $! > "$PREFIX/run/pids/$name"
}

wait_for() {
    local what=$1 tries=$2; shift 2
    local i
    for i in $(seq "$tries"); do
        "$@" && return 0
        sleep 0.1
    done
    die "timed out waiting for $what (logs in $PREFIX/log)"
}

munge_ready() { [ -S "$PREFIX/munge/munge.socket" ]; }
ctld_ready() { SLURM_CONF=$PREFIX/etc/slurm.conf scontrol ping 2>/dev/null | grep -q UP; }
nodes_idle() {
    local n
    n=$(SLURM_CONF=$PREFIX/etc/slurm.conf sinfo -h -N -o '%N %t' 2>/dev/null | grep -c ' idle$')
    [ "$n" -eq "$NODES" ]
}

up() {
    local base i pid
    if [ -f "$PREFIX/tag" ]; then
        pid=$(cat "$PREFIX/run/pids/slurmctld" 2>/dev/null)
        if [ -n "$(tagged_pids "$(cat "$PREFIX/tag")")" ]; then
            say "up: a cluster is already running at $PREFIX${pid:+ (slurmctld pid $pid)}:" \
                "stopping it and its jobs, then starting a new one"
        else
            say "up: $PREFIX holds a stopped cluster: removing it, then starting a new one"
        fi
    fi
    down || die "could not stop the previous cluster at $PREFIX"
    rm -rf "$PREFIX"
    mkdir -p "$PREFIX"/{etc,state,log,run/pids}
    chmod 0755 "$PREFIX" "$PREFIX/etc"
    TAG="mflc-$$-$RANDOM$RANDOM"
    echo "$TAG" > "$PREFIX/tag"
    base=$(pick_ports) || die "no free port range found"
    write_munge
    write_slurm_conf "$base"
    make_fake_gpus
    write_plugstack
    for i in $(seq "$NODES"); do mkdir -p "$PREFIX/spool/n$i"; done

    start_daemon munged munged -F --socket="$PREFIX/munge/munge.socket" \
        --key-file="$PREFIX/munge/munge.key" --pid-file="$PREFIX/run/munged.munge.pid" \
        --log-file="$PREFIX/log/munged.log" --seed-file="$PREFIX/munge/munge.seed" --force
    wait_for munged 100 munge_ready
    start_daemon slurmctld slurmctld -D -i -f "$PREFIX/etc/slurm.conf"
    wait_for slurmctld 200 ctld_ready
    for i in $(seq "$NODES"); do
        start_daemon "slurmd-n$i" slurmd -D -N "n$i" -f "$PREFIX/etc/slurm.conf"
    done
    wait_for "$NODES idle nodes" 300 nodes_idle
    cat > "$PREFIX/env" <<EOF
export SLURM_CONF=$PREFIX/etc/slurm.conf
EOF
    chmod 0644 "$PREFIX/env"
    say "up: $NODES nodes x $GPUS_PER_NODE GPUs, slurmctld port $base, prefix $PREFIX"
}

status() {
    [ -f "$PREFIX/env" ] || { echo "no cluster at $PREFIX"; return 1; }
    SLURM_CONF=$PREFIX/etc/slurm.conf sinfo -N -o '%N %t %G'
}

cmd=${1:-}
[ $# -gt 0 ] && shift
parse_args "$@"
case "$cmd" in
    up) up ;;
    down) down_all ;;
    status) status ;;
    pids)
        if [ -n "$TAG_ARG" ]; then tagged_pids "$TAG_ARG"
        elif [ -f "$PREFIX/tag" ]; then tagged_pids "$(cat "$PREFIX/tag")"
        fi ;;
    *) die "usage: $0 up|down|status [--prefix DIR] [--nodes N] [--plugin SO] [--plugstack-args ARGS]" ;;
esac
