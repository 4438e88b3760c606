#!/bin/bash
# The contract stage's capture (templates/moeflow_capture.py) run here with
# python3 against fake Megatron trees and fake modules: what it records in
# measured.json (torch is absent on this machine: recorded with a reason),
# the rule for each declared field, exit 3 with a message naming the field,
# the declared and the measured value; and the generated contract.sbatch
# for launcher variants, run through a stand-in srun.
. "$MOEFLOW_SRCDIR/tests/integration/lib.sh"
command -v python3 > /dev/null || skip_all "python3 not installed"
[ -x "$MOEFLOW_BIN" ] || skip_all "moeflow not built"
export MOEFLOW_TEMPLATE_DIR=$MOEFLOW_SRCDIR/templates
CAPTURE=$MOEFLOW_SRCDIR/templates/moeflow_capture.py
T=$(mktemp -d /tmp/moeflow-capture.XXXXXX) && trap 'rm -rf "$T"' EXIT
tap_plan 49

# tree VERSION DIR: a Megatron-LM checkout as far as the capture looks.
tree() {
    mkdir -p "$2/megatron/core"
    echo "__version__ = \"$1\"" > "$2/megatron/core/package_info.py"
    : > "$2/megatron/__init__.py"
    # megatron.core itself needs torch: the capture must not import it.
    echo 'import torch' > "$2/megatron/core/__init__.py"
    echo 'raise SystemExit("pretrain_gpt.py must not run")' > "$2/pretrain_gpt.py"
}
# module DIR NAME VERSION: a package with __version__.
module() { mkdir -p "$1/$2" && echo "__version__ = \"$3\"" > "$1/$2/__init__.py"; }

tree 0.19.0 "$T/m19"
tree 0.16.0 "$T/m16"
tree 0.20.0 "$T/pin"
module "$T/te24" transformer_engine 2.4.0
module "$T/te29" transformer_engine 2.9.0+abc123
mkdir -p "$T/study" "$T/empty"
cd "$T/study" || exit 1

# capture NAME PYTHONPATH ARGS...: runs it; NAME.rc, NAME.out, NAME.err, NAME.json.
capture() {
    local name=$1 path=$2
    shift 2
    PYTHONPATH=$path python3 "$CAPTURE" --out "$T/$name.json" "$@" \
        > "$T/$name.out" 2> "$T/$name.err"
    echo $? > "$T/$name.rc"
}
rc_is() { test "$(cat "$T/$1.rc")" = "$2" || { cat "$T/$1.err" | diag; return 1; }; }
# field NAME PYEXPR: a value of NAME.json, printed by Python.
field() { python3 -c "import json,sys; m=json.load(open(sys.argv[1])); print($2)" "$T/$1.json"; }
field_is() { local got; got=$(field "$1" "$2"); [ "$got" = "$3" ] || { echo "$2: got '$got', want '$3'" | diag; return 1; }; }
D19=(--megatron core-0.19 --megatron-version 0.19)

# 1. The brief's contradiction: TE 2.9 declared, 2.4 on the path.
capture te24 "$T/te24" --entry "$T/m19/pretrain_gpt.py" "${D19[@]}" --transformer-engine 2.9 --apex false
ok "TE 2.9 declared, 2.4 found: exit 3" rc_is te24 3
ok "... the message names the field, the declared and the measured value" \
    has "$T/te24.err" "^moeflow capture: software.transformer_engine: declared 2.9, measured 2.4.0$"
ok "... measured.json records TE 2.4.0, imported" field_is te24 "m['transformer_engine']['version'], m['transformer_engine']['imported']" "2.4.0 True"
ok "... and the check as a contradiction" field_is te24 "[c['outcome'] for c in m['checks'] if c['field'] == 'software.transformer_engine']" "['contradicts']"
ok "torch absent: version null with the import error as reason" \
    field_is te24 "m['torch']" "{'reason': \"import torch failed: No module named 'torch'\", 'version': None}"
ok "... CUDA, NCCL and cuDNN null, saying there is no torch" \
    field_is te24 "sorted(k for k in ('cuda','nccl','cudnn') if m[k]['version'] is None and m[k]['reason'].startswith('no torch'))" "['cuda', 'cudnn', 'nccl']"
ok "Megatron's version read from the tree the entry script imports from, without importing megatron.core" \
    field_is te24 "m['megatron']['version'], m['megatron']['path']" "0.19.0 $T/m19/megatron"
