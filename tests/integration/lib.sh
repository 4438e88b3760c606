# Shared by the integration tests: TAP output and a private local cluster.
# Each test script sources this file, calls cluster_up, and the EXIT trap
# tears the cluster down by PID and tag.

: "${MOEFLOW_SRCDIR:?run through make check}"
: "${MOEFLOW_BUILDDIR:?run through make check}"

# Tests run commands as an unprivileged job user (runuser, Slurm jobs).
# Under a home that user cannot enter (root's is 0700) they use a copy of
# the tree and of the programs they run that way, in /tmp and readable by
# all, made once per build (tests/run-all.sh removes those of its tree).
# A tree the job user can read is used where it is.
job_user_view() {
    local b=$MOEFLOW_BUILDDIR view tmp
    [ "$(id -u)" = 0 ] && ! runuser -u nobody -- test -x "$MOEFLOW_BIN" 2> /dev/null || return 0
    # named after the tree (run-all.sh removes its own) and the build
    view=/tmp/moeflow-view-$(cd "$MOEFLOW_SRCDIR" && pwd -P | sha256sum | cut -c1-8)
    view=$view-$({ stat -c %Y "$MOEFLOW_BIN" "$MOEFLOW_PLUGIN" 2> /dev/null
        printf '%s\n' "$b"; } | sha256sum | cut -c1-8)
    if [ ! -d "$view" ]; then
        tmp=$(mktemp -d "$view.XXXXXX") || return 1
        mkdir -p "$tmp/src" "$tmp/build/gen" "$tmp/build/spank" "$tmp/build/tests/cli" \
            "$tmp/build/tests/integration" &&
            tar -C "$MOEFLOW_SRCDIR" --exclude=./.git --exclude='./_build*' \
                --exclude=./autom4te.cache -cf - . | tar -C "$tmp/src" -xf - &&
            cp "$MOEFLOW_BIN" "$tmp/build/gen/moeflow" &&
            cp "$MOEFLOW_PLUGIN" "$tmp/build/spank/spank_moeflow.so" &&
            cp "$b/tests/cli/plugin_opts" "$tmp/build/tests/cli/" &&
            cp "$b/tests/integration/plugin-host" "$tmp/build/tests/integration/" &&
            chmod -R a+rX "$tmp" || { rm -rf "$tmp"; return 1; }
        # a test running beside this one may have made it first
        mv -T "$tmp" "$view" 2> /dev/null || rm -rf "$tmp"
    fi
    MOEFLOW_SRCDIR=$view/src MOEFLOW_BIN=$view/build/gen/moeflow
    MOEFLOW_PLUGIN=$view/build/spank/spank_moeflow.so MOEFLOW_USER_BUILDDIR=$view/build
    # the copy of moeflow is not in its build tree, where it would find the
    # source tree's templates by itself
    MOEFLOW_TEMPLATE_DIR=${MOEFLOW_TEMPLATE_DIR:-$view/src/templates}
    export MOEFLOW_SRCDIR MOEFLOW_BIN MOEFLOW_PLUGIN MOEFLOW_USER_BUILDDIR MOEFLOW_TEMPLATE_DIR
}
MOEFLOW_USER_BUILDDIR=$MOEFLOW_BUILDDIR
job_user_view || { echo "Bail out! cannot copy the tree where the job user can read it"; exit 1; }

TAP_N=0
TAP_FAILED=0

tap_plan() { echo "1..$1"; }

tap_ok() {  # tap_ok CONDITION_RC DESCRIPTION
    TAP_N=$((TAP_N + 1))
    if [ "$1" -eq 0 ]; then
        echo "ok $TAP_N - $2"
    else
        echo "not ok $TAP_N - $2"
        TAP_FAILED=$((TAP_FAILED + 1))
    fi
}

# A check that cannot run here: "ok N - DESCRIPTION # SKIP REASON", which
# automake counts as SKIP and tests/summary.sh lists by name.
tap_skip() {  # tap_skip DESCRIPTION REASON
    TAP_N=$((TAP_N + 1))
    echo "ok $TAP_N - $1 # SKIP $2"
}

# A check known to fail, for a reason on record: "not ok N - DESCRIPTION
# # TODO REASON", which automake counts as XFAIL (not a failure) and
# tests/summary.sh lists by name; passing it prints "ok ... # TODO", an
# XPASS, which fails: the record is out of date.
tap_todo() {  # tap_todo CONDITION_RC DESCRIPTION REASON
    TAP_N=$((TAP_N + 1))
    if [ "$1" -eq 0 ]; then
        echo "ok $TAP_N - $2 # TODO $3"
        TAP_FAILED=$((TAP_FAILED + 1))
    else
        echo "not ok $TAP_N - $2 # TODO $3"
    fi
}

ok() {  # ok DESCRIPTION COMMAND...
    local desc=$1; shift
    "$@"
    tap_ok $? "$desc"
}

