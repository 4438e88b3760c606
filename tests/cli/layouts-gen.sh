#!/bin/bash
# moeflow layouts and moeflow gen judge a layout by the same rules
# (lib/fit/layouts.c, the one layout checker): for each example study, and
# for Qwen3-30B-A3B (4 query groups) at TP 8 with Transformer Engine,
#   - every layout layouts ranks (the best 8, and for the TP 8 study every
#     TP 8 one), written as the study's baseline, is one gen accepts;
#   - one layout of each rule that layouts excludes, written as the
#     baseline, is one gen refuses, with the text layouts --explain gives.
# The baseline's switches that only some layouts allow (EP overlap, TP
# communication overlap, ...) are turned off in the copies: what is judged
# is the layout, not a switch that needs EP > 1.
. "$MOEFLOW_SRCDIR/tests/integration/lib.sh"
M=$MOEFLOW_BIN
export MOEFLOW_TEMPLATE_DIR=$MOEFLOW_SRCDIR/templates
out=$(mktemp -d) && trap 'rm -rf "$out"' EXIT
studies=("$MOEFLOW_SRCDIR"/etc/studies/*.yaml)
tap_plan $(( 2 * (${#studies[@]} + 1) ))

# Qwen3-30B-A3B has 4 query groups; Megatron takes TP 8 (a multiple of them).
sed 's/^  ep: 16$/  tp: 8\n  ep: 16/' "$MOEFLOW_SRCDIR/etc/studies/qwen3-30b-a3b-16xh100.yaml" \
    > "$out/qwen3-30b-a3b-tp8.yaml"
grep -q '^  tp: 8$' "$out/qwen3-30b-a3b-tp8.yaml" || echo "Bail out! no TP 8 study"

for study in "${studies[@]}" "$out/qwen3-30b-a3b-tp8.yaml"; do
    name=$(basename "$study" .yaml)
    python3 - "$M" "$study" "$out/$name" > "$out/$name.tap" 2>&1 <<'PY'
import json, os, re, subprocess, sys

moeflow, study, work = sys.argv[1:]
os.makedirs(work)
KEYS = ("tp", "cp", "pp", "vpp", "ep", "etp")
SWITCHES = ("ep_overlap", "delay_wgrad", "tp_comm_overlap", "shared_expert_overlap")
# The example studies write baseline: as a block of "  key: value" lines.
lines = open(study).read().splitlines()
top = lines.index("baseline:")
tp8 = "  tp: 8" in lines[top:]

def run(args):
    return subprocess.run([moeflow] + args, capture_output=True, text=True)

def gen(layout, tag):
    """gen's verdict on the study with layout as its baseline: rc, stderr."""
    drop = re.compile(r"  (%s):" % "|".join(KEYS + SWITCHES))
    body = [l for l in lines[top + 1:] if not drop.match(l)]
    path = os.path.join(work, tag + ".yaml")
    with open(path, "w") as f:
        f.write("\n".join(lines[:top + 1] + ["  %s: %d" % (k, layout[k]) for k in KEYS] + body)
                + "\n")
    p = run(["gen", path, "-o", os.path.join(work, tag), "--dry-run", "--stage", "contract"])
    return p.returncode, p.stderr.strip()

def name(l):
    return "TP%d CP%d PP%d VPP%d EP%d ETP%d" % tuple(l[k] for k in KEYS)

p = run(["layouts", study, "--top", "0", "--json", "--excluded"])
ranked = json.loads(p.stdout)
layouts = ranked["layouts"][:8] + [l for l in ranked["layouts"][8:] if tp8 and l["tp"] == 8]
# A ranked layout that fits under no recompute or offload is refused as
# the baseline (exit 3, issue 37): every stage after fit would run it.
bad = 0
for i, l in enumerate(layouts):
    rc, err = gen(l, "ranked%d" % i)
    if (rc, "does not fit" in err) != ((0, False) if l["fits"] else (3, True)):
        bad += 1
        print("# ranked %s (fits: %s): gen exits %d: %s" % (name(l), l["fits"], rc, err))
print("# %d ranked layouts, %d of them TP 8, %d fit" % (len(layouts),
      sum(l["tp"] == 8 for l in layouts), sum(l["fits"] for l in layouts)))
print("%sok - %s: gen accepts every ranked layout that fits as the baseline, and refuses one "
      "that does not" % ("not " if bad else "", os.path.basename(study)))

# The text of each excluded layout, from the --excluded listing.
text = run(["layouts", study, "--top", "1", "--excluded"]).stdout
why = {}
for line in text.splitlines():
    m = re.match(r"  tp(\d+)\.cp(\d+)\.pp(\d+)\.vpp(\d+)\.ep(\d+)\.etp(\d+) +(\S+) +(.*)", line)
    if m:
        why[tuple(int(x) for x in m.groups()[:6])] = (m.group(7), m.group(8))
bad, seen = 0, set()
for l in ranked["excluded"]:
    if l["rule"] in seen:
        continue
    seen.add(l["rule"])
    rule, reason = why[tuple(l[k] for k in KEYS)]
    rc, err = gen(l, "excluded-" + re.sub(r"[^a-z]", "_", rule))
    if rc != 2 or reason not in err:
        bad += 1
        print("# excluded %s (%s: %s): gen exits %d: %s" % (name(l), rule, reason, rc, err))
print("# rules: %s" % " ".join(sorted(seen)))
print("%sok - %s: gen refuses one layout of each excluding rule, as layouts explains it" %
      ("not " if bad or not seen else "", os.path.basename(study)))
PY
    # the two result lines, renumbered; the rest are diagnostics
    while IFS= read -r line; do
        case $line in
        "ok - "*) tap_ok 0 "${line#ok - }" ;;
        "not ok - "*) tap_ok 1 "${line#not ok - }" ;;
        *) echo "$line" | sed 's/^# //' | diag ;;
        esac
    done < "$out/$name.tap"
done
[ "$TAP_N" -eq $(( 2 * (${#studies[@]} + 1) )) ] || echo "Bail out! $TAP_N results"
tap_done
