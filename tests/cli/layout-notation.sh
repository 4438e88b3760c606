#!/bin/bash
# Issue 40: one layout notation and one flag vocabulary.  Every command that
# takes a layout reads the dotted form tp1.cp1.pp2.vpp3.ep8.etp1 (a part left
# out is 1) and every command that prints one prints it in full, so a layout
# printed by one command is read back by another as the same layout; the
# older tp=2,ep=8 is read with one note naming its dotted spelling.  Each
# renamed option's older name or spelling is read with a note, once.
: "${MOEFLOW_SRCDIR:?run through make check}" "${MOEFLOW_BIN:?run through make check}"
. "$MOEFLOW_SRCDIR/tests/integration/lib.sh"
M=$MOEFLOW_BIN
D=$MOEFLOW_SRCDIR/tests/data
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
tap_plan 22

Q=(--preset qwen3-30b-a3b --gpus 16 --seq 4096 --mbs 1 --gbs 256)
DOTTED='tp[0-9]+\.cp[0-9]+\.pp[0-9]+\.vpp[0-9]+\.ep[0-9]+\.etp[0-9]+'
NOTE='^moeflow: note: '

# The number of lines of file $1 matching ERE $2.
count() { grep -cE -- "$2" "$1"; }

# --- place -------------------------------------------------------------------
"$M" place --nodelist 'n[1-8]' --gpus-per-node 4 --layout tp2.pp2.ep8 >"$T/p1" 2>"$T/p1.err"
tap_ok $? "place reads the dotted form, a part left out 1"
has "$T/p1" '^layout: tp2\.cp1\.pp2\.vpp1\.ep8\.etp1 \(dp=8 edp=2\)$' && hasnt "$T/p1.err" .
tap_ok $? "... prints all six parts, no note"
"$M" place --nodelist 'n[1-8]' --gpus-per-node 4 --layout tp=2,pp=2,ep=8,etp=1 >"$T/p2" 2>"$T/p2.err"
cmp -s "$T/p1" "$T/p2" && [ "$(count "$T/p2.err" "$NOTE")" -eq 1 ] &&
    has "$T/p2.err" "${NOTE}--layout tp=2,pp=2,ep=8,etp=1 is the older form; write tp2\.cp1\.pp2\.vpp1\.ep8\.etp1"
tap_ok $? "place reads the older key=value form as the same plan, with one note giving the dotted spelling"
"$M" place --nodelist 'n[1-8]' --gpus-per-node 4 --layout tp1.cp1.pp2.vpp3.ep8.etp1 -o "$T/h1" >/dev/null &&
    "$M" place --nodelist 'n[1-8]' --gpus-per-node 4 --layout tp1.cp1.pp2.vpp3.ep8.etp1 \
        --hostfile "$T/h2" >/dev/null && cmp -s "$T/h1" "$T/h2" && [ "$(wc -l < "$T/h1")" -eq 32 ]
tap_ok $? "place -o FILE writes the hostfile, as --hostfile FILE does"
"$M" place --nodelist 'n[1-8]' --gpus-per-node 4 --layout tp2.xp2.ep8 >/dev/null 2>"$T/bad"
[ $? -eq 2 ] && has "$T/bad" "^moeflow: tp2\.xp2\.ep8:1:5: 'xp2' is not a layout component" &&
    has "$T/bad" 'expected e\.g\. tp1\.cp1\.pp2\.vpp3\.ep8\.etp1'
tap_ok $? "a bad part exits 2 naming the part, its column and the form to write"
"$M" place --nodelist 'n[1-8]' --gpus-per-node 4 --layout tp2.ep8.pp2 >/dev/null 2>"$T/order"
[ $? -eq 2 ] && has "$T/order" 'pp is out of order'
tap_ok $? "parts out of order are refused: a printed layout has one spelling"

# --- fit ---------------------------------------------------------------------
"$M" fit "${Q[@]}" --layout tp2.pp2.ep4 >"$T/f1" 2>"$T/f1.err"
tap_ok $? "fit --layout reads the dotted form"
has "$T/f1" '^layout  tp2\.cp1\.pp2\.vpp1\.ep4\.etp1   Attention: TP2×CP1×DP4×PP2   MoE: ETP1×EP4×EDP2×PP2$' &&
    hasnt "$T/f1.err" .
tap_ok $? "... and prints it in full before both grids"
"$M" fit "${Q[@]}" --layout tp=2,pp=2,ep=4,etp=1 >"$T/f2" 2>"$T/f2.err"
cmp -s "$T/f1" "$T/f2" && [ "$(count "$T/f2.err" "$NOTE")" -eq 1 ]
tap_ok $? "fit --layout reads the older form as the same layout, with one note"
"$M" fit "${Q[@]}" --tp 2 --pp 2 --ep 4 >"$T/f3" 2>/dev/null
cmp -s "$T/f1" "$T/f3"
tap_ok $? "fit --tp/--pp/--ep set the same layout, part by part"
"$M" fit "${Q[@]}" --layout tp2.pp2.ep4 -j >"$T/f.json"
python3 -c 'import json,sys; sys.exit(json.load(open(sys.argv[1]))["layout"]["name"] != "tp2.cp1.pp2.vpp1.ep4.etp1")' "$T/f.json"
tap_ok $? "fit -j gives the layout's name in the notation (layout.name)"
"$M" fit "${Q[@]}" >"$T/f4" 2>&1
has "$T/f4" "^layout  $DOTTED   Attention: "
tap_ok $? "fit without a layout prints the one it picked in the notation"

