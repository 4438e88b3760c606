#!/bin/sh
# The counts issue 39 reports (not a test: make check does not run it).
# usage: tests/lint/hygiene-count.sh REV [pathspec...]   at git revision REV, or WORKTREE
rev=$1; shift
[ $# -eq 0 ] && set -- lib gen spank
cd "$(dirname "$0")/../.." || exit 1
files() { if [ "$rev" = WORKTREE ]; then git ls-files -- "$@" | grep -E '\.[ch]$'; else git ls-tree -r --name-only "$rev" -- "$@" | grep -E '\.[ch]$'; fi; }
show() { if [ "$rev" = WORKTREE ]; then cat "$1"; else git show "$rev:$1"; fi; }
calls=0; unchecked=0; pathbuf=0; realloc=0
for f in $(files "$@"); do
  c=$(show "$f" | grep -cE '\bv?snprintf\(')
  # a call whose result is discarded (the line starts with it) and that no
  # comment argues, on its line or ending the line before
  u=$(show "$f" | awk '/^[ \t]*v?snprintf\(/ && $0 !~ /\/\*/ && prev !~ /\*\/[ \t]*$/ {n++} {prev=$0} END{print n+0}')
  p=$(show "$f" | grep -E '^\s*(static\s+)?char\s' | grep -oE '\b\w+\[(4[0-9]{3})\]' | grep -vcE '^(line|buf|shown|shown_buf|text|out)\[')
  r=$(show "$f" | grep -cE '\brealloc\(')
  [ "$f" = lib/core/strbuf.c ] && r=0
  calls=$((calls+c)); unchecked=$((unchecked+u)); pathbuf=$((pathbuf+p)); realloc=$((realloc+r))
done
echo "$rev $*: snprintf calls $calls, unchecked $unchecked, path buffers [4000-4999] $pathbuf, hand-written realloc $realloc"
