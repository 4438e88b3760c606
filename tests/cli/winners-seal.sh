#!/bin/bash
# Issue 21: winners/ is sealed like run records.  `contract winner` refuses
# a world-writable study, a winners/ anyone can write and a run that is not
# a retune run of this study; it writes <sha256>.json and its .sha256 seal.
# `gen --stage validate --winners` accepts only winners whose seal and
# content match a sealed retune run record: an empty file named after a
# digest (accepted before), a contract-stage run's contract and an unsealed
# file are refused, naming the file.  The plugin's side is
# tests/integration/winners-seal.sh.  Run records are written here by hand,
# as the plugin writes them (canonical text and a sha256sum seal).
. "$MOEFLOW_SRCDIR/tests/integration/lib.sh"
require_root
M=$MOEFLOW_BIN
U=nobody
tap_plan 21
tmp=$(mktemp -d /tmp/mfws.XXXXXX)
trap 'rm -rf "$tmp"' EXIT
chmod 0755 "$tmp"
as_user() { runuser -u "$U" -- "$@"; }

S=$tmp/study
"$M" gen --templates "$MOEFLOW_SRCDIR/templates" "$MOEFLOW_SRCDIR/etc/studies/tiny-moe-2gpu.yaml" \
    -o "$S" > "$tmp/out" 2>&1 || { diag < "$tmp/out"; echo "Bail out! gen failed"; exit 1; }
# the first retune candidate and the contract stage's
R=$(awk -F'\t' '$1 == "retune" { print $3; exit }' "$S/candidates.tsv")
C=$(awk -F'\t' '$1 == "contract" { print $3; exit }' "$S/candidates.tsv")

# run_record ID STAGE CANDIDATE: runs/ID/contract.json, sealed.
run_record() {
    local d=$S/runs/$1
    mkdir -p "$d"
    sed "s/,\"semantics\":/,\"run\":{\"candidate\":\"$3\",\"id\":\"$1\",\"stage\":\"$2\"},\"semantics\":/" \
        "$S/contracts/$3.json" | tr -d '\n' > "$d/contract.json"
    (cd "$d" && sha256sum contract.json > contract.json.sha256)
}
run_record 7_0 retune "$R"
run_record 6_0 contract "$C"
chown -R "$U" "$S"
chmod -R go-w "$S"
# the baseline the contract stage froze: a winner is a run contract verify accepts against it
as_user "$M" contract freeze "$S" --from "$S/contracts/$C.json" > "$tmp/out" 2>&1 ||
    { diag < "$tmp/out"; echo "Bail out! freeze failed"; exit 1; }

as_user "$M" contract winner "$S" "$S/runs/6_0" > "$tmp/out" 2>&1
tap_ok $(( $? == 0 )) "contract winner of a contract-stage run is refused"
ok "... only a retune run can win" has "$tmp/out" "ran the contract stage: only a retune run can win"
chmod o+w "$S"
as_user "$M" contract winner "$S" "$S/runs/7_0" > "$tmp/out" 2>&1
tap_ok $(( $? == 0 )) "contract winner into a world-writable study is refused, as freeze is"
ok "... saying so" has "$tmp/out" "is world-writable"
chmod o-w "$S"
as_user mkdir -m 0777 "$S/winners"
chmod 0777 "$S/winners"
as_user "$M" contract winner "$S" "$S/runs/7_0" > "$tmp/out" 2>&1
tap_ok $(( $? == 0 )) "contract winner into a 0777 winners/ is refused"
ok "... saying so" has "$tmp/out" "winners must be owned by you and writable by nobody else"
ok "... and nothing was written" test -z "$(ls -A "$S/winners")"
chmod 0755 "$S/winners"
cp -a "$S" "$tmp/other"
as_user "$M" contract winner "$S" "$tmp/other/runs/7_0" > "$tmp/out" 2>&1
tap_ok $(( $? == 0 )) "a run record of another study is refused"
ok "... naming it" has "$tmp/out" "is not a run record of"

as_user "$M" contract winner "$S" "$S/runs/7_0" > "$tmp/out" 2>&1
tap_ok $? "contract winner of the sealed retune run"
ok "... recorded as winners/<sha256>.json" has "$tmp/out" "^recorded winner .*/winners/[0-9a-f]{64}\.json$"
w=$(ls "$S/winners"/*.json)
ok "... with its seal, which sha256sum -c accepts" \
    sh -c "cd '$S/winners' && sha256sum -c '$(basename "$w").sha256' > /dev/null"
ok "... both mode 0444, the user's" test "$(stat -c '%a %U' "$w" "$w.sha256" | sort -u)" = "444 $U"
as_user "$M" contract winner "$S" "$S/runs/7_0" > "$tmp/out" 2>&1
ok "recording it again is a no-op" has "$tmp/out" "^already recorded winner "

as_user "$M" gen --templates "$MOEFLOW_SRCDIR/templates" "$S/study.yaml" --stage validate \
    --winners "$S" > "$tmp/out" 2>&1
tap_ok $? "gen --winners takes the sealed winner"
ok "... as the baseline and the winner alone, and a profiling twin of each" has "$tmp/out" "^validate: 4 runs"

# Foreign files in winners/, each refused with its reason.
fake=$S/winners/$(printf '%064d' 0).json
try_gen() {
    as_user "$M" gen --templates "$MOEFLOW_SRCDIR/templates" "$S/study.yaml" --stage validate \
        --winners "$S" > "$tmp/out" 2>&1
    [ $? -ne 0 ] && has "$tmp/out" "$1"
}
as_user touch "$fake"
ok "an empty file named after a digest is refused, by name" \
    try_gen "winners/0{64}\.json(:[0-9]+)*: not valid JSON"
rm -f "$fake"
# the contract-stage run's contract without its "run" part, canonical
sed 's/,"run":{[^}]*}//' "$S/runs/6_0/contract.json" > "$tmp/c.json"
cc=$S/winners/$(sha256sum < "$tmp/c.json" | cut -c1-64).json
as_user cp "$tmp/c.json" "$cc"
ok "an unsealed contract is refused" try_gen "\.json\.sha256 is missing"
(cd "$S/winners" && as_user sh -c "sha256sum '$(basename "$cc")' > '$(basename "$cc").sha256'")
ok "a sealed contract that only a contract-stage run has is refused" \
    try_gen "no sealed retune run record under runs/ that contract verify accepts has this contract"
rm -f "$cc" "$cc.sha256"
as_user cp "$w" "$S/winners/notes.json"
as_user "$M" gen --templates "$MOEFLOW_SRCDIR/templates" "$S/study.yaml" --stage validate \
    --winners "$S" > "$tmp/out" 2>&1
tap_ok $? "a file not named <sha256>.json is not a winner: ignored"
rm -f "$S/winners/notes.json"

# gen --winners rewrites validate.sbatch in place: a planted symlink there
# is refused (rule 2 of lib/README.md), its target untouched.
echo victim > "$tmp/victim"
chmod 0666 "$tmp/victim"
rm -f "$S/validate.sbatch"
as_user ln -s "$tmp/victim" "$S/validate.sbatch"
as_user "$M" gen --templates "$MOEFLOW_SRCDIR/templates" "$S/study.yaml" --stage validate \
    --winners "$S" > "$tmp/out" 2>&1
[ "$(cat "$tmp/victim")" = victim ] && [ -L "$S/validate.sbatch" ] && has "$tmp/out" "a symlink is there"
tap_ok $? "gen --winners refuses a symlink at validate.sbatch, never writes through it"
tap_done
