#!/bin/bash
# The README is tested as written: every "# " command of the console blocks
# that README.md marks with a tests/integration/readme-walkthrough.sh comment
# runs verbatim, in order, in one root shell, from a view of the source tree
# (with _build pointing at this build), on the README's own paths
# (/tmp/moeflow-lc, /tmp/walk) inside a private /tmp (a mount namespace), so
# that other clusters on the host are not touched.  Each command must exit
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
tap_plan $(( 2 * n + 1 ))
made_up=$(grep -nwE 'c0[0-9]' "$MOEFLOW_SRCDIR/README.md" "$MOEFLOW_SRCDIR"/doc/*.[1-8])
[ -z "$made_up" ]
tap_ok $? "README and man pages use no made-up candidate id (c03): generated ids are hashes"
[ -z "$made_up" ] || echo "$made_up" | diag

# One script: each command verbatim, framed by markers with its exit code.
{
    echo 'cd /tmp/readme-view || exit 1'
    for i in $(seq "$n"); do
        echo "echo '@@cmd $i'"
        echo '{'
        cat "$T/cmd.$i"
        echo '} 2>&1'
        echo "echo \"@@rc $i \$?\""
    done
    # Not the README's: never leave the cluster behind when a command failed.
    echo 'tests/cluster/localcluster.sh down > /dev/null 2>&1'
} > "$T/walk.sh"

# A view of the source tree whose _build is this build.
timeout 900 unshare --mount --propagation private /bin/bash -c '
    mount -t tmpfs -o mode=1777 tmpfs /tmp || exit 1
    mkdir -m 0755 /tmp/readme-view
    for f in "$1"/* "$1"/.[!.]*; do
        [ -e "$f" ] && [ "$(basename "$f")" != _build ] && ln -s "$f" /tmp/readme-view/
    done
    ln -s "$2" /tmp/readme-view/_build
    exec /bin/bash /dev/fd/3
' walk "$MOEFLOW_SRCDIR" "$MOEFLOW_BUILDDIR" 3< "$T/walk.sh" < /dev/null > "$T/transcript" 2>&1

norm() {
    sed -E -e 's/[0-9a-f]{64}/<sha256>/g' -e 's/port [0-9]+/port <N>/g' -e 's/job [0-9]+/job <N>/g' \
        -e 's/afterok:[0-9]+/afterok:<N>/g' -e 's|/runs/[0-9_]+|/runs/<id>|g' \
        -e 's/\(run [0-9_]+\)/(run <id>)/g'
}
for i in $(seq "$n"); do
    cmd=$(head -1 "$T/cmd.$i")
    awk -v i="$i" '$0 == "@@cmd " i { on = 1; next } /^@@rc / && on { exit } on' "$T/transcript" \
        > "$T/out.$i"
    rc=$(sed -n "s/^@@rc $i //p" "$T/transcript")
    [ "$rc" = 0 ]
    tap_ok $? "README command $i exits 0: $cmd"
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
tap_done
