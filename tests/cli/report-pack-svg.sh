#!/bin/bash
# Issue 37: the evidence pack's plots.  `moeflow report STUDY --pack` on the
# tiny study of report-pack.sh (fake-megatron's invented step times, two
# recorded winners, validate rebuilt from them; here the fit stage's logs
# too) and a decision trail with a scale round, a hostile one and files
# that are no decision.  Every SVG is well-formed XML with axis titles in
# units, legends and the series the pack's numbers say; strings from the
# trail are data; what is not plotted is listed in README.md; index.html
# renders in headless Chromium to a picture that is not blank and shows
# the baseline's blue and the winner's orange.  Chromium is a test
# dependency (build-aux/install-deps.sh --test): its absence fails, never skips.
. "$MOEFLOW_SRCDIR/tests/integration/lib.sh"
. "$MOEFLOW_SRCDIR/tests/cli/study-fixture.sh"
command -v python3 > /dev/null || skip_all "python3 not installed (build-aux/install-deps.sh --test)"
M=$MOEFLOW_BIN
export MOEFLOW_TEMPLATE_DIR=$MOEFLOW_SRCDIR/templates
T=$(mktemp -d /tmp/mfsvg.XXXXXX) && trap 'rm -rf "$T"' EXIT
chmod 0755 "$T"
tap_plan 19
S=$T/tiny
"$M" gen "$MOEFLOW_SRCDIR/etc/studies/tiny-moe-2gpu.yaml" -o "$S" > /dev/null 2>&1
fixture_logs "$S" fit,scale,retune 0 1
fixture_winner "$S" ep_overlap true
fixture_winner "$S" precision fp8-delayed
chmod -R go-w "$S"
"$M" gen "$S/study.yaml" --stage validate --winners "$S" > "$T/gen.out" 2>&1 || diag < "$T/gen.out"
fixture_logs "$S" validate 0 1
mkdir -p "$S/decisions"
# Two decisions as moeflow run records them (contract_store.c: canonical
# JSON, NN-stage.json, sha256sum's line beside it): a scale round whose
# strings are hostile, and one whose ranking the pack cannot draw.
python3 - "$S/decisions" <<'PY'
import json, sys
d = sys.argv[1]
docs = {"01-scale.json": {"stage": "scale", "round": 2, "ranking": [
    {"candidate": "c1", "layout": "tp1.cp1.pp1.vpp1.ep2.etp1", "predicted_ms": 70, "measured_ms": 990},
    {"candidate": "c2", "layout": "tp2.cp1.pp1.vpp1.ep1.etp1", "predicted_ms": 95, "measured_ms": 1012.5},
    {"candidate": "c3 <x>&'\"", "layout": "</text><script>alert(1)</script>", "predicted_ms": 80,
     "measured_ms": None}]},
        "02-scale.json": {"stage": "scale", "round": "two"}}
for name, doc in docs.items():
    open("%s/%s" % (d, name), "w").write(json.dumps(doc, sort_keys=True, separators=(",", ":")))
PY
(cd "$S/decisions" && for f in *.json; do sha256sum "$f" > "$f.sha256"; done)
chmod -R go-w "$S/decisions"

"$M" report "$S" --pack > "$T/pack.out" 2>&1
rc=$?
tap_ok $rc "report STUDY_DIR --pack succeeds with a decision trail beside it"
[ $rc = 0 ] || diag < "$T/pack.out"
P=$S/evidence-pack
ok "the pack holds index.html and the five plots" test \
    "$(cd "$P" && printf '%s ' *)" = \
    "README.md index.html memory-modeled-vs-measured.svg pack.json scale-decision-1.svg scale-round-1.svg step-modeled-vs-measured.svg step-time.svg "

# Every SVG is XML whose root is <svg>; text() of each, for the checks below.
python3 - "$P" "$T" > "$T/xml.out" 2>&1 <<'PY'
import glob, os, sys, xml.etree.ElementTree as ET
bad = 0
for f in sorted(glob.glob(sys.argv[1] + "/*.svg")):
    try:
        root = ET.parse(f).getroot()
    except ET.ParseError as e:
        print("%s: %s" % (f, e)); bad += 1; continue
    if root.tag != "{http://www.w3.org/2000/svg}svg":
        print("%s: root is %s" % (f, root.tag)); bad += 1
    open(os.path.join(sys.argv[2], os.path.basename(f) + ".txt"), "w").write("\n".join(t.text or "" for t in root.iter("{http://www.w3.org/2000/svg}text")) + "\n")
sys.exit(bad)
PY
rc=$?
tap_ok $rc "every SVG is well-formed XML with an <svg> root"
[ $rc = 0 ] || diag < "$T/xml.out"
ok "step time: titled by the winner, axes in units, the report window, both series in the legend" \
    sh -c "grep -q '^Step time per iteration: combination=.*against the baseline$' '$T/step-time.svg.txt' &&
           grep -qxF 'step time (ms)' '$T/step-time.svg.txt' && grep -qxF iteration '$T/step-time.svg.txt' &&
           grep -qxF 'report window' '$T/step-time.svg.txt' && grep -qxF 'baseline (measured)' '$T/step-time.svg.txt'"
