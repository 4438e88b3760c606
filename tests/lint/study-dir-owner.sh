#!/bin/sh
# The study folder's layout has one owner, lib/core/study_dir.h: no string
# literal in lib/, gen/ or spank/, and no line of a job script template
# that is not a comment, spells one of its paths (results/, contracts/,
# contract/, runs/, winners/, decisions/, the evidence pack, manifest.json,
# run-state.json, launch.log) or MOEFLOW_INDEX_OFFSET, nor a folder's bare
# name as a path component ("%s/runs", "results/runs", "winners" given to
# moe_path_join); the templates get them from the renderer ({{layout.*}}).  Each stray copy is named
# FILE:LINE.  The last three points plant a copy in a scratch file of each
# kind and expect it named, so the check cannot pass by reading nothing.
: "${MOEFLOW_SRCDIR:?run through make check}"
S=$MOEFLOW_SRCDIR
SCAN=$S/tests/lint/study-dir-owner.pl

# shellcheck source=tests/lint/tap.sh
. "$S/tests/lint/tap.sh"

W=$(mktemp -d) || exit 99
trap 'rm -rf "$W"' EXIT

files=$(cd "$S" && ls lib/*/*.[ch] gen/*.[ch] spank/*.[ch] templates/*.in |
        grep -v '^lib/core/study_dir\.[ch]$')
n=$(echo "$files" | wc -l)
[ "$n" -gt 100 ]
tap_ok $? "the scan reads lib/, gen/, spank/ and templates/ ($n files)"

(cd "$S" && perl "$SCAN" $files) > "$W/strays" 2>&1
rc=$?
[ $rc -eq 0 ] && [ ! -s "$W/strays" ]
tap_ok $? "no study-folder path or shared variable is spelled outside core/study_dir.h"
diag < "$W/strays"

(cd "$S" && perl "$SCAN" lib/core/study_dir.h) > "$W/owner" 2>&1
[ -s "$W/owner" ]
tap_ok $? "the owner itself spells them (the patterns match what they guard)"

cat > "$W/planted.c" <<'C'
/* a comment naming results/ and runs/ is no code */
#include "contract/contract.h"
static const char *p = "a" "%s/results/%s/%s.rc";
C
perl "$SCAN" "$W/planted.c" > "$W/out.c" 2>&1
[ $? -ne 0 ] && grep -q "planted.c:3: " "$W/out.c" && [ "$(wc -l < "$W/out.c")" -eq 1 ]
tap_ok $? "a planted path in a C string is named FILE:LINE, comments and includes are not"
diag < "$W/out.c"

cat > "$W/bare.c" <<'C'
static const char *msg = "%s/decisions: out of memory";
static char *w(const char *s) { return moe_path_join(s,
                                                     "winners"); }
static int k(json_t *o) { return json_object_set_new(o, "runs", json_array()); }
static const char *doc = "results/runs and winners, as words";
C
perl "$SCAN" "$W/bare.c" > "$W/out.bare" 2>&1
[ $? -ne 0 ] && grep -q "bare.c:1: " "$W/out.bare" && grep -q "bare.c:3: " "$W/out.bare" &&
    grep -q "bare.c:5: " "$W/out.bare" && [ "$(wc -l < "$W/out.bare")" -eq 3 ]
tap_ok $? "a folder's bare name as a path component (\"%s/decisions\", a path call's \"winners\", results/runs) is named; a JSON key \"runs\" is not"
diag < "$W/out.bare"

printf '# runs/ in a comment\nindex=$(( ${MOEFLOW_INDEX_OFFSET:-0} ))\n' > "$W/planted.sbatch.in"
perl "$SCAN" "$W/planted.sbatch.in" > "$W/out.in" 2>&1
[ $? -ne 0 ] && grep -q "planted.sbatch.in:2: " "$W/out.in" && [ "$(wc -l < "$W/out.in")" -eq 1 ]
tap_ok $? "a planted variable in a template line is named FILE:LINE, a comment is not"
diag < "$W/out.in"

echo "1..$TAP_N"
[ "$TAP_FAILED" -eq 0 ]
