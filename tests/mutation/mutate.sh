#!/bin/bash
# make mutate: does each test tell its rule from the rule's mutant?
#
#   tests/mutation/mutate.sh SRCDIR [ID...]
#
# Reads tests/mutation/mutations.tsv (see README.md beside this file).  The
# source tree is copied once into a scratch folder (MUTATE_DIR, default
# /tmp/moeflow-mutate-$USER) and built there once; each mutation is then
# applied to that copy, never to SRCDIR, `make` rebuilds what it touched,
# and the tests the row names run.  A mutant they do not kill runs the
# whole unit + CLI list before it is called a survivor.  The original file
# is put back before the next mutation.
#
# Writes the report to MUTATE_REPORT (default SRCDIR/tests/mutation/
# report.txt when every mutation ran, else MUTATE_DIR/report.txt) and ends
# with the line "N mutations, K killed".  Exits 1 when a mutation no longer
# applies (its snippet is not in the file exactly once) or does not build,
# when a survivor has no explanation in the row's last column, or when
# fewer than MUTATE_MIN_PCT (90) percent are killed.  MUTATE_NAMED_ONLY=1
# skips the whole-list run of survivors (quicker, for drafting a row);
# MUTATE_LIST names another list.
set -u
src=$(cd "${1:?usage: mutate.sh SRCDIR [ID...]}" && pwd) || exit 2
shift
only=" $* "
list=${MUTATE_LIST:-$src/tests/mutation/mutations.tsv}
W=${MUTATE_DIR:-/tmp/moeflow-mutate-${USER:-$(id -un)}}
jobs=${MUTATE_JOBS:-2}
min_pct=${MUTATE_MIN_PCT:-90}
limit=${MUTATE_TIMEOUT_S:-900}
# shellcheck disable=SC2016 # make expands these
full_tests='$(UNIT_TESTS) $(CLI_TESTS)'
log=$W/mutate.log
say() { echo "mutate: $*" >&2; }

case $W in
    *[[:space:]]*) say "MUTATE_DIR '$W' holds a space: autotools cannot build there"; exit 2 ;;
esac
mkdir -p "$W/src" "$W/build" || exit 2
: > "$log"

# The rows, one a line, fields separated by US (0x1f: a tab in IFS would
# merge an empty field with its neighbour): id, file, original,
# replacement, tests, reason, survivor note; \t \n \\ in the snippets are
# tab, newline and backslash, undone by apply.
rows() {
    python3 - "$list" <<'PY'
import sys
for n, line in enumerate(open(sys.argv[1], encoding="utf-8"), 1):
    line = line.rstrip("\n")
    if not line or line.startswith("#"):
        continue
    f = line.split("\t")
    if len(f) != 7:
        sys.exit(f"{sys.argv[1]}:{n}: {len(f)} fields, want 7")
    print("\x1f".join(f))
PY
}

# apply FILE ORIGINAL REPLACEMENT: exactly one occurrence, else exit 3.
apply() {
    python3 - "$@" <<'PY'
import sys
def unescape(s):
    out, i = [], 0
    while i < len(s):
        if s[i] == "\\" and i + 1 < len(s) and s[i + 1] in "tn\\":
            out.append({"t": "\t", "n": "\n", "\\": "\\"}[s[i + 1]]); i += 2
        else:
            out.append(s[i]); i += 1
    return "".join(out)
path, old, new = sys.argv[1], unescape(sys.argv[2]), unescape(sys.argv[3])
text = open(path, encoding="utf-8").read()
if text.count(old) != 1:
    print(f"{text.count(old)} occurrences", file=sys.stderr)
    sys.exit(3)
open(path, "w", encoding="utf-8").write(text.replace(old, new))
PY
}