ok "... its y axis says where it starts" sh -c "grep -q '^y axis starts at [0-9.]*, not 0$' '$T/step-time.svg.txt'"
# Each series is drawn through every step pack.json holds (50 iterations each).
n=$(python3 -c 'import re,sys; print(" ".join(str(len(p.split())) for p in re.findall(r"<polyline fill=\"none\" stroke=\"#(?:1f77b4|ff7f0e)\" stroke-width=\"2\" stroke-linejoin=\"round\" points=\"([^\"]*)\"", open(sys.argv[1]).read())))' "$P/step-time.svg")
ok "... each series through all 50 logged steps ($n)" test "$n" = "50 50"
ok "memory and step: measured against modeled, units, the y = x line and the band" \
    sh -c "grep -qxF 'modeled peak memory (MiB): moeflow'\''s model' '$T/memory-modeled-vs-measured.svg.txt' &&
           grep -qxF 'measured step time (ms)' '$T/step-modeled-vs-measured.svg.txt' &&
           grep -qxF '±10%' '$T/memory-modeled-vs-measured.svg.txt' && grep -qxF '±25%' '$T/step-modeled-vs-measured.svg.txt' &&
           grep -qxF 'y = x' '$T/step-modeled-vs-measured.svg.txt'"
ok "... each point labelled by its candidate" \
    sh -c "grep -qxF 'recompute=full' '$T/memory-modeled-vs-measured.svg.txt' &&
           grep -qxF tp2.cp1.pp1.vpp1.ep2.etp1 '$T/step-modeled-vs-measured.svg.txt'"
ok "scale round 1: the stage's layouts in predicted order, predicted and measured best marked" \
    sh -c "grep -qxF '#2 tp1.cp1.pp1.vpp1.ep1.etp1' '$T/scale-round-1.svg.txt' &&
           grep -q 'predicted.*best' '$T/scale-round-1.svg.txt' && grep -q 'measured best' '$T/scale-round-1.svg.txt'"
ok "the decision trail's scale round 2 is drawn, its strings as data" \
    sh -c "grep -q '^Scale round 2:' '$T/scale-decision-1.svg.txt' &&
           grep -qF '</text><script>alert(1)</script>' '$T/scale-decision-1.svg.txt' &&
           ! grep -q '<script>' '$P/scale-decision-1.svg'"
R=$P/README.md
ok "README.md lists the plots, the candidate not plotted and the decision it cannot draw" \
    sh -c "grep -q '^## Plots$' '$R' && grep -q '^  - not plotted: baseline: no modeled value' '$R' &&
           grep -q '^- decisions/01-scale.json: scale round 2' '$R' &&
           grep -q '^- \*\*warning\*\*: refused decisions/02-scale.json: not an object' '$R'"
ok "index.html shows each plot and links README.md and pack.json" \
    sh -c "for f in '$P'/*.svg; do grep -q \"<img src=\\\"\${f##*/}\\\"\" '$P/index.html' || exit 1; done &&
           grep -q 'href=\"README.md\"' '$P/index.html' && grep -q 'href=\"pack.json\"' '$P/index.html'"
cp "$P/step-time.svg" "$P/scale-round-1.svg" "$T/"
"$M" report "$S" --pack > "$T/again.out" 2>&1 || diag < "$T/again.out"
ok "a second pack draws the same bytes" \
    sh -c "cmp '$T/step-time.svg' '$P/step-time.svg' && cmp '$T/scale-round-1.svg' '$P/scale-round-1.svg'"
# The pack takes the trail through the contract store, as report and the
# plugin do: a decision edited after it was sealed, or one others may
# write, leaves no trail and no chart of it, only the store's reason.
chmod u+w "$S/decisions" "$S/decisions/01-scale.json"
sed -i 's/"predicted_ms":70/"predicted_ms":7/' "$S/decisions/01-scale.json"
chmod go-w "$S/decisions/01-scale.json"
"$M" report "$S" --pack > "$T/edited.out" 2>&1 || diag < "$T/edited.out"
ok "an edited decision: the pack refuses the trail with the store's reason and draws none of it" \
    sh -c "grep -q '^- \*\*warning\*\*: refused decisions/: decisions/01-scale.json does not match its .sha256' '$R' &&
           ! grep -q '^### Decisions' '$R' && ! test -e '$P/scale-decision-1.svg'"
