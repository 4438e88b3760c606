#!/bin/bash
# The README is tested as written: every "# " command of the console blocks
# that README.md marks with a tests/integration/readme-walkthrough.sh comment
# runs verbatim, in order, in one root shell, from a view of the source tree
# (with _build pointing at this build) cloned, as it were, under /root and
# under a /tmp path with a blank, on the README's own paths (/tmp/moeflow-lc,
# /tmp/walk) inside a private /tmp (a mount namespace), so that other
# clusters on the host are not touched.  Each command must exit
# 0, and each output line the README shows under it must be in its output
# (64-digit hashes, job ids and the slurmctld port may differ: array tasks
# take job ids as they start).
. "$MOEFLOW_SRCDIR/tests/integration/lib.sh"
require_root
command -v unshare > /dev/null || skip_all "unshare (util-linux) not installed"
T=$(mktemp -d /tmp/mfreadme.XXXXXX)
trap 'rm -rf "$T"' EXIT

# Commands and the output lines shown under them, from the marked blocks.
awk -v dir="$T" '
    /^<!-- tests\/integration\/readme-walkthrough.sh/ { marked = 1; next }
    /^```console$/ && marked { inblock = 1; marked = 0; next }
    /^```$/ && inblock { inblock = 0; next }
    !inblock { next }
    cont { cmd = cmd "\n" $0; cont = /\\$/; if (!cont) close_cmd(); next }
    /^# / {
        n++; cmd = substr($0, 3); cont = /\\$/
        printf "" > (dir "/expect." n)
        if (!cont) close_cmd()
        next
    }
    n { print > (dir "/expect." n) }
    function close_cmd() { printf "%s\n", cmd > (dir "/cmd." n); close(dir "/cmd." n) }
    END { print n > (dir "/count") }
' "$MOEFLOW_SRCDIR/README.md"
n=$(cat "$T/count")
[ "$n" -gt 10 ] || { echo "Bail out! found only $n README commands"; exit 1; }

# Where a user may have cloned the tree: root's home (mode 0700, which the
# job user cannot enter), /tmp (which the walk covers with a tmpfs of its
# own), and a path with a blank in it.  Each is a bind mount of this tree
# (and of this build) in a private mount namespace, seen through a view
# whose _build is this build; the walk runs in the view, verbatim.
LOCATIONS=${MOEFLOW_README_LOCATIONS:-"/root/mfreadme/moeflow|/tmp/mf readme/moeflow"}
IFS='|' read -ra locs <<< "$LOCATIONS"
tap_plan $(( 2 * n * ${#locs[@]} + 1 ))
made_up=$(grep -nwE 'c0[0-9]' "$MOEFLOW_SRCDIR/README.md" "$MOEFLOW_SRCDIR"/doc/*.[1-8])
[ -z "$made_up" ]
tap_ok $? "README and man pages use no made-up candidate id (c03): generated ids are hashes"
[ -z "$made_up" ] || echo "$made_up" | diag

# walk_script VIEW: each command verbatim, framed by markers with its exit code.
walk_script() {
    printf 'cd %q || exit 1\n' "$1"
    for i in $(seq "$n"); do
        echo "echo '@@cmd $i'"
        echo '{'
        cat "$T/cmd.$i"
        echo '} 2>&1'
        echo "echo \"@@rc $i \$?\""
    done
    # Not the README's: never leave the cluster behind when a command failed.
    echo 'tests/cluster/localcluster.sh down > /dev/null 2>&1'
}

# walk LOCATION: the transcript of the walk from a tree cloned at LOCATION.
# The tree and the build are opened before /tmp (and, for a home, /root) is
# covered, and bound where the location says.
walk() {
    walk_script "$1/view" > "$T/walk.sh"
    timeout 900 unshare --mount --propagation private /bin/bash -c '
        loc=$1
        exec 4< "$2" 5< "$3"
        mount -t tmpfs -o mode=1777 tmpfs /tmp || exit 1
        case $loc in /root/*) mount -t tmpfs -o mode=0700 tmpfs /root || exit 1 ;; esac
        mkdir -p "$loc/src" "$loc/build" "$loc/view" || exit 1
        mount --bind /proc/self/fd/4 "$loc/src" && mount --bind /proc/self/fd/5 "$loc/build" || exit 1
        exec 4<&- 5<&-
        for f in "$loc/src"/* "$loc/src"/.[!.]*; do
            [ -e "$f" ] && [ "$(basename "$f")" != _build ] && ln -s "$f" "$loc/view/"
        done
        ln -s "$loc/build" "$loc/view/_build"
        exec /bin/bash /dev/fd/3
    ' walk "$1" "$MOEFLOW_SRCDIR" "$MOEFLOW_BUILDDIR" 3< "$T/walk.sh" < /dev/null \
        > "$T/transcript" 2>&1
}

norm() {
    sed -E -e 's/[0-9a-f]{64}/<sha256>/g' -e 's/port [0-9]+/port <N>/g' -e 's/job [0-9]+/job <N>/g' \
        -e 's/afterok:[0-9]+/afterok:<N>/g' -e 's|/runs/[0-9_]+|/runs/<id>|g' \
        -e 's/\(run [0-9_]+\)/(run <id>)/g'
}

for loc in "${locs[@]}"; do
    walk "$loc"
    for i in $(seq "$n"); do
        cmd=$(head -1 "$T/cmd.$i")
        awk -v i="$i" '$0 == "@@cmd " i { on = 1; next } /^@@rc / && on { exit } on' \
            "$T/transcript" > "$T/out.$i"
        rc=$(sed -n "s/^@@rc $i //p" "$T/transcript")
        [ "$rc" = 0 ]
        tap_ok $? "from $loc: README command $i exits 0: $cmd"
        [ "$rc" = 0 ] || { echo "exit ${rc:-none}"; tail -20 "$T/out.$i"; } | diag
        norm < "$T/out.$i" > "$T/got.$i"
        missing=0
        while IFS= read -r line; do
            [ -z "$line" ] && continue
            grep -qxF -- "$line" "$T/got.$i" || { echo "missing: $line"; missing=$((missing + 1)); }
        done < <(norm < "$T/expect.$i") > "$T/missing.$i"
        tap_ok "$missing" "... its output shows what the README shows ($(grep -cv '^$' "$T/expect.$i") lines)"
        if [ "$missing" -ne 0 ]; then
            { cat "$T/missing.$i"; echo "got:"; cat "$T/out.$i"; } | head -40 | diag
        fi
    done
    cp "$T/transcript" "${MOEFLOW_README_TRANSCRIPT:-/dev/null}" 2> /dev/null
done
tap_done