# Shows what a failed check looked at, as TAP diagnostics.
diag() { sed "s/^/# /"; }

# The whole script cannot run here (a plan of 0, which automake counts as
# one SKIP with the reason).
skip_all() { echo "1..0 # SKIP $*"; exit 0; }

require_root() {
    [ "$(id -u)" = 0 ] || skip_all "needs root to run slurmd and munged"
}

LC=$MOEFLOW_SRCDIR/tests/cluster/localcluster.sh
LC_PREFIX=""

cluster_up() {  # cluster_up NAME [extra localcluster args]
    local name=$1; shift
    LC_PREFIX=/tmp/mfit-$name-$$
    trap cluster_down EXIT
    if ! "$LC" up --prefix "$LC_PREFIX" --plugin "$MOEFLOW_PLUGIN" "$@" 2>&1 | diag; then
        echo "Bail out! local cluster did not come up"
        exit 1
    fi
    # shellcheck disable=SC1091
    . "$LC_PREFIX/env"
    WORK=$LC_PREFIX/work
    # The plugin as the cluster loads it: a plugstack.conf line is split at
    # blanks, so it names this copy, never the build's path (the tree may
    # be cloned under a path with a blank).
    CLUSTER_PLUGIN=$LC_PREFIX/lib/spank_moeflow.so
    mkdir -p "$WORK"
    chmod 0777 "$WORK"
}

# admin_files FILE...: copies an admin's files (an hwloc XML, an NVLink
# map) to $ADMIN, a folder whose path has no blank, since plugstack.conf
# splits its lines at blanks; cluster_down removes it.
ADMIN=/tmp/mfit-admin-$$
admin_files() {
    mkdir -p "$ADMIN" && chmod 0755 "$ADMIN" && cp "$@" "$ADMIN/" && chmod 0644 "$ADMIN"/*
}

cluster_down() {
    rm -rf "$ADMIN"
    [ -n "$LC_PREFIX" ] || return 0
    "$LC" down --prefix "$LC_PREFIX" 2>&1 | diag
    rm -rf "$LC_PREFIX"
}

# Waits until a job has left the queue (at most $2 seconds, default 30).
wait_job() {
    local job=$1 limit=${2:-30} i
    for i in $(seq $((limit * 10))); do
        [ -z "$(squeue -h -j "$job" -o %i 2>/dev/null)" ] && return 0
        sleep 0.1
    done
    return 1
}

# Submits with sbatch --parsable, waits, and echoes the job id.
run_batch() {
    local job
    job=$(sbatch --parsable "$@") || return 1
    wait_job "$job" || return 1
    echo "$job"
}

# The job finished in state COMPLETED with ExitCode=0:0 (slurmctld keeps
# finished jobs for MinJobAge seconds, so no accounting daemon is needed).
job_completed() {
    local line
    line=$(scontrol show job -o "$1" 2>&1)
    case "$line" in
        *JobState=COMPLETED*ExitCode=0:0*) return 0 ;;
    esac
    echo "$line" | diag
    return 1
}

queue_empty() { [ -z "$(squeue -h -o %i)" ]; }

# Every node back to IDLE.  Right after a burst of jobs a node may still be
# COMPLETING, or PLANNED until the backfill scheduler's next pass (every 30 s
# by default): give those up to 40 s.  A DRAIN or DOWN never turns back into
# IDLE by itself, so it fails at once.
nodes_all_idle() {
    local states i
    for i in $(seq 400); do
        states=$(sinfo -h -N -o '%t' | sort -u | tr '\n' ' ')
        [ "$states" = "idle " ] && return 0
        case "$states" in *drain*|*drng*|*down*|*fail*) break ;; esac
        sleep 0.1
    done
    echo "node states: $states" | diag
    return 1
}

# Nothing the cluster started may survive its teardown.
teardown_leaves_nothing() {
    local left tag
    tag=$(cat "$LC_PREFIX/tag" 2>/dev/null)
    [ -n "$tag" ] || { echo "no cluster tag at $LC_PREFIX" | diag; return 1; }
    "$LC" down --prefix "$LC_PREFIX" 2>&1 | diag
    left=$("$LC" pids --prefix "$LC_PREFIX" --tag "$tag")
    [ -z "$left" ] || { echo "left behind: $left" | diag; return 1; }
    [ ! -e "$LC_PREFIX" ] || { echo "left on disk: $LC_PREFIX" | diag; return 1; }
}

# grep -q that shows the haystack on failure.
has() {  # has FILE PATTERN
    grep -qE -- "$2" "$1" && return 0
    { echo "no match for /$2/ in $1:"; cat "$1"; } | diag
    return 1
}

hasnt() {
    grep -qE -- "$2" "$1" || return 0
    { echo "unexpected /$2/ in $1:"; cat "$1"; } | diag
    return 1
}

tap_done() {
    [ "$TAP_FAILED" -eq 0 ]
}
