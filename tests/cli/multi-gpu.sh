#!/bin/bash
# Multi-GPU truth on record (issue 26): the 2xH200 runs of
# tests/gpu/multi-gpu/ replayed.  Today's gen must write the same jobs (a
# changed argv, environment or shape is stale evidence), the table must follow from the
# archived logs byte for byte, and the fit stage (one GPU, fake process
# group), the real 2-GPU runs and the memory model must agree within 10%.
# The step-time rows are on record as measured; their gap is in the table.
. "$MOEFLOW_SRCDIR/tests/integration/lib.sh"
tap_plan 4
S=$MOEFLOW_SRCDIR
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
tar -xJf "$S/tests/data/gpu/multi-gpu.tar.xz" -C "$tmp" || exit 1

stale=
for study in "$S"/tests/gpu/multi-gpu/studies/*.yaml; do
    name=$(basename "$study" .yaml)
    "$MOEFLOW_BIN" gen --templates "$S/templates" "$study" -o "$tmp/regen-$name" > /dev/null 2>&1
    for f in "$tmp/regen-$name" "$tmp/$name"; do
        # The job each candidate runs (argv, environment, shape), not its id:
        # an id hashes the whole contract, whose note carries the model's
        # predicted step, so a step-time model change alone would mark the
        # runs stale.
        python3 -c 'import json, sys
m = json.load(open(sys.argv[1] + "/manifest.json"))
keys = ("stage", "variable", "value", "argv", "env", "nodes", "tasks_per_node", "world_size")
print("\n".join(sorted(json.dumps([c.get(k) for k in keys]) for s in m["stages"]
                       if s["stage"] in ("fit", "scale") for c in s["candidates"])))' "$f" > "$f.ids"
    done
    cmp -s "$tmp/regen-$name.ids" "$tmp/$name.ids" || stale="$stale $name"
done
[ -z "$stale" ]
tap_ok $? "today's gen writes the same fit and scale jobs as the runs on record${stale:+ (stale:$stale; re-run tests/gpu/multi-gpu.sh)}"

MOEFLOW_BIN=$MOEFLOW_BIN bash "$S/tests/gpu/multi-gpu.sh" table "$tmp" > "$tmp/table.tsv"
ok "the table follows from the archived logs (tests/gpu/multi-gpu.tsv), byte for byte" \
    cmp "$S/tests/gpu/multi-gpu.tsv" "$tmp/table.tsv"
diff "$S/tests/gpu/multi-gpu.tsv" "$tmp/table.tsv" | diag

awk -F'\t' 'NR > 1 { e = $6 < 0 ? -$6 : $6; if (e > 10) bad = bad " " $3 }
    END { if (bad != "") { print "outside 10%:" bad; exit 1 } }' "$S/tests/gpu/multi-gpu.tsv" | diag
tap_ok "${PIPESTATUS[0]}" "every fit-stage and real run's peak is within 10% of the memory model"

# The fit stage's rank-0 peak against the real run of the same layout.
fit=$(awk -F'\t' '$2 == "fit" && $3 == "recompute=none" { print $4 }' "$S/tests/gpu/multi-gpu.tsv")
real=$(awk -F'\t' '$2 == "scale" && $3 == "baseline" { print $4 }' "$S/tests/gpu/multi-gpu.tsv")
awk -v f="$fit" -v r="$real" 'BEGIN { d = (f - r) / r; exit !(f > 0 && r > 0 && d < 0.10 && d > -0.10) }'
tap_ok $? "the fit stage's fake-process-group peak ($fit MiB) is within 10% of the real EP2 run's ($real MiB)"
