#!/bin/sh
# A public header (lib/FOLDER/NAME.h) declares only what other folders use:
# a function that no file outside lib/FOLDER names (gen/, spank/ and the
# other lib/ folders count; tests do not) belongs in the folder's private
# header, NAME_internal.h, or is static.  So a header says at a glance what
# a folder offers, and an unused function cannot hide behind it.  The last
# point plants a private function in a public header of a scratch tree and
# expects the check to name it.
: "${MOEFLOW_SRCDIR:?run through make check}"
S=$MOEFLOW_SRCDIR

# shellcheck source=tests/lint/tap.sh
. "$S/tests/lint/tap.sh"

# The functions a header declares: a declaration starts its line with a
# type, never a comment's " *" or a #define.
declared() {
    grep -E '^[A-Za-z_][A-Za-z0-9_ ]*[ *](moe_[a-z0-9_]+)\(' "$1" |
        grep -vE '^(#|typedef)' |
        sed -E 's/^[A-Za-z_][A-Za-z0-9_ ]*[ *](moe_[a-z0-9_]+)\(.*/\1/' | sort -u
}

# One line per public function of tree $1 that nothing outside its folder names.
private_in_public() {
    (cd "$1" || exit 1
     for h in lib/*/*.h; do
         case $h in *_internal.h) continue ;; esac
         dir=${h%/*}
         for fn in $(declared "$h"); do
             grep -rlw --include='*.c' --include='*.h' "$fn" lib gen spank 2>/dev/null |
                 grep -qv "^$dir/" && continue
             users=$(grep -rlw --include='*.c' "$fn" "$dir" | tr '\n' ' ')
             echo "$h: $fn is named only in $dir (${users% }): move it to a ${dir#lib/}/*_internal.h or make it static"
         done
     done)
}

echo "1..3"
out=$(private_in_public "$S")
[ -z "$out" ]
rc=$?
[ $rc -ne 0 ] && echo "$out" | diag
tap_ok $rc "every function a public lib/ header declares is used outside its folder"

tmp=$(mktemp -d) || exit 1
trap 'rm -rf "$tmp"' EXIT
mkdir -p "$tmp/lib/core" "$tmp/gen"
printf 'int moe_used_outside(void);\nint moe_kept_inside(void);\n' > "$tmp/lib/core/planted.h"
printf 'int moe_used_outside(void) { return moe_kept_inside(); }\nint moe_kept_inside(void) { return 1; }\n' > "$tmp/lib/core/planted.c"
printf 'int main(void) { return moe_used_outside(); }\n' > "$tmp/gen/main.c"
planted=$(private_in_public "$tmp")
echo "$planted" | diag
[ "$(echo "$planted" | grep -c .)" -eq 1 ] &&
    echo "$planted" | grep -q '^lib/core/planted.h: moe_kept_inside is named only in lib/core'
tap_ok $? "a planted public function used only inside its folder is caught, and one used outside is not"

# A header mk/lib.am does not name builds here but is missing from the
# release tarball (make dist), where the build then fails.
unlisted=$(cd "$S" && for f in lib/*/*.h lib/*/*.c; do
    grep -qF "$f" mk/lib.am || echo "$f is not in mk/lib.am: make dist would leave it out"; done)
[ -z "$unlisted" ]
rc=$?
[ $rc -ne 0 ] && echo "$unlisted" | diag
tap_ok $rc "mk/lib.am names every lib/ header and source, private headers too"

[ "$TAP_FAILED" -eq 0 ]
