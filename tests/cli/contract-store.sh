#!/bin/bash
# moeflow contract freeze/verify/diff on a real file system: write-once,
# atomic, sealed with sha256sum's format, never as root, never through a
# foreign symlink, never into a world-writable study, race-safe.
. "$MOEFLOW_SRCDIR/tests/integration/lib.sh"
require_root
M=$MOEFLOW_BIN
U=nobody
tap_plan 20

tmp=$(mktemp -d /tmp/mfct.XXXXXX)
trap 'rm -rf "$tmp"' EXIT
chmod 0755 "$tmp"
as_user() { runuser -u "$U" -- "$@"; }
new_study() { mkdir -p "$tmp/$1" && chown "$U" "$tmp/$1" && chmod 0755 "$tmp/$1"; echo "$tmp/$1"; }
cat > "$tmp/base.json" <<'JSON'
{"environment": {"megatron": "core_v0.16.0"}, "hardware": {"gpu_model": "NVIDIA H200", "gpus": 16},
 "workload": {"model": "qwen3-30b-a3b", "mbs": 1}, "semantics": {"routing": "dropless"},
 "parallel": {"tp": 1, "ep": 16}, "tuning": {"dispatcher": "alltoall", "ep_overlap": false},
 "timing": {"window": [41, 50]}}
JSON
sed 's/"ep_overlap": false/"ep_overlap": true/' "$tmp/base.json" > "$tmp/overlap.json"
chmod 0644 "$tmp"/*.json

s=$(new_study root)
"$M" contract freeze "$s" --from "$tmp/base.json" > "$tmp/out" 2>&1
tap_ok $(( $? == 0 )) "freezing as root is refused"
ok "the message says why" has "$tmp/out" "refusing to write contracts as root"
ok "nothing was written" test ! -e "$s/contract/frozen.json"

s=$(new_study plain)
as_user "$M" contract freeze "$s" --from "$tmp/base.json" > "$tmp/out" 2>&1
tap_ok $? "the job user freezes the baseline"
ok "frozen.json is mode 0444 and owned by the user" test "$(stat -c '%a %U' "$s/contract/frozen.json")" = "444 $U"
ok "sha256sum -c accepts the seal" sh -c "cd '$s/contract' && sha256sum -c frozen.json.sha256 >/dev/null"
as_user "$M" contract freeze "$s" --from "$tmp/base.json" > "$tmp/out" 2>&1
ok "freezing the same contract again is a no-op" has "$tmp/out" "^already frozen"
sum_before=$(sha256sum "$s/contract/frozen.json")
as_user "$M" contract freeze "$s" --from "$tmp/overlap.json" > "$tmp/out" 2>&1
tap_ok $(( $? == 0 )) "freezing a different contract is refused"
ok "the frozen file is unchanged" test "$(sha256sum "$s/contract/frozen.json")" = "$sum_before"
"$M" contract verify "$s" > "$tmp/out" 2>&1
ok "verify accepts the intact baseline" has "$tmp/out" "intact, sha256 "

chmod u+w "$s/contract/frozen.json"
sed -i 's/"tp":1/"tp":2/' "$s/contract/frozen.json"
"$M" contract verify "$s" > "$tmp/out" 2>&1
tap_ok $(( $? == 0 )) "verify refuses a tampered baseline"
ok "and says it was tampered with" has "$tmp/out" "tampered with"

# A foreign symlink in place of the contract directory: refused, target untouched.
s=$(new_study link)
mkdir -p "$tmp/rootdir" && echo precious > "$tmp/rootdir/frozen.json"
ln -s "$tmp/rootdir" "$s/contract"
as_user "$M" contract freeze "$s" --from "$tmp/base.json" > "$tmp/out" 2>&1
tap_ok $(( $? == 0 )) "a symlinked contract directory is refused"
ok "the symlink's target is untouched" test "$(cat "$tmp/rootdir/frozen.json")" = precious
s=$(new_study link2)
mkdir -p "$s/contract" && chown "$U" "$s/contract"
ln -s "$tmp/rootdir/frozen.json" "$s/contract/frozen.json"
as_user "$M" contract freeze "$s" --from "$tmp/base.json" > "$tmp/out" 2>&1
tap_ok $(( $? == 0 )) "a frozen.json symlink to a root-owned file is refused"
ok "its target is untouched" test "$(cat "$tmp/rootdir/frozen.json")" = precious

s=$(new_study open)
chmod 0777 "$s"
as_user "$M" contract freeze "$s" --from "$tmp/base.json" > "$tmp/out" 2>&1
ok "a world-writable study directory is refused" has "$tmp/out" "world-writable"

# 16 freezers at once: exactly one freezes, all others find the same file.
s=$(new_study race)
for i in $(seq 16); do
    as_user "$M" contract freeze "$s" --from "$tmp/base.json" > "$tmp/race.$i" 2>&1 &
done
wait
ok "exactly one of 16 racing freezers froze" test "$(cat "$tmp"/race.* | grep -c '^froze ')" = 1
ok "the other 15 found it already frozen" test "$(cat "$tmp"/race.* | grep -c '^already frozen ')" = 15

# SIGKILL at random moments: never a partial file; the next run freezes cleanly.
s=$(new_study kill)
torn=0
for i in $(seq 20); do
    rm -rf "$s/contract"
    # setpriv execs in place (runuser would fork), so $! is the writer itself
    setpriv --reuid="$U" --regid="$(id -g "$U")" --clear-groups \
        "$M" contract freeze "$s" --from "$tmp/base.json" > /dev/null 2>&1 &
    pid=$!
    sleep "0.00$((RANDOM % 9))"
    kill -KILL $pid 2>/dev/null
    wait $pid 2>/dev/null
    if [ -e "$s/contract/frozen.json" ]; then
        "$M" contract verify "$s" > /dev/null 2>&1 || [ ! -e "$s/contract/frozen.json.sha256" ] || torn=$((torn + 1))
    fi
    ls -a "$s/contract" 2>/dev/null | grep -qvE '^(\.|\.\.|frozen\.json|frozen\.json\.sha256)$' && torn=$((torn + 1))
done
as_user "$M" contract freeze "$s" --from "$tmp/base.json" > /dev/null 2>&1 && "$M" contract verify "$s" > /dev/null
ok "20 killed freezers left no torn or stray file, and a clean freeze follows" test "$torn" = 0 -a $? = 0
tap_done