sed -i 's/"predicted_ms":7,/"predicted_ms":70,/' "$S/decisions/01-scale.json"
chmod g+w "$S/decisions/01-scale.json"
"$M" report "$S" --pack > "$T/mode.out" 2>&1 || diag < "$T/mode.out"
ok "... and so does a decision others may write" \
    sh -c "grep -q '^- \*\*warning\*\*: refused decisions/: .*01-scale.json.*writ' '$R' && ! test -e '$P/scale-decision-1.svg'"
chmod g-w "$S/decisions/01-scale.json"

# Headless Chromium, offline: a screenshot of index.html, decoded with
# zlib and struct alone.
chrome=$(command -v chromium || command -v chromium-browser)
if [ -z "$chrome" ]; then
    echo "# chromium is not installed: sh build-aux/install-deps.sh --test installs it (a test dependency)"
    tap_ok 1 "index.html renders in headless Chromium (chromium missing)"
    tap_ok 1 "... not blank (no picture)"
    tap_ok 1 "... the series colours show (no picture)"
    tap_ok 1 "... the render is timed (no picture)"
    exit 1
fi
start=$(date +%s%N)
timeout 120 "$chrome" --headless --no-sandbox --disable-gpu --disable-quic --no-first-run \
    --disable-background-networking --disable-component-update --disable-sync \
    --user-data-dir="$(mktemp -d "$T/chrome.XXXXXX")" --screenshot="$T/shot.png" \
    --window-size=1200,1600 "file://$P/index.html" > "$T/chrome.out" 2>&1
rc=$? ms=$(( ($(date +%s%N) - start) / 1000000 ))
[ -s "$T/shot.png" ] || rc=1
tap_ok $rc "index.html renders in headless Chromium (${ms} ms)"
[ $rc = 0 ] || tail -5 "$T/chrome.out" | diag
python3 - "$T/shot.png" > "$T/png.out" 2>&1 <<'PY'
import struct, sys, zlib
data = open(sys.argv[1], "rb").read()
assert data[:8] == b"\x89PNG\r\n\x1a\n", "not a PNG"
pos, idat, hdr = 8, b"", None
while pos < len(data):
    n, kind = struct.unpack(">I4s", data[pos:pos + 8])
    body = data[pos + 8:pos + 8 + n]
    if kind == b"IHDR":
        hdr = struct.unpack(">IIBBBBB", body)
    elif kind == b"IDAT":
        idat += body
    pos += 12 + n
w, h, depth, ctype = hdr[:4]
assert depth == 8 and ctype in (2, 6), "unexpected PNG type %d/%d" % (depth, ctype)
bpp = 3 if ctype == 2 else 4
raw, stride = zlib.decompress(idat), w * bpp
prev, rows, i = bytearray(stride), [], 0
for y in range(h):
    f, line = raw[i], bytearray(raw[i + 1:i + 1 + stride]); i += 1 + stride
    for x in range(stride):
        a = line[x - bpp] if x >= bpp else 0
        b, c = prev[x], prev[x - bpp] if x >= bpp else 0
        if f == 1: line[x] = (line[x] + a) & 255
        elif f == 2: line[x] = (line[x] + b) & 255
        elif f == 3: line[x] = (line[x] + (a + b) // 2) & 255
        elif f == 4:
            p = a + b - c; pa, pb, pc = abs(p - a), abs(p - b), abs(p - c)
            line[x] = (line[x] + (a if pa <= pb and pa <= pc else b if pb <= pc else c)) & 255
    rows.append(line); prev = line
def near(px, rgb): return all(abs(px[k] - rgb[k]) <= 24 for k in range(3))
blue = orange = ink = 0
colours = set()
for line in rows:
    for x in range(0, stride, bpp):
        px = line[x:x + 3]
        colours.add(bytes(px))
        if px[0] < 235 or px[1] < 235 or px[2] < 235: ink += 1
        if near(px, (0x1f, 0x77, 0xb4)): blue += 1
        elif near(px, (0xff, 0x7f, 0x0e)): orange += 1
print("%dx%d: %d non-white pixels (%.1f%%), %d colours, blue %d, orange %d" %
      (w, h, ink, 100.0 * ink / (w * h), len(colours), blue, orange))
PY
rc=$?
tap_ok $rc "... the screenshot decodes: $(tail -1 "$T/png.out")"
[ $rc = 0 ] || diag < "$T/png.out"
read -r _ pct colours blue orange <<< "$(sed -n 's/^.*: \([0-9]*\) non-white pixels (\([0-9.]*\)%), \([0-9]*\) colours, blue \([0-9]*\), orange \([0-9]*\)$/\1 \2 \3 \4 \5/p' "$T/png.out")"
ok "... not blank: over 5% of it inked, in over 50 colours" \
    python3 -c "import sys; sys.exit(not (float('${pct:-0}') > 5 and int('${colours:-0}') > 50))"
ok "... the series colours, blue (the baseline, measured) and orange (the winner, measured best), each in over 3000 pixels" \
    test "${blue:-0}" -gt 3000 -a "${orange:-0}" -gt 3000
tap_done