# The tree as git sees it (tracked and untracked, not ignored), copied over
# the scratch copy file by file so that unchanged files keep their mtime
# and the scratch build stays incremental.
sync_tree() {
    local f
    # a copy from before the list was kept: start it afresh
    if [ ! -f "$W/synced.list" ] && [ -n "$(ls -A "$W/src")" ]; then
        rm -rf "$W/src" "$W/build" && mkdir -p "$W/src" "$W/build" || return 1
    fi
    (cd "$src" && git ls-files -z -co --exclude-standard) > "$W/synced.new" || return 1
    # what an earlier copy took and the tree no longer has (a golden file
    # renamed with its candidate id) goes, or a diff against the folder fails
    if [ -f "$W/synced.list" ]; then
        sort -z "$W/synced.list" > "$W/synced.old"
        sort -z "$W/synced.new" | comm -z -23 "$W/synced.old" - |
            while IFS= read -r -d '' f; do rm -f "$W/src/$f"; done
    fi
    while IFS= read -r -d '' f; do
        [ -f "$src/$f" ] || continue
        if ! cmp -s "$src/$f" "$W/src/$f"; then
            mkdir -p "$(dirname "$W/src/$f")" && cp -p "$src/$f" "$W/src/$f"
        fi
    done < "$W/synced.new"
    mv "$W/synced.new" "$W/synced.list"
}

# The failing test points of the last make check, "TEST N" a line (ERROR
# for a script that crashed or broke its plan), from the logs.
failed_points() {
    (cd "$W/build" && find tests -name '*.trs' | sed 's/\.trs$//' | sort | while read -r t; do
        # automake's own lines name the test; a program's "ERROR: ..." does not
        grep -E "^(FAIL|XPASS|ERROR): $t(\.sh)? " "$t.log" |
            sed -nE 's/^(FAIL|XPASS): ([^ ]+) ([0-9]+) .*/\2 \3/p; s/^ERROR: ([^ ]+) .*/\1 ERROR/p'
    done) 2>/dev/null | sort -u
}

# What a mutant broke: the failing points the unmutated tree does not have.
new_failures() {
    failed_points | comm -23 - "$W/baseline-failures" | awk '{print $1}' | sort -u | tr '\n' ' '
}

run_check() {  # run_check TESTS: 0 when no point failed that passes unmutated
    (cd "$W/build" && find tests -name '*.trs' -delete 2>/dev/null
     timeout -k 10 "$limit" make -j"$jobs" check TESTS="$1") >> "$log" 2>&1
    local rc=$?
    [ "$rc" -eq 124 ] || [ "$rc" -eq 137 ] && return 1   # a hang is a kill
    [ -z "$(new_failures)" ]
}

# The named tests only: the programs and the CLI, not every check program
# (relinking them all is most of a mutation's time).  A CLI test that runs
# another check program then runs the unmutated one: at worst a kill is
# missed here, and the whole list, which rebuilds everything, runs next.
progs_of() {  # the unit test programs among TESTS
    local t
    for t in $1; do case $t in *.sh) ;; *) printf ' %s' "$t" ;; esac; done
}

# The programs still linked with the previous mutant: rebuilt with the
# next mutant's build rather than at once, one link instead of two.
dirty=""

run_named() {  # run_named TESTS: one test at a time, in the row's order, up to the first kill
    local progs t rc
    progs=$(progs_of "$1")
    # shellcheck disable=SC2086 # lists of programs
    (cd "$W/build" && make -j"$jobs" all $progs $dirty) >> "$log" 2>&1 || return 2
    dirty=$progs
    for t in $1; do
        (cd "$W/build" && find tests -name '*.trs' -delete 2>/dev/null
         timeout -k 10 "$limit" make check-TESTS TESTS="$t" check_PROGRAMS="$progs") >> "$log" 2>&1
        rc=$?
        [ "$rc" -eq 124 ] || [ "$rc" -eq 137 ] && { echo "$t" > "$W/hung"; return 1; }
        [ -z "$(new_failures)" ] || return 1
    done
    return 0
}

tree=$(cd "$src" && git describe --always --dirty 2>/dev/null)   # before the report is written
say "copying $src into $W/src"
sync_tree || exit 2
if [ ! -f "$W/build/Makefile" ]; then
    say "configuring the scratch build"
    (cd "$W/src" && autoreconf -fi && cd "$W/build" && "$W/src/configure") >> "$log" 2>&1 ||
        { say "configure failed, see $log"; exit 2; }
