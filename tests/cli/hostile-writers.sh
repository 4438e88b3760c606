#!/bin/bash
# Rules 2 and 9 of lib/README.md from the command line.
# Rule 2 (issues 21, 38): every file moeflow writes is a regular file in a
# folder it resolved.  A symlink, FIFO or device at an output's name is
# refused (exit 4) and left as it is, its target untouched: `ln -s
# ../victim.txt out/report.json; moeflow report -o out` overwrote victim.txt
# (issue 21), `place --hostfile /dev/null` as root put a regular file in
# place of /dev/null (D01).  A symlinked -o folder is refused, also one
# planted by another user in a sticky folder (D12); a folder path near
# PATH_MAX gets whole names (D18).
# Rule 9: a writer killed at any step leaves the old state or the new one;
# the next run cleans up (D20: gen --winners, report --pack, report -o).
# (The contract store: tests/cli/contract-store.sh.)
. "$MOEFLOW_SRCDIR/tests/integration/lib.sh"
M=$MOEFLOW_BIN
tap_plan 24
tmp=$(mktemp -d /tmp/mfhw.XXXXXX)
trap 'rm -rf "$tmp"' EXIT
chmod 0755 "$tmp"
log=$MOEFLOW_SRCDIR/tests/data/hardening/base.log
place() { "$M" place --nodelist 'n[1-2]' --gpus-per-node 2 --layout tp=2 "$@"; }

mkdir "$tmp/rep"
for f in report.json report.md step-time.svg; do
    echo "victim $f" > "$tmp/victim-$f"
done
ln -s "../victim-step-time.svg" "$tmp/rep/step-time.svg"
"$M" report -o "$tmp/rep" "$log" > "$tmp/stdout" 2>&1
tap_ok $(( $? != 4 )) "report -o into a folder with a planted symlink: refused, exit 4"
ok "... naming the file and what is there" has "$tmp/stdout" "step-time.svg: cannot write: a symlink is there"
[ "$(cat "$tmp/victim-step-time.svg")" = "victim step-time.svg" ] && [ -L "$tmp/rep/step-time.svg" ] &&
    [ ! -e "$tmp/rep/report.json" ]
tap_ok $? "... the link and its target untouched, and no other file of the report written"
rm "$tmp/rep/step-time.svg"
"$M" report -o "$tmp/rep" "$log" > "$tmp/stdout" 2>&1
tap_ok $? "report -o into a plain folder succeeds"
grep -q "\"step_ms_median\": 100.0" "$tmp/rep/report.json" && grep -q '<svg' "$tmp/rep/step-time.svg"
tap_ok $? "... and the new files hold the report"
[ -z "$(find "$tmp/rep" -name '.*' -type f)" ]; tap_ok $? "... no temporary file is left behind"

echo victim > "$tmp/victim-hosts"
ln -s victim-hosts "$tmp/hosts"
place --hostfile "$tmp/hosts" > "$tmp/stdout" 2>&1
tap_ok $(( $? != 4 )) "place --hostfile onto a planted symlink: refused, exit 4"
[ "$(cat "$tmp/victim-hosts")" = victim ] && [ -L "$tmp/hosts" ]
tap_ok $? "... the link and its target untouched"
mkfifo "$tmp/fifo"
timeout 10 "$M" place --nodelist 'n[1-2]' --gpus-per-node 2 --layout tp=2 --hostfile "$tmp/fifo" > "$tmp/stdout" 2>&1
[ $? -eq 4 ] && [ -p "$tmp/fifo" ] && has "$tmp/stdout" "a FIFO is there"
tap_ok $? "a FIFO in the hostfile's place: refused at once, left as it is"
mkdir "$tmp/hostdir"
place --hostfile "$tmp/hostdir" > "$tmp/stdout" 2>&1
[ $? -eq 4 ] && [ -d "$tmp/hostdir" ]; tap_ok $? "a directory in the hostfile's place is an error, left as it is"
place --hostfile "$tmp/hosts2" > /dev/null 2>&1 && [ "$(wc -l < "$tmp/hosts2")" -eq 4 ] &&
    place --hostfile "$tmp/hosts2" > /dev/null 2>&1