ok "... no .git there: commit null with a reason" \
    field_is te24 "m['megatron']['commit'], m['megatron']['commit_reason'].startswith('no .git in')" "None True"
ok "Python's version recorded" field_is te24 "m['python']['version'] == __import__('platform').python_version()" "True"
ok "Apex, DeepEP, HybridEP absent, each with its import error" \
    field_is te24 "[m[k]['imported'] for k in ('apex','deepep','hybridep')], m['deepep']['reason']" \
    "[False, False, False] import deep_ep failed: No module named 'deep_ep'"
ok "no nvidia-smi here: GPUs and topology null with the reason" \
    field_is te24 "m['gpus']['count'], m['gpus']['nvidia_smi_reason'], m['gpus']['topology']" "0 nvidia-smi: not found None"

# 2. Nothing contradicts.
capture agree "$T/te29" --entry "$T/m19/pretrain_gpt.py" "${D19[@]}" --transformer-engine 2.9 --apex false
ok "TE 2.9.0+abc123 found for 2.9 declared, Megatron 0.19: exit 0" rc_is agree 0
ok "... every check agrees" field_is agree "sorted(set(c['outcome'] for c in m['checks']))" "['agrees']"
ok "... and nothing is printed as a disagreement" hasnt "$T/agree.err" "declared"

# 3. TE declared, absent.
capture teabsent "" --entry "$T/m19/pretrain_gpt.py" "${D19[@]}" --transformer-engine 2.9 --apex false
ok "TE 2.9 declared, absent: exit 3" rc_is teabsent 3
ok "... naming the import error" has "$T/teabsent.err" \
    "software.transformer_engine: declared 2.9, measured absent \(import transformer_engine failed: No module named 'transformer_engine'\)"

# 4. TE declared "" (--transformer-impl local): a TE found is recorded.
capture tenone "$T/te24" --entry "$T/m19/pretrain_gpt.py" "${D19[@]}" --transformer-engine "" --apex false
ok "TE \"\" declared, TE 2.4 found: exit 0" rc_is tenone 0
ok "... recorded as found and unused" field_is tenone "[c.get('note') for c in m['checks'] if c['field'] == 'software.transformer_engine']" \
    "['found, unused: the jobs run --transformer-impl local']"

# 5. Megatron: a found version that contradicts the dialect stops.
capture m16 "" --entry "$T/m16/pretrain_gpt.py" "${D19[@]}" --transformer-engine ""
ok "core-0.19 declared, megatron.core 0.16.0 found: exit 3" rc_is m16 3
ok "... naming both" has "$T/m16.err" "software.megatron: declared core-0.19 \(megatron.core 0.19\), measured 0.16.0 at $T/m16/megatron$"
sed -i 's/0.19.0/0.19.1/' "$T/m19/megatron/core/package_info.py"
capture m191 "" --entry "$T/m19/pretrain_gpt.py" "${D19[@]}" --transformer-engine ""
ok "core-0.19 and 0.19.1 (what the core_v0.19.0 tag says): compared on major.minor, exit 0" rc_is m191 0
# ... and not found: recorded and warned, never a stop.
capture nomegatron "" --entry "$T/empty/pretrain_gpt.py" "${D19[@]}" --transformer-engine ""
ok "Megatron not found where the entry script is: exit 0" rc_is nomegatron 0
ok "... a warning says it was recorded, not compared" has "$T/nomegatron.err" \
    "warning: software.megatron: declared core-0.19 .*, measured absent \(no megatron package on sys.path.*recorded, not compared"
ok "... and measured.json says so" field_is nomegatron "m['megatron']['version'], m['checks'][0]['outcome']" "None unchecked"

# 6. bridge-pin: the commit when the tree is a git checkout, else the version.
BP=(--megatron bridge-pin --megatron-version 0.20 --megatron-commit 2a75ac12 --transformer-engine "")
capture pin-tarball "" --entry "$T/pin/pretrain_gpt.py" "${BP[@]}"
ok "bridge-pin, a tree without .git at 0.20.0: exit 0" rc_is pin-tarball 0
ok "... noting that only the version could be compared" \
    field_is pin-tarball "m['checks'][0]['note'].startswith('the commit cannot be read')" "True"