fi
# every check program, so that none a CLI test runs is missing
(cd "$W/build" && make -j"$jobs" && make -j"$jobs" check TESTS=) >> "$log" 2>&1 ||
    { say "the unmutated tree does not build, see $log"; exit 2; }
# The unmutated tree's own failures (a test may fail for a reason the
# project has yet to decide on): they are not kills.
: > "$W/baseline-failures"
if [ -z "${MUTATE_NO_BASELINE:-}" ]; then
    say "the unmutated tree: unit and CLI tests"
    run_check "$full_tests"
    failed_points > "$W/baseline-failures"
    [ -s "$W/baseline-failures" ] &&
        say "the unmutated tree fails $(wc -l < "$W/baseline-failures") test points, not counted as kills: $(tr '\n' ',' < "$W/baseline-failures")"
elif [ -f "$W/baseline-failures.kept" ]; then
    cp "$W/baseline-failures.kept" "$W/baseline-failures"
fi
cp "$W/baseline-failures" "$W/baseline-failures.kept"

# Every test a row names must be one of the unit or CLI tests: a name that
# is not would fail make check and pass for a kill.
# shellcheck disable=SC2016 # make expands these
known=" $(cd "$W/build" && printf 'print-tests:\n\t@echo $(UNIT_TESTS) $(CLI_TESTS)\n' |
          make -s -f Makefile -f - print-tests 2>/dev/null) "
[ "$known" != "  " ] || { say "cannot list the tests of $W/build"; exit 2; }

n=0 killed=0 bad=0 unexplained=0 ran_all=1
body=$W/report.body
: > "$body" && : > "$W/survivors"
started=$(date +%s)
# the rows come on fd 3: a test that reads its standard input must not eat them
while IFS=$'\x1f' read -r -u 3 id file old new tests reason _; do  # _: the note, read at the end
    if [ "$only" != "  " ] && [[ "$only" != *" $id "* ]]; then
        ran_all=0
        continue
    fi
    n=$((n + 1))
    t0=$(date +%s)
    cp -p "$W/src/$file" "$W/orig" || { say "$id: no $file"; exit 2; }
    unknown=""
    for t in $tests; do [[ "$known" == *" $t "* ]] || unknown="$unknown $t"; done
    if [ -n "$unknown" ]; then
        status="STALE (not a unit or CLI test:$unknown)"
        bad=$((bad + 1))
    elif ! err=$(apply "$W/src/$file" "$old" "$new" 2>&1); then
        status="STALE ($err of the snippet in $file)"
        bad=$((bad + 1))
    elif ! (cd "$W/build" && make -j"$jobs") >> "$log" 2>&1; then
        status="BUILD-FAILED"
        bad=$((bad + 1))
    elif rm -f "$W/hung" && ! run_named "$tests"; then
        # 2: a test program did not build
        if [ -f "$W/hung" ]; then
            status="killed by a hang of $(cat "$W/hung")"
            killed=$((killed + 1))
        elif [ -z "$(new_failures)" ]; then
            status="BUILD-FAILED (a test program)"
            bad=$((bad + 1))
        else
            status="killed by $(new_failures)"
            killed=$((killed + 1))
        fi
    elif [ -z "${MUTATE_NAMED_ONLY:-}" ] && ! run_check "$full_tests"; then
        status="killed (not by its named tests) by $(new_failures)"
        killed=$((killed + 1))
    else
        # explained when the report is written (explain, below)
        status="SURVIVED"
        printf '%s\x1f%s\x1f%s\x1f%s\x1f%s\n' "$id" "$file" "$old" "$new" "$tests" >> "$W/survivors"
    fi
    # Back to the original, with a new mtime; every program the mutant was
    # linked into is rebuilt before a later test can run it.
    cp "$W/orig" "$W/src/$file" && touch "$W/src/$file"
    case $status in
        killed\ \(not*|SURVIVED*)  # the whole list ran: every program has the mutant
            if [ -z "${MUTATE_NAMED_ONLY:-}" ]; then
                (cd "$W/build" && make -j"$jobs" && make -j"$jobs" check TESTS=) >> "$log" 2>&1
                dirty=""
            fi ;;
    esac
    status=${status% }
    printf '%-26s %s\n    %s\n    %s (%ss)\n' "$id" "$file" "$reason" "$status" \
        $(( $(date +%s) - t0 )) >> "$body"
    say "$id: $status"