tap_ok $? "a hostfile of the user's own is written, then replaced"

# /dev/null and /dev/stdout themselves, as root, in a private mount
# namespace with its own /dev (the host's is never at risk)
if [ "$(id -u)" = 0 ] && unshare --mount --propagation private true 2> /dev/null; then
    # moeflow's path as an argument: a checkout's path may hold a blank
    # shellcheck disable=SC2016
    unshare --mount --propagation private sh -c '
      mount -t tmpfs tmpfs /dev && mknod -m 666 /dev/null c 1 3 && ln -s /proc/self/fd/1 /dev/stdout &&
      "$1" place --nodelist "n[1-2]" --gpus-per-node 8 --layout tp=2 --hostfile /dev/null > /dev/null 2>&1; echo rc=$?
      "$1" place --nodelist "n[1-2]" --gpus-per-node 8 --layout tp=2 --hostfile /dev/stdout > /dev/null 2>&1; echo rc=$?
      test -c /dev/null && echo null-is-a-device; test -L /dev/stdout && echo stdout-is-a-link' sh "$M" > "$tmp/ns" 2>&1
    [ "$(tr '\n' ' ' < "$tmp/ns")" = "rc=4 rc=4 null-is-a-device stdout-is-a-link " ]
    tap_ok $? "as root, --hostfile /dev/null and /dev/stdout: refused, exit 4, both left as they were"
else
    tap_skip "as root, --hostfile /dev/null and /dev/stdout" "needs root and unshare"
fi

# -o a symlink planted by another user in a sticky folder
mkdir -m 1777 "$tmp/sticky"; mkdir "$tmp/victim"
chmod 1777 "$tmp/sticky"
if [ "$(id -u)" = 0 ]; then runuser -u nobody -- ln -s "$tmp/victim" "$tmp/sticky/rep"
else ln -s "$tmp/victim" "$tmp/sticky/rep"; fi
"$M" report -o "$tmp/sticky/rep/" "$log" > "$tmp/stdout" 2>&1
[ $? -eq 4 ] && [ -z "$(ls -A "$tmp/victim")" ] && has "$tmp/stdout" "it is a symlink"
tap_ok $? "report -o a symlink planted in a sticky folder (trailing slash too): refused, exit 4, nothing written through"