git -C "$T/pin" init -q && git -C "$T/pin" -c user.email=t@t -c user.name=t commit -q --allow-empty -m x
capture pin-git "" --entry "$T/pin/pretrain_gpt.py" "${BP[@]}"
commit=$(git -C "$T/pin" rev-parse HEAD)
ok "bridge-pin, a git checkout at another commit: exit 3" rc_is pin-git 3
ok "... naming the measured commit" has "$T/pin-git.err" \
    "software.megatron: declared bridge-pin \(megatron.core 0.20, commit 2a75ac12\), measured 0.20.0 at $T/pin/megatron, commit ${commit:0:12}$"
ok "... the commit read from .git/HEAD" field_is pin-git "m['megatron']['commit'], m['megatron']['commit_source']" "$commit .git/HEAD"

# 7. Apex both ways; DeepEP and HybridEP when declared.
module "$T/apex" apex 0.1
capture apexfound "$T/apex" --entry "$T/m19/pretrain_gpt.py" "${D19[@]}" --apex false
ok "Apex declared false but found: exit 3 (Megatron uses its kernels by itself)" rc_is apexfound 3
mkdir -p "$T/dep/deep_ep" && echo 'class Buffer: pass' > "$T/dep/deep_ep/__init__.py"
capture hybrid "$T/dep" --entry "$T/m19/pretrain_gpt.py" "${D19[@]}" --deepep true --hybridep true
ok "DeepEP with Buffer but no HybridEPBuffer, both declared: exit 3 for HybridEP only" \
    test "$(cat "$T/hybrid.rc") $(grep -c 'declared true' "$T/hybrid.err")" = "3 1"
ok "... saying what is missing" has "$T/hybrid.err" "software.hybridep: declared true, measured absent \(import deep_ep: it has no HybridEPBuffer\)"

# 8. A launcher with no .py script: measured and warned, never enforced.
capture opaque "" --entry "" "${D19[@]}" --transformer-engine 2.9
ok "no entry script, TE 2.9 declared and absent: exit 0" rc_is opaque 0
ok "... warned as not enforced" has "$T/opaque.err" "warning: software.transformer_engine: declared 2.9, measured absent .*not enforced"

# 9. The GPU lane links pretrain_gpt.py into the study directory: Python
#    imports from the link's target folder, and so does the capture.
ln -s "$T/m16/pretrain_gpt.py" "$T/study/pretrain_gpt.py"
capture link "" --entry pretrain_gpt.py --megatron core-0.16 --megatron-version 0.16
ok "a relative, symlinked entry script: Megatron found beside its target" \
    field_is link "m['megatron']['path'], m['launcher']['import_path']" "$T/m16/megatron $T/m16"
rm "$T/study/pretrain_gpt.py"

# 10. Modules that misbehave, commands that hang: recorded, bounded, no crash.
mkdir -p "$T/bad/apex" "$T/bad/deep_ep" "$T/bin"
echo 'raise SystemExit("apex refuses")' > "$T/bad/apex/__init__.py"
echo 'import time; time.sleep(60)' > "$T/bad/deep_ep/__init__.py"
printf '#!/bin/sh\nsleep 60\n' > "$T/bin/nvidia-smi" && chmod +x "$T/bin/nvidia-smi"
start=$SECONDS
PATH=$T/bin:$PATH MOEFLOW_CAPTURE_TIMEOUT_S=2 capture bad "$T/bad" --entry "$T/m19/pretrain_gpt.py" "${D19[@]}" --apex true
ok "a module raising SystemExit, an import and nvidia-smi hanging: it finishes (exit 3 for Apex)" rc_is bad 3
ok "... within its time bounds ($(( SECONDS - start )) s)" test $(( SECONDS - start )) -lt 20
ok "... recording each reason" field_is bad "m['apex']['reason'], m['deepep']['reason'], m['gpus']['nvidia_smi_reason']" \
    "import apex failed: SystemExit: apex refuses import deep_ep failed: Timeout: timed out after 2 s nvidia-smi --query-gpu=index,name,uuid,pci.bus_id,driver_version,memory.total --format=csv,noheader,nounits: timed out after 2 s"

# 11. GPUs from nvidia-smi (a stand-in printing what an H200 node prints).
cat > "$T/bin/nvidia-smi" <<'SMI'
#!/bin/sh
case "$1" in
topo) printf '\tGPU0\tGPU1\nGPU0\t X \tNV18\nGPU1\tNV18\t X \n' ;;
*) echo '0, NVIDIA H200, GPU-aa, 00000000:19:00.0, 580.65.06, 143771'
   echo '1, NVIDIA H200, GPU-bb, 00000000:3B:00.0, 580.65.06, 143771' ;;
