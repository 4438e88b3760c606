#!/bin/bash
# Every lib/*.c has a unit test that names it (includes its header, public or
# private, or names the .c file) or a line in tests/README.md's coverage
# list: a new lib file cannot arrive untested by accident, and a listed
# file that gains a unit test must leave the list.
: "${MOEFLOW_SRCDIR:?run through make check}"
cd "$MOEFLOW_SRCDIR" || exit 1
# shellcheck disable=SC2016 # the backquotes are Markdown, not expansions
list=$(sed -n '/<!-- unit-coverage/,/<!-- \/unit-coverage/p' tests/README.md |
       grep -o '^| `lib/[^`]*\.c`' | tr -d '|` ')
n=0 failed=0
units=$(find tests/unit -name '*.c')
for f in lib/*/*.c; do
    dir=$(basename "$(dirname "$f")") name=$(basename "$f" .c)
    # shellcheck disable=SC2086
    if grep -qE "#include \"$dir/$name(_internal)?\.h\"|\b$name\.c\b" $units; then
        named=1
    else
        named=0
    fi
    listed=0
    grep -qx "$f" <<<"$list" && listed=1
    n=$((n + 1))
    if [ $named = 0 ] && [ $listed = 0 ]; then
        echo "not ok $n - $f has no unit test and is not in tests/README.md's coverage list"
        failed=1
    elif [ $named = 1 ] && [ $listed = 1 ]; then
        echo "not ok $n - $f has a unit test now: remove it from tests/README.md's coverage list"
        failed=1
    else
        echo "ok $n - $f"
    fi
done
for f in $list; do
    n=$((n + 1))
    if [ -f "$f" ]; then echo "ok $n - listed $f exists"
    else echo "not ok $n - tests/README.md lists $f, which does not exist"; failed=1; fi
done
# tests/unit/ mirrors lib/: a folder of tests for each folder of lib/, and
# no test outside them but the sanitizer build's own check.
for d in tests/unit/*/; do
    n=$((n + 1)); d=${d%/}
    if [ -d "lib/${d#tests/unit/}" ]; then echo "ok $n - $d mirrors lib/${d#tests/unit/}"
    else echo "not ok $n - $d has no lib/ folder to mirror"; failed=1; fi
done
for f in tests/unit/*.c; do
    [ "$f" = tests/unit/test_ubsan_aborts.c ] && continue
    n=$((n + 1))
    echo "not ok $n - $f is outside the lib/ mirror: move it to tests/unit/<lib folder>/"
    failed=1
done
echo "1..$n"
exit $failed
