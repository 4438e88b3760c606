#!/bin/bash
# SECURITY.md claims about reading the study's files, tested with the CLI
# (the plugin calls the same lib/ functions): a FIFO or an oversized file in
# place of a contract is refused at once, never waited on or read whole.
. "$MOEFLOW_SRCDIR/tests/integration/lib.sh"
M=$MOEFLOW_BIN
tap_plan 6
tmp=$(mktemp -d /tmp/mfsec.XXXXXX)
trap 'rm -rf "$tmp"' EXIT
chmod 0755 "$tmp"

s=$tmp/fifo
mkdir -p "$s/contract"
mkfifo "$s/contract/frozen.json"
timeout 20 "$M" contract verify "$s" > "$tmp/out" 2>&1
rc=$?
[ $rc -ne 124 ] && [ $rc -ne 0 ]; tap_ok $? "a FIFO as frozen.json: verify fails at once (rc $rc), it does not wait for a writer"
ok "and says it is not a regular file" has "$tmp/out" "not a regular file"

s=$tmp/big
mkdir -p "$s/contract"
head -c $((17 * 1024 * 1024)) /dev/zero | tr '\0' ' ' > "$s/contract/frozen.json"
timeout 20 "$M" contract verify "$s" > "$tmp/out" 2>&1
[ $? -ne 0 ]; tap_ok $? "a 17 MiB frozen.json is refused"
ok "the message gives the limit" has "$tmp/out" "at most 16 MiB"

s=$tmp/link
mkdir -p "$s/contract"
echo '{}' > "$tmp/elsewhere.json"
ln -s "$tmp/elsewhere.json" "$s/contract/frozen.json"
timeout 20 "$M" contract verify "$s" > "$tmp/out" 2>&1
[ $? -ne 0 ]; tap_ok $? "a symlink as frozen.json is not followed"
ok "the message says it is a symlink" has "$tmp/out" "symlink"
tap_done