# -o at PATH_MAX: whole names under a 4085-byte folder, an error past 4096
d=$tmp; seg=$(printf 'd%.0s' $(seq 200))
while [ ${#d} -lt 3830 ]; do d=$d/$seg; done
d=$d/$(printf 'e%.0s' $(seq $((4085 - ${#d} - 1)))); mkdir -p "$d"
"$M" report -o "$d" "$log" > "$tmp/stdout" 2>&1
[ $? -eq 0 ] && [ "$(cd "$d" && ls | tr '\n' ' ')" = "report.json report.md step-time.svg " ]
tap_ok $? "report -o a 4085-byte folder: exit 0, report.json, report.md, step-time.svg whole"
"$M" report -o "$d/$seg" "$log" > "$tmp/stdout" 2>&1
[ $? -eq 4 ] && has "$tmp/stdout" "File name too long"
tap_ok $? "report -o a folder past PATH_MAX: exit 4, naming the cause"

# Rule 9: kill the writer at each step (an LD_PRELOAD shim SIGKILLs it at
# the Nth rename, renameat, renameat2, link, linkat or unlink(at)).
asan=$(ldd "$M" 2> /dev/null | grep -c asan)
if [ "$asan" -gt 0 ] || ! command -v gcc > /dev/null || [ "$(id -u)" != 0 ]; then
    for i in 1 2 3 4 5 6 7 8 9; do
        tap_skip "rule 9 kill points ($i)" "needs root, gcc and a build without ASan (LD_PRELOAD)"
    done
    tap_done
    exit 0
fi
cat > "$tmp/k.c" <<'C'
#define _GNU_SOURCE
#include <dlfcn.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
static int n;
static void hit(void) { const char *a = getenv("KILLAT_N");
    if (a && ++n == atoi(a)) kill(getpid(), SIGKILL); }
#define WRAP(ret, fn, params, args) ret fn params { static ret (*r) params; \
    if (!r) r = dlsym(RTLD_NEXT, #fn); hit(); return r args; }
WRAP(int, rename, (const char *a, const char *b), (a, b))
WRAP(int, renameat, (int a, const char *b, int c, const char *d), (a, b, c, d))
WRAP(int, renameat2, (int a, const char *b, int c, const char *d, unsigned f), (a, b, c, d, f))
WRAP(int, linkat, (int a, const char *b, int c, const char *d, int f), (a, b, c, d, f))
WRAP(int, unlinkat, (int a, const char *b, int f), (a, b, f))
WRAP(int, unlink, (const char *a), (a))
C
gcc -shared -fPIC -o "$tmp/k.so" "$tmp/k.c" -ldl && chmod 755 "$tmp/k.so" "$tmp/k.c"
U=nobody
as_user() { runuser -u "$U" -- "$@"; }
S=$tmp/st
"$M" gen --templates "$MOEFLOW_SRCDIR/templates" "$MOEFLOW_SRCDIR/etc/studies/tiny-moe-2gpu.yaml" \
    -o "$S" > "$tmp/out" 2>&1 || { diag < "$tmp/out"; echo "Bail out! gen failed"; exit 1; }
R=$(awk -F'\t' '$1 == "retune" && $4 == "ep_overlap" { print $3 }' "$S/candidates.tsv")
C=$(awk -F'\t' '$1 == "contract" { print $3 }' "$S/candidates.tsv")
mkdir -p "$S/runs/6_0"
sed "s/,\"semantics\":/,\"run\":{\"candidate\":\"$R\",\"id\":\"6_0\",\"stage\":\"retune\"},\"semantics\":/" \
    "$S/contracts/$R.json" | tr -d '\n' > "$S/runs/6_0/contract.json"
(cd "$S/runs/6_0" && sha256sum contract.json > contract.json.sha256)
chown -R "$U" "$S"; chmod -R go-w "$S"
as_user "$M" contract freeze "$S" --from "$S/contracts/$C.json" > "$tmp/out" 2>&1 &&
    as_user "$M" contract winner "$S" "$S/runs/6_0" > "$tmp/out" 2>&1 ||
    { diag < "$tmp/out"; echo "Bail out! fixture failed"; exit 1; }
count() {  # count DIR: validate.sbatch's candidates and manifest.json's, "A B"
    echo "$(grep -c '^ *candidate=' "$1/validate.sbatch") $(python3 -c "import json,sys
print([len(s['candidates']) for s in json.load(open(sys.argv[1]))['stages'] if s['stage'] == 'validate'][0])" "$1/manifest.json")"
}
before=$(count "$S")
bad=0 journals=0 kills=0
for n in $(seq 1 30); do
    rm -rf "$tmp/s2"; cp -a "$S" "$tmp/s2"
    as_user env LD_PRELOAD="$tmp/k.so" KILLAT_N=$n "$M" gen --templates "$MOEFLOW_SRCDIR/templates" \
        "$tmp/s2/study.yaml" --stage validate --winners "$tmp/s2" > /dev/null 2>&1
    [ $? -eq 137 ] || break
    kills=$((kills + 1))
    c=$(count "$tmp/s2")
    if [ -e "$tmp/s2/.moeflow-commit" ]; then
        # a journal: every reader refuses the half-made study until a rerun
        journals=$((journals + 1))
        as_user "$M" report "$tmp/s2" > "$tmp/rd" 2>&1 && { echo "# killed at $n: report read it"; bad=$((bad + 1)); }
        grep -q "interrupted moeflow gen --winners" "$tmp/rd" || { diag < "$tmp/rd"; bad=$((bad + 1)); }
    elif [ "${c% *}" != "${c#* }" ]; then
        echo "# killed at $n: a mix without a journal: $c" ; bad=$((bad + 1))
    fi
    as_user "$M" gen --templates "$MOEFLOW_SRCDIR/templates" "$tmp/s2/study.yaml" --stage validate \
        --winners "$tmp/s2" > "$tmp/rd" 2>&1 || { diag < "$tmp/rd"; bad=$((bad + 1)); }
    c=$(count "$tmp/s2")
    [ "${c% *}" = "${c#* }" ] && [ -z "$(cd "$tmp/s2" && ls -A | grep '^\.moeflow')" ] ||
        { echo "# killed at $n: after the rerun $c, $(cd "$tmp/s2" && ls -A | grep '^\.moeflow')"; bad=$((bad + 1)); }
done
echo "# gen --winners killed at $kills steps, $journals of them after the commit"
tap_ok $(( bad != 0 || kills < 3 || journals < 1 )) "gen --winners killed at each step: old or new state, or a journal every reader refuses; a rerun finishes with no leftover"
[ "$c" != "$before" ]; tap_ok $? "... and the study ends with the new validate stage ($c)"

as_user "$M" report --pack "$S" > "$tmp/out" 2>&1 || diag < "$tmp/out"
bad=0 kills=0
for n in $(seq 1 30); do
    as_user env LD_PRELOAD="$tmp/k.so" KILLAT_N=$n "$M" report --pack "$S" > /dev/null 2>&1
    [ $? -eq 137 ] || break
    kills=$((kills + 1))
    [ -f "$S/evidence-pack/pack.json" ] && [ -f "$S/evidence-pack/README.md" ] ||
        { echo "# killed at $n: no whole pack"; bad=$((bad + 1)); }
    as_user "$M" report --pack "$S" > "$tmp/rd" 2>&1 || { diag < "$tmp/rd"; bad=$((bad + 1)); }
    [ "$(cd "$S" && ls -A | grep -c evidence-pack)" = 1 ] ||
        { echo "# killed at $n: $(cd "$S" && ls -A | grep evidence-pack)"; bad=$((bad + 1)); }
done
echo "# report --pack killed at $kills steps"
tap_ok $(( bad != 0 || kills < 2 )) "report --pack killed at each step: evidence-pack/ always whole; a rerun leaves no sibling"

bad=0 kills=0
mkdir "$tmp/ro"; chown "$U" "$tmp/ro"
for n in $(seq 1 30); do
    as_user env LD_PRELOAD="$tmp/k.so" KILLAT_N=$n "$M" report -o "$tmp/ro" "$log" > /dev/null 2>&1
    [ $? -eq 137 ] || break
    kills=$((kills + 1))
    as_user "$M" report -o "$tmp/ro" "$log" > /dev/null 2>&1 || bad=$((bad + 1))
    [ "$(ls -A "$tmp/ro" | tr '\n' ' ')" = "report.json report.md step-time.svg " ] || bad=$((bad + 1))
    rm -rf "$tmp/ro"; mkdir "$tmp/ro"; chown "$U" "$tmp/ro"
done
echo "# report -o killed at $kills steps"
tap_ok $(( bad != 0 || kills < 3 )) "report -o killed at each step: a rerun leaves its three files and nothing else"

# report-f02: a pack that cannot be written is exit 4, not 2
chmod 0555 "$S"; rm -rf "$S/evidence-pack" 2> /dev/null
as_user "$M" report --pack "$S" > "$tmp/out" 2>&1
tap_ok $(( $? != 4 )) "report --pack on a read-only study: exit 4 (a file that cannot be written)"
ok "... naming the folder" has "$tmp/out" "evidence-pack"
chmod 0755 "$S"
# report-r05: the 65th --expect names the limit
"$M" report "$log" $(for i in $(seq 0 64); do printf -- '--expect=k%d=v ' $i; done) > "$tmp/out" 2>&1
tap_ok $(( $? != 1 )) "a 65th --expect: exit 1"
ok "... saying at most 64 are taken" has "$tmp/out" "at most 64 --expect"
# D16: place shows the map's domain names as data
printf 'domains:\n  - {name: "d\\e]0;x\\a", nodes: "n[1-2]", gpus_per_node: 8}\n' > "$tmp/t.yaml"
"$M" place --nodelist 'n[1-2]' --layout tp=2 --topology "$tmp/t.yaml" > "$tmp/out" 2>&1
! LC_ALL=C grep -q $'\x1b' "$tmp/out" && has "$tmp/out" 'domain d\\x1b'
tap_ok $? "place prints a domain name holding ESC/BEL as \\xHH"
tap_done