# --- layouts, round trip ----------------------------------------------------
"$M" layouts "${Q[@]}" --top 3 --excluded >"$T/l" 2>&1
[ "$(count "$T/l" "^  [0-9]  $DOTTED +Attention: ")" -eq 3 ] && has "$T/l" "^  $DOTTED +vpp-needs-pp "
tap_ok $? "layouts prints each ranked and each excluded layout in the notation"
names=$(sed -nE "s/^  [0-9]  ($DOTTED) .*/\1/p" "$T/l")
bad=$([ "$(echo $names | wc -w)" -eq 3 ]; echo $?)
for name in $names; do
    "$M" fit "${Q[@]}" --layout "$name" 2>&1 | grep -q "^layout  $name " || bad=1
    "$M" place --nodelist 'n[1-4]' --gpus-per-node 4 --layout "$name" 2>&1 |
        grep -q "^layout: $name " || bad=1
done
tap_ok $bad "each layout layouts prints is read back by fit --layout and place --layout as itself"
"$M" layouts "${Q[@]}" --json >"$T/l.json"
python3 -c '
import json, re, sys
d = json.load(open(sys.argv[1]))
sys.exit(not d["layouts"] or any(l["name"] != "tp%(tp)d.cp%(cp)d.pp%(pp)d.vpp%(vpp)d.ep%(ep)d.etp%(etp)d" % l
                                 for l in d["layouts"]))' "$T/l.json"
tap_ok $? "layouts --json names every layout in the notation, matching its parts"
"$M" layouts "${Q[@]}" --layout tp2.ep8 >/dev/null 2>"$T/lr"
[ $? -eq 1 ] && has "$T/lr" 'layouts enumerates layouts itself; check one with moeflow fit --layout'
tap_ok $? "layouts refuses --layout and points at fit --layout"

# --- the vocabulary's older names --------------------------------------------
"$M" diagnose --capacity-gib 80 --list memory >"$T/d1" 2>"$T/d1.err" &&
    "$M" diagnose --gpu-mem-gib 80 --list memory >"$T/d2" 2>"$T/d2.err"
[ $? -eq 0 ] && cmp -s "$T/d1" "$T/d2" && hasnt "$T/d2.err" . &&
    has "$T/d1.err" "${NOTE}--capacity-gib is read as --gpu-mem-gib; write --gpu-mem-gib$"
tap_ok $? "diagnose --gpu-mem-gib; --capacity-gib is read with a note"
"$M" diagnose --capacity-gib 80 --capacity-gib 90 --list memory >/dev/null 2>"$T/d3"
[ "$(count "$T/d3" "$NOTE")" -eq 1 ]
tap_ok $? "... the note once a run"
"$M" overlap --window 1-2 "$D/traces/synthetic-2gpu.json" >"$T/o1" 2>"$T/o1.err" &&
    "$M" overlap --window steps=1-2 "$D/traces/synthetic-2gpu.json" >"$T/o2" 2>"$T/o2.err"
[ $? -eq 0 ] && cmp -s "$T/o1" "$T/o2" && hasnt "$T/o1.err" . &&
    has "$T/o2.err" "${NOTE}--window steps=A-B is read as --window A-B"
tap_ok $? "overlap --window A-B as report writes it; steps=A-B is read with a note"
"$M" report --window steps=41-50 "$T/none.log" >/dev/null 2>"$T/r.err"
has "$T/r.err" "${NOTE}--window steps=A-B is read as --window A-B" && hasnt "$T/r.err" 'expected A-B'
tap_ok $? "report --window reads steps=A-B with the same note"
"$M" topo --xml "$D/topology/mpibind-g4dnmetal.xml" --step-gpus 0,1 >"$T/t1" 2>"$T/t1.err" &&
    "$M" topo --xml "$D/topology/mpibind-g4dnmetal.xml" --gpus 0,1 >"$T/t2" 2>"$T/t2.err"
[ $? -eq 0 ] && cmp -s "$T/t1" "$T/t2" && hasnt "$T/t1.err" . &&
    has "$T/t2.err" "${NOTE}--gpus LIST is read as --step-gpus LIST"
tap_ok $? "topo --step-gpus LIST; --gpus LIST (a count elsewhere) is read with a note"
"$M" overlap -s P "$D/traces/synthetic-2gpu.json" >/dev/null 2>&1
[ $? -eq 1 ]
tap_ok $? "overlap has no -s: -s is --stage wherever it is taken"
tap_done
