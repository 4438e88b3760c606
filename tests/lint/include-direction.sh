#!/bin/sh
# lib/ folders include one way only: the table under "Include direction" in
# lib/README.md says which folders each one (and spank/) may include.  Every
# #include "FOLDER/..." in a listed folder must name the folder itself or
# one its row allows; a bare #include "x.h" must be a file next to the
# includer (config.h aside), so nothing reaches lib/ around the table.  The
# table itself must be acyclic.  The last point plants a wrong include in a
# scratch tree and expects the check to catch it, so the check cannot pass
# by reading nothing.
: "${MOEFLOW_SRCDIR:?run through make check}"
S=$MOEFLOW_SRCDIR

# shellcheck source=tests/lint/tap.sh
. "$S/tests/lint/tap.sh"

# "DIR ALLOWED..." per row of the table, e.g. "lib/study core contract fit".
rules() {
    awk '/^## Include direction/ { on = 1; next } /^## / { on = 0 }
         on && /^\| `[a-z\/]+` \|/ {
             split($0, col, "|"); row = col[2]; allow = col[3]
             gsub(/[` ]/, "", row); gsub(/`/, "", allow)
             print row, allow }' "$1/lib/README.md"
}

# Prints one line per include against the rules of tree $1; empty = clean.
violations() {
    rules "$1" | while read -r dir allow; do
        self=${dir##*/}
        for f in "$1/$dir"/*.[ch]; do
            [ -f "$f" ] || continue
            grep -n '^[[:space:]]*#[[:space:]]*include[[:space:]]*"' "$f" |
                sed -E 's/^([0-9]+):.*#[[:space:]]*include[[:space:]]*"([^"]*)".*/\1 \2/' |
                while read -r line inc; do
                    case $inc in
                    config.h) continue ;;
                    */*) top=${inc%%/*}
                         case " $self $allow " in *" $top "*) continue ;; esac ;;
                    *) [ -f "$(dirname "$f")/$inc" ] && continue ;;
                    esac
                    echo "${f#"$1"/}:$line: includes \"$inc\" ($dir may include: $self ${allow:-nothing else})"
                done
        done
    done
}

# A folder's private header, FOLDER/NAME_internal.h, declares what the
# folder's files share among themselves: only lib/FOLDER and the tests
# (unit tests, fuzz and bench harnesses drive one reader or one step
# directly) may include it; never another folder, gen/ or spank/.  Prints
# one line per other includer.
private_violations() {
    (cd "$1" && grep -rnE '^[[:space:]]*#[[:space:]]*include[[:space:]]*"[a-z]+/[a-z0-9_]+_internal\.h"' \
        --include='*.c' --include='*.h' lib gen spank tests 2>/dev/null) |
        sed -E 's/^([^:]*):([0-9]+):.*"([a-z]+)\/([a-z0-9_]+_internal\.h)".*/\1 \2 \3 \4/' |
        while read -r f line top name; do
            case $f in lib/"$top"/*|tests/*) continue ;; esac
            echo "$f:$line: includes \"$top/$name\", private to lib/$top"
        done
}

rows=$(rules "$S")
echo "1..$(( $(echo "$rows" | wc -l) + 5 ))"

folders=$(echo "$rows" | awk '{print $1}' | tr '\n' ' ')
[ "$folders" = "lib/core lib/topology lib/contract lib/fit lib/study lib/analysis lib/loop spank " ]
tap_ok $? "lib/README.md's table has a row for each of the seven folders and spank"

# tsort fails on a loop; each row gives "allowed folder -> row's folder".
echo "$rows" | awk '{ me = $1; sub(/.*\//, "", me); print me, me
                      for (i = 2; i <= NF; i++) print $i, me }' | tsort > /dev/null 2>&1
tap_ok $? "the table's include graph has no cycle"

out=$(violations "$S")
while read -r dir allow; do
    bad=$(echo "$out" | grep "^$dir/[^/]*:")
    [ -z "$bad" ]
    rc=$?
    [ $rc -ne 0 ] && echo "$bad" | diag
    tap_ok $rc "$dir includes only ${dir##*/}${allow:+ and $allow}"
done <<EOF
$rows
EOF

# A scratch tree: the real table, lib/core including study and a bare lib
# header, spank including study; the check must name all three.
tmp=$(mktemp -d) || exit 1
trap 'rm -rf "$tmp"' EXIT
mkdir -p "$tmp/lib/core" "$tmp/spank"
cp "$S/lib/README.md" "$tmp/lib/"
printf '#include "config.h"\n#include "core/error.h"\n#include "study/study.h"\n#include "error.h"\n' \
    > "$tmp/lib/core/planted.c"
printf '#include "plugin.h"\n#include "study/stagegen.h"\n' > "$tmp/spank/planted.c"
touch "$tmp/spank/plugin.h"
planted=$(violations "$tmp")
echo "$planted" | diag
[ "$(echo "$planted" | grep -c .)" -eq 3 ] &&
    echo "$planted" | grep -q '^lib/core/planted.c:3: includes "study/study.h"' &&
    echo "$planted" | grep -q '^lib/core/planted.c:4: includes "error.h"' &&
    echo "$planted" | grep -q '^spank/planted.c:2: includes "study/stagegen.h"'
tap_ok $? "a planted include against the table is caught (lib/core -> study, a bare lib header, spank -> study)"

out=$(private_violations "$S")
[ -z "$out" ]
rc=$?
[ $rc -ne 0 ] && echo "$out" | diag
tap_ok $rc "a folder's private header (NAME_internal.h) is included only by its folder and the tests"

mkdir -p "$tmp/gen" "$tmp/lib/study" "$tmp/tests/unit/study"
printf '#include "study/stagegen_internal.h"\n' > "$tmp/gen/planted.c"
printf '#include "study/stagegen_internal.h"\n' > "$tmp/lib/study/ok.c"
mkdir -p "$tmp/lib/loop"
printf '#include "study/stagegen_internal.h"\n' > "$tmp/lib/loop/planted.c"
printf '#include "study/stagegen_internal.h"\n' > "$tmp/tests/unit/study/ok.c"
planted=$(private_violations "$tmp")
echo "$planted" | diag
[ "$(echo "$planted" | grep -c .)" -eq 2 ] &&
    echo "$planted" | grep -qx 'gen/planted.c:1: includes "study/stagegen_internal.h", private to lib/study' &&
    echo "$planted" | grep -qx 'lib/loop/planted.c:1: includes "study/stagegen_internal.h", private to lib/study'
tap_ok $? "a planted include of another folder's private header (gen/, lib/loop) is caught, and its own folder's and a test's are not"

[ "$TAP_FAILED" -eq 0 ]
