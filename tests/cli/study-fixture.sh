# Sourced by the CLI tests that read a study after its stages ran
# (report-study.sh, report-proof.sh, report-pack.sh): the tiny example
# study as moeflow gen writes it, each candidate's launch log as
# tests/doubles/fake-megatron prints it for the candidate's own arguments,
# and winners recorded the way the plugin and `contract winner` record
# them (a sealed retune run record, its contract under winners/).

# fixture_logs STUDY STAGES RANK WORLD_SIZE: results/<stage>/<id>.log of
# every candidate of the comma-separated STAGES, as rank RANK of
# WORLD_SIZE logs it (rank 0 logs the argument dump).
fixture_logs() {
    python3 - "$1" "$MOEFLOW_SRCDIR" "$2" "$3" "$4" <<'PY'
import json, os, subprocess, sys
s, src, stages, rank, world = sys.argv[1:6]
for st in json.load(open(s + "/manifest.json"))["stages"]:
    if st["stage"] not in stages.split(","):
        continue
    os.makedirs("%s/results/%s" % (s, st["stage"]), exist_ok=True)
    for c in st["candidates"]:
        out = subprocess.run([src + "/tests/doubles/fake-megatron",
                              src + "/tests/data/megatron/argparse-core_v0.19.0.txt"] + c["argv"],
                             env=dict(os.environ, RANK=rank, WORLD_SIZE=world),
                             capture_output=True, text=True, check=True)
        open("%s/results/%s/%s.log" % (s, st["stage"], c["id"]), "w").write(out.stdout)
PY
}

# fixture_winner STUDY VARIABLE VALUE: the retune candidate's sealed run
# record (runs/<n>_0) and its contract recorded as a winner, as the
# plugin and `moeflow contract winner` write them (which refuses root).
# A winner is a run record that contract verify accepts against the frozen
# baseline (moe_contract_check_run): the baseline is frozen first, as the
# contract stage's job does (contract/frozen.json, the declared contract's
# canonical text, sealed, read-only).
fixture_frozen() {
    local s=$1 c
    [ -e "$s/contract/frozen.json" ] && return 0
    c=$(awk -F'\t' '$1 == "contract" { print $3 }' "$s/candidates.tsv")
    mkdir -p "$s/contract"
    tr -d '\n' < "$s/contracts/$c.json" > "$s/contract/frozen.json"
    (cd "$s/contract" && sha256sum frozen.json > frozen.json.sha256 &&
        chmod 0444 frozen.json frozen.json.sha256)
}

fixture_winner() {
    local s=$1 id rec d
    fixture_frozen "$s"
    id=$(awk -F'\t' -v a="$2" -v b="$3" '$1 == "retune" && $4 == a && $5 == b { print $3 }' "$s/candidates.tsv")
    rec=$s/runs/$(( $(ls "$s/runs" 2> /dev/null | wc -l) + 7 ))_0
    mkdir -p "$rec" "$s/winners"
    sed "s/,\"semantics\":/,\"run\":{\"candidate\":\"$id\",\"id\":\"${rec##*/}\",\"stage\":\"retune\"},\"semantics\":/" \
        "$s/contracts/$id.json" | tr -d '\n' > "$rec/contract.json"
    (cd "$rec" && sha256sum contract.json > contract.json.sha256)
    tr -d '\n' < "$s/contracts/$id.json" > "$s/winners/new"
    d=$(sha256sum < "$s/winners/new" | cut -d' ' -f1)
    mv "$s/winners/new" "$s/winners/$d.json"
    (cd "$s/winners" && sha256sum "$d.json" > "$d.json.sha256")
}
