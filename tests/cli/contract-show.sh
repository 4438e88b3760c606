#!/bin/bash
# moeflow contract show labels every value: declared (from the study) or
# measured (by the plugin at job start, its source named); beside the
# frozen contract, what the contract stage's capture measured
# (contract/measured.json), each disagreement flagged.
. "$MOEFLOW_SRCDIR/tests/integration/lib.sh"
require_root
command -v python3 > /dev/null || skip_all "python3 not installed"
M=$MOEFLOW_BIN
U=nobody
tap_plan 16
T=$(mktemp -d /tmp/mfshow.XXXXXX) && trap 'rm -rf "$T"' EXIT
chmod 0755 "$T"
s=$T/study && mkdir -p "$s" && chown "$U" "$s"
cat > "$T/base.json" <<'JSON'
{"environment": {"megatron": "core_v0.19.0", "transformer_engine": "2.9",
                 "container": {"NCCL_VERSION": "2.21.5"}, "driver": "580.65.06"},
 "hardware": {"gpu_model": "h100", "gpus": 2, "gpus_per_node": 2, "nvlink_domain": 2},
 "workload": {"model": "tiny", "seq_len": 1024, "mbs": 1, "gbs": 8, "data": "mock"},
 "semantics": {"routing": "dropless", "class": "training-equivalent"},
 "parallel": {"tp": 1, "cp": 1, "pp": 1, "vpp": 1, "ep": 2, "etp": 1, "dp": 2, "edp": 1},
 "tuning": {"dispatcher": "alltoall", "ep_overlap": false},
 "timing": {"warmup": 2, "screen_steps": 6, "window": [41, 50]},
 "sources": {"environment.container": "environment", "environment.driver": "nvml"}}
JSON
runuser -u "$U" -- "$M" contract freeze "$s" --from "$T/base.json" > /dev/null 2>&1
"$M" contract show "$s" > "$T/plain.out" 2>&1
tap_ok $? "show a frozen study with nothing measured yet"
ok "... a study value is labelled declared" has "$T/plain.out" '^  environment\.transformer_engine +declared +"2\.9"$'
ok "... the plugin's facts are labelled measured, with their source" has "$T/plain.out" '^  environment\.driver +measured \(nvml\) +"580\.65\.06"$'
ok "... inside a measured object too" has "$T/plain.out" '^  environment\.container\.NCCL_VERSION +measured \(environment\) +"2\.21\.5"$'
ok "... the labels themselves are not shown as values" hasnt "$T/plain.out" '^  sources'
ok "... and it says the capture has not run" has "$T/plain.out" '^nothing measured yet: the contract stage writes contract/measured.json$'

# The capture's record of a node where TE 2.4 stands in for the declared 2.9.
mkdir -p "$T/tree/megatron/core" "$T/mods/transformer_engine"
echo '__version__ = "0.19.0"' > "$T/tree/megatron/core/package_info.py"
: > "$T/tree/pretrain_gpt.py"
echo '__version__ = "2.4.0"' > "$T/mods/transformer_engine/__init__.py"
mkdir -p "$s/contract" && chmod u+w "$s/contract"
PYTHONPATH=$T/mods python3 "$MOEFLOW_SRCDIR/templates/moeflow_capture.py" --out "$s/contract/measured.json" \
    --entry "$T/tree/pretrain_gpt.py" --megatron core-0.19 --megatron-version 0.19 \
    --transformer-engine 2.9 --apex false > /dev/null 2>&1
"$M" contract show "$s" > "$T/measured.out" 2>&1
tap_ok $? "show with contract/measured.json"
ok "... a contradicted field is flagged with both values" has "$T/measured.out" \
    '^  software\.transformer_engine +declared 2\.9; measured 2\.4\.0; DISAGREES$'
ok "... an agreeing one says so" has "$T/measured.out" '^  software\.megatron +declared core-0\.19 \(megatron\.core 0\.19\); measured 0\.19\.0 at .*; agrees$'
ok "... measured-only values are labelled measured, absent ones with the reason" \
    has "$T/measured.out" "^  torch +measured absent \(import torch failed: No module named 'torch'\)$"
ok "... and the count of contradictions closes it" has "$T/measured.out" '^1 declared value is contradicted by the measurement$'
"$M" contract show "$s" --json > "$T/json.out" 2>&1
ok "--json carries the labels and the measurement" python3 -c '
import json, sys
d = json.load(open(sys.argv[1]))
assert d["labels"]["environment.driver"] == "measured (nvml)"
assert d["labels"]["workload.gbs"] == "declared"
assert d["measured"]["transformer_engine"]["version"] == "2.4.0"' "$T/json.out"
# What a real capture measured on an H200 (tests/data/gpu/contract-capture/).
G=$MOEFLOW_SRCDIR/tests/data/gpu/contract-capture
cp "$G/measured-te-declared.json" "$s/contract/measured.json"
"$M" contract show "$s" > "$T/real.out" 2>&1
ok "a real capture: the GPU, driver and torch are labelled measured" has "$T/real.out" \
    '^  gpus +measured 1 x NVIDIA H200, 143771 MiB, driver 580\.159\.04$'
ok "... TE 2.9 and Apex declared but absent there are both flagged" \
    sh -c "grep -qE '^  software\.transformer_engine +declared 2\.9; measured absent .*; DISAGREES$' '$T/real.out' &&
           grep -qE '^  software\.apex +declared true; measured absent .*; DISAGREES$' '$T/real.out'"
cp "$G/measured-agrees.json" "$s/contract/measured.json"
"$M" contract show "$s" > "$T/real2.out" 2>&1
ok "... and with TE declared absent, nothing is contradicted" hasnt "$T/real2.out" 'DISAGREES'
echo '{"truncated' > "$s/contract/measured.json"
"$M" contract show "$s" > "$T/bad.out" 2>&1
tap_ok $(( $? == 2 ? 0 : 1 )) "a damaged measured.json: exit 2$(grep -o 'measured.json:[^ ]*' "$T/bad.out" | head -1 | sed 's/^/, naming /')"
tap_done