done 3< <(rows) < /dev/null
(cd "$W/build" && make -j"$jobs" && make -j"$jobs" check TESTS=) >> "$log" 2>&1

# A survivor's explanation is read from the list as it is when the run
# ends (a long run's survivors can be looked into while it goes on), for
# a row whose mutation (file, snippets, tests) is still the one that ran;
# a row changed since is reported as such and fails the run.
explain() {
    python3 - "$list" "$W/survivors" "$body" <<'PY'
import sys
rows = {}
for line in open(sys.argv[1], encoding="utf-8"):
    f = line.rstrip("\n").split("\t")
    if len(f) == 7 and not line.startswith("#"):
        rows[f[0]] = f
ran = {}
for line in open(sys.argv[2], encoding="utf-8"):
    f = line.rstrip("\n").split("\x1f")
    ran[f[0]] = f
out, unexplained, cur = [], 0, None
for line in open(sys.argv[3], encoding="utf-8"):
    if not line.startswith(" "):
        cur = line.split()[0]
    elif line.strip().startswith("SURVIVED (") and line.strip()[9:].startswith("(") and cur in ran:
        row = rows.get(cur)
        t = line.rstrip("\n").rsplit(" (", 1)[1]
        if not row or row[1:5] != ran[cur][1:5]:
            line, unexplained = f"    SURVIVED (its row changed after the run: run it again) ({t}\n", unexplained + 1
        elif row[6]:
            line = f"    SURVIVED: {row[6]} ({t}\n"
        else:
            line, unexplained = f"    SURVIVED (unexplained) ({t}\n", unexplained + 1
    out.append(line)
open(sys.argv[3], "w", encoding="utf-8").writelines(out)
print(unexplained)
PY
}
unexplained=$(explain) || { say "cannot explain the survivors"; exit 2; }

report=${MUTATE_REPORT:-}
[ -n "$report" ] || { [ "$ran_all" = 1 ] && report=$src/tests/mutation/report.txt || report=$W/report.txt; }
{
    echo "# make mutate: tests/mutation/mutations.tsv against the unit and CLI tests"
    echo "# tree: $tree, $(( $(date +%s) - started )) s on $(nproc) CPUs"
    if [ -n "${MUTATE_NAMED_ONLY:-}" ]; then
        echo "# MUTATE_NAMED_ONLY: each mutant ran its row's tests only, a survivor not the whole list"
    else
        echo "# each mutant ran its row's tests, a survivor then every unit and CLI test"
    fi
    if [ -s "$W/baseline-failures" ]; then
        echo "# failing before any mutation, so not counted as kills: $(tr '\n' ',' < "$W/baseline-failures" | sed 's/,$//')"
    fi
    echo
    cat "$body"
    echo
    echo "survivors:"
    grep -B2 '^    SURVIVED' "$body" | grep -vE '^--$' | awk 'NR % 3 == 1 { printf "  %s\n", $1 } NR % 3 == 0 { sub(/^    /, "    "); print }'
    grep -q '^    SURVIVED' "$body" || echo "  none"
    echo
    echo "$n mutations, $killed killed"
} > "$report"
say "report: $report"
tail -n 1 "$report"
[ "$bad" -eq 0 ] || { say "$bad mutations no longer apply or build"; exit 1; }
[ "$unexplained" -eq 0 ] || { say "$unexplained survivors without an explanation"; exit 1; }
if [ "$n" -eq 0 ] || [ $((killed * 100)) -lt $((n * min_pct)) ]; then
    say "fewer than $min_pct% killed"
    exit 1
fi
exit 0