esac
SMI
PATH=$T/bin:$PATH capture smi "" --entry "$T/m19/pretrain_gpt.py" "${D19[@]}"
ok "nvidia-smi: two H200, their memory and driver" \
    field_is smi "m['gpus']['count'], m['gpus']['model'], m['gpus']['memory_mib'], m['gpus']['driver'], m['gpus']['nvidia_smi'][1]['pci_bus_id']" \
    "2 NVIDIA H200 143771 580.65.06 00000000:3B:00.0"
ok "... and the topology matrix" field_is smi "m['gpus']['topology'].split()[4]" "NV18"

ok "bad usage (--apex maybe) exits 2" sh -c "python3 '$CAPTURE' --out x --megatron core-0.19 --megatron-version 0.19 --apex maybe 2> /dev/null; test \$? = 2"
ok "the script parses as Python 3.8" python3 -c \
    "import ast,sys; ast.parse(open(sys.argv[1]).read(), feature_version=(3, 8))" "$CAPTURE"

# 12. The generated contract.sbatch for launcher variants, run through a
#     stand-in srun (drops its options, runs the command) and sinfo.
gen_study() {  # gen_study NAME LAUNCHER TE [CONTAINER]
    sed -e "s|command: python pretrain_gpt.py|command: $2|" \
        -e "s|transformer_engine: \"2.9\"|transformer_engine: \"$3\"|" \
        "$MOEFLOW_SRCDIR/etc/studies/tiny-moe-2gpu.yaml" > "$T/$1.yaml"
    [ -z "${4:-}" ] || sed -i "s|^  launcher:|  container:\n    image: $4\n    mounts: /lustre:/lustre\n  launcher:|" "$T/$1.yaml"
    "$MOEFLOW_BIN" gen "$T/$1.yaml" -o "$T/$1" > /dev/null 2>&1
}
gen_study torchrun "torchrun --nproc-per-node 2 \"$T/my tree/pretrain_gpt.py\"" 2.9 nvcr.io/nvidia/pytorch:25.01
ok "torchrun and a quoted path with spaces: the capture uses python3" has "$T/torchrun/contract.sbatch" '^python=python3$'
ok "... and the entry script as one quoted word" has "$T/torchrun/contract.sbatch" "^capture=\(--entry '$T/my tree/pretrain_gpt.py' "
ok "... the training stages run the same single word" has "$T/torchrun/fit.sbatch" "torchrun --nproc-per-node 2 '$T/my tree/pretrain_gpt.py' "
# (the study directory mounted at its own path, the container started there)
ok "... the capture srun has the training stages' container options" has "$T/torchrun/contract.sbatch" \
    "^srun --moe-candidate=\"\\\$candidate\" --container-image=nvcr.io/nvidia/pytorch:25.01 --container-mounts=/lustre:/lustre,$T/torchrun:$T/torchrun --container-workdir=$T/torchrun --ntasks=1 \"\\\$python\" \"\\\$study\"/moeflow_capture.py "

printf '#!/bin/bash\nwhile [ "${1#--}" != "$1" ]; do shift; done\nexec "$@"\n' > "$T/bin/srun"
printf '#!/bin/sh\necho "slurm 22.05.8"\n' > "$T/bin/sinfo"
chmod +x "$T/bin/srun" "$T/bin/sinfo"
rm "$T/bin/nvidia-smi"
cp -r "$T/m19/." "$T/my tree"
run_contract() { (cd "$T/$1" && PATH=$T/bin:$PATH PYTHONPATH=$2 bash contract.sbatch) > "$T/$1.log" 2>&1; }
gen_study run24 "python3 \"$T/my tree/pretrain_gpt.py\"" 2.9
run_contract run24 "$T/te24"
ok "contract.sbatch with TE 2.4 where 2.9 is declared: the job fails" test $? -ne 0
ok "... its log names both" has "$T/run24.log" "software.transformer_engine: declared 2.9, measured 2.4.0"
gen_study run29 "python3 \"$T/my tree/pretrain_gpt.py\"" 2.9
run_contract run29 "$T/te29:$T/apex"
ok "contract.sbatch where nothing contradicts: the job succeeds with measured.json" \
    test $? -eq 0 -a -s "$T/run29/contract/measured.json"
tap_done
