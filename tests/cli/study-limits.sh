#!/bin/bash
# Rules 1 and 7 end to end (lib/README.md), one regression a defect of the
# second hostile round: study strings reach the scripts and contracts whole
# or are refused with their limit (D02), a UTF-16 study is refused by name
# (D15), absurd numbers are refused and layouts --json keeps step_ms at the
# edges of every range (D17), a time limit Slurm would wrap is refused
# (D21).  tests/unit/study/test_study_limits explores the same rules over the
# whole schema.
. "$MOEFLOW_SRCDIR/tests/integration/lib.sh"
M="$MOEFLOW_BIN"
S=$MOEFLOW_SRCDIR/etc/studies/tiny-moe-2gpu.yaml
out=$(mktemp -d) || exit 1
trap 'rm -rf "$out"' EXIT
cd "$out" || exit 1
tap_plan 13

# D02: 64 KiB values, every one a different byte pattern, into every script
python3 - "$S" <<'PY'
import sys
s = open(sys.argv[1]).read()
k = 65536
cmd = 'python /opt/' + 'c' * (k - 32) + '/pretrain_gpt.py --end-marker'
data = ' '.join('0.25 /d/' + 'd' * (k // 4 - 40) + '%d_text_document' % i for i in range(4))
s = s.replace('command: python pretrain_gpt.py', 'command: ' + cmd)
s = s.replace('  routing: dropless', '  routing: dropless\n  data: "%s"' % data)
s = s.replace('  nodes: 1', '  nodes: 1\n  partition: %s\n  account: %s\n  container:\n'
              '    image: "%s"\n    mounts: "%s"' % ('p' * k, 'a' * k, 'i' * k, '/m' * (k // 2)))
open('long.yaml', 'w').write(s)
open('long.want', 'w').write('\n'.join([cmd, data, 'p' * k, 'a' * k, 'i' * k, '/m' * (k // 2)]))
PY
"$M" gen long.yaml -o long > long.out 2>&1
tap_ok $? "a study with 64 KiB strings is generated"
python3 - <<'PY' > long.check 2>&1
import glob, sys
want = open('long.want').read().split('\n')
text = ''.join(open(f).read() for f in glob.glob('long/*.sbatch'))
missing = [w[:40] for w in want if w.split()[-1] not in text and w not in text]
print('missing:', missing)
sys.exit(1 if missing else 0)
PY
tap_ok $? "every 64 KiB string reaches the scripts whole ($(cat long.check))"
grep -q -- '--end-marker' long/fit.sbatch
tap_ok $? "the launcher's last word is in fit.sbatch (D02: cut at 255)"

# one byte over the limit: refused naming the field and the limit
python3 -c "
s = open('$S').read().replace('command: python pretrain_gpt.py', 'command: python ' + 'p' * 131066)
open('over.yaml', 'w').write(s)"
"$M" gen over.yaml -o over > /dev/null 2> over.err
[ $? -eq 2 ] && grep -q 'cluster.launcher.command: is 131073 bytes, over the limit of 131072' over.err && [ ! -e over ]
tap_ok $? "a launcher one byte over 128 KiB is refused with the limit named"

sed -E 's/^  transformer_engine: .*/  transformer_engine: "2.9.0+cu128.git20261201.abcdef0123456789abcdef0123456789abcdef01234567"/' "$S" > te.yaml
"$M" gen te.yaml -o te > /dev/null 2>&1 &&
    grep -q '2.9.0+cu128.git20261201.abcdef0123456789abcdef0123456789abcdef01234567"' te/contracts/*.json
tap_ok $? "a 70-byte transformer_engine reaches the declared contracts whole"

# D15
iconv -f UTF-8 -t UTF-16 "$S" > u16.yaml
"$M" gen u16.yaml -o u16 > /dev/null 2> u16.err
[ $? -eq 2 ] && grep -q 'u16.yaml:1:1: the study is UTF-16LE' u16.err && [ ! -e u16 ]
tap_ok $? "a UTF-16 study is refused naming the file and the encoding ($(head -c 120 u16.err))"

# D17
addc() { sed -E "s/^  gpu: h100/  gpu: h100\n  $1/" "$S" > n.yaml; }
addc 'achievable_tflops_bf16: 1e-320'
"$M" layouts n.yaml --json > /dev/null 2> n.err
[ $? -eq 2 ] && grep -q 'achievable_tflops_bf16: .* too small to be a measured quantity' n.err
tap_ok $? "a subnormal TFLOP/s is refused"
addc 'nvlink_gbps: 1e-300'
"$M" layouts n.yaml > /dev/null 2> n.err
[ $? -eq 2 ] && grep -q 'nvlink_gbps: 1e-300 is out of range 0.1..100000 (GB/s' n.err
tap_ok $? "1e-300 GB/s is refused with its range and unit"
addc 'achievable_tflops_bf16: 0x1p10'
"$M" gen n.yaml -o hex > /dev/null 2> n.err
[ $? -eq 2 ] && grep -q "expected a decimal number, not '0x1p10'" n.err
tap_ok $? "a hexadecimal float is refused as the integer fields refuse 0x8"
sed -E 's/^  routing: dropless/  routing: drop-and-pad\n  capacity_factor: 0/' "$S" > cf.yaml
"$M" gen cf.yaml -o cf > /dev/null 2> n.err
[ $? -eq 2 ] && grep -q 'capacity_factor: 0 is out of range' n.err
tap_ok $? "an explicit capacity_factor 0 is refused, not replaced by 1"

# every range at its slow edge and its fast edge: layouts --json has a
# finite step_ms for every layout
for edge in slow fast; do
    if [ $edge = slow ]; then
        v='achievable_tflops_bf16: 1\n  nvlink_gbps: 0.1\n  internode_gbps: 0.1\n  host_overhead_us: 1e6\n  host_expert_us: 1e6\n  host_etp_us: 1e6\n  route_ns: 1e6'
    else
        v='achievable_tflops_bf16: 1e5\n  nvlink_gbps: 1e5\n  internode_gbps: 1e5\n  host_overhead_us: 0\n  host_expert_us: 0\n  host_etp_us: 0\n  route_ns: 0'
    fi
    sed -E "s/^  gpu: h100/  gpu: h100\n  $v/" "$S" > $edge.yaml
    "$M" layouts $edge.yaml --json > $edge.json 2> $edge.err &&
        python3 -c "
import json, math, sys
d = json.load(open('$edge.json'))
ok = d['layouts'] and all('step_ms' in l and math.isfinite(l['step_ms']) for l in d['layouts'])
sys.exit(0 if ok else 1)"
    tap_ok $? "layouts --json at the $edge edge of every range: a finite step_ms for each layout"
done

# D21
for v in 99999999-00 4294967296; do
    sed -E "s/^  time_limit: .*/  time_limit: \"$v\"/" "$S" > t.yaml
    "$M" gen t.yaml -o t > /dev/null 2>> t.err || echo "refused $v" >> t.refused
done
[ "$(grep -c 'more than Slurm can read' t.err)" = 2 ] && [ ! -e t ]
tap_ok $? "time limits Slurm reads as negative or as no limit are refused"
tap_done
