#!/bin/bash
# Issue 21's own round of hostile input: every case of
# tests/data/hardening/round/cases.tsv, one TAP point each, through the real
# moeflow and, for the plugin's options and plugstack.conf arguments,
# tests/cli/plugin_opts (the library calls spank_moeflow.so makes at
# submission).  Each case runs under a timeout and an address-space cap and
# is checked for
#   - no crash: no signal (a sanitizer finding aborts);
#   - no hang: done within $TO seconds;
#   - no injection: no file named PWNED* appears anywhere under the work
#     folder, also after the scripts of an accepted `gen` run under stub
#     commands; no ESC, C1 or other control character but tab and newline
#     reaches the terminal (stdout or stderr);
#   - no silent acceptance of nonsense: a case expected refused exits with
#     exactly its code (moeflow(1): 1 usage, 2 invalid input, 3 infeasible,
#     4 a file that cannot be written), with a message on stderr that
#     matches the case's pattern (the file, field or option it names; for
#     exit 3, a rule's verdict, stdout may hold it), and leaves nothing at
#     $O; a case expected accepted exits 0.
# tests/data/hardening/round/README.md says how the cases were chosen and
# what the round found.
. "$MOEFLOW_SRCDIR/tests/integration/lib.sh"
W=$(mktemp -d /tmp/mfround.XXXXXX)
trap 'rm -rf "$W"' EXIT
chmod 0755 "$W"
# The cases name the tree through links without blanks: their commands
# ($M, $P, $D/... in cases.tsv, some inside sh -c '...') are split at
# blanks, and the tree may be cloned under "/tmp/mf clone/".
ln -s "$MOEFLOW_SRCDIR" "$W/src" && ln -s "$MOEFLOW_BIN" "$W/moeflow" || exit 1
M=$W/moeflow
# tests/integration/hostile-round.sh replays the plugin's cases through a
# real sbatch: MOEFLOW_ROUND_PLUGIN stands in for plugin_opts, and
# MOEFLOW_ROUND_GROUPS names the groups of cases to run (default: all).
P=${MOEFLOW_ROUND_PLUGIN:-$MOEFLOW_USER_BUILDDIR/tests/cli/plugin_opts}
ln -s "$P" "$W/${P##*/}" && P=$W/${P##*/} || exit 1
ALL_GROUPS="gen fit layouts place contract overlap report diagnose topo plugin"
RUN_GROUPS=${MOEFLOW_ROUND_GROUPS:-$ALL_GROUPS}
R=$W/src/tests/data/hardening/round
D=$W/src/tests/data
S=$W/src/etc/studies/tiny-moe-2gpu.yaml
T=$W/src/templates
# Issue 21's round and the second one (issue 38, tests/data/hardening/
# round-t4/: one file a class of defects), read as one list.
if [ -n "${MOEFLOW_ROUND_CASES:-}" ]; then
    CASES=$MOEFLOW_ROUND_CASES
else
    CASES=$W/all-cases.tsv
    cat "$R/cases.tsv" "$W"/src/tests/data/hardening/round-t4/*.tsv > "$CASES" 2> /dev/null ||
        cat "$R/cases.tsv" > "$CASES"
fi
export MOEFLOW_TEMPLATE_DIR=$T LC_ALL=C
TO=10
F=$W/fx
# The scripts of an accepted gen, and its cases run as an ordinary user
# where the command is run as root (contracts and winners are never
# written as root).
U=
[ "$(id -u)" = 0 ] && U=nobody

# Address space capped at 2 GB where the build allows it (a sanitizer build
# reserves terabytes of shadow memory and cannot start under a cap); files
# written capped at 1 GiB.
cap=2000000
(ulimit -v $cap && "$M" --version) > /dev/null 2>&1 || cap=unlimited
# A sanitizer build runs several times slower: its hangs are 30 s.
[ $cap = unlimited ] && TO=30
fcap=1048576

# --- fixtures, shared by the cases (read only) -------------------------------
mkdir -p "$F" "$F/bin"
fixtures() {
    local L=$D/logs/h200x2-moe-ep2-alltoall-60it.log
    cd "$F" || return 1
    mkfifo fifo.yaml fifo.log fifo.json fifo.xml fifo.sqlite fifo.conf
    mkdir dir.yaml dir.json
    truncate -s 17M big.yaml big.json big.xml
    truncate -s 256M sparse.log sparse.json
    ln -s "$S" link.yaml
    ln -s nowhere.yaml dangling.yaml
    ln -s loop1 loop2 && ln -s loop2 loop1
    { printf 'name: x\nmodel: '; head -c 100000 /dev/zero | tr '\0' '['; echo; } > deep.yaml
    { printf 'domains: '; head -c 100000 /dev/zero | tr '\0' '{'; echo; } > deep-map.yaml
    # a billion laughs: nine levels of ten aliases each
    {
        echo 'a0: &a0 [x, x, x, x, x, x, x, x, x, x]'
        for i in 1 2 3 4 5 6 7 8 9; do
            printf 'a%d: &a%d [' $i $i
            for _ in 1 2 3 4 5 6 7 8 9; do printf '*a%d, ' $((i - 1)); done
            printf '*a%d]\n' $((i - 1))
        done
    } > laughs.yaml
    { sed -n '1,/^model:/p' "$S" | sed '$d'; echo 'model: &m'; sed -n '/^model:/,/^cluster:/p' "$S" | sed '1d;$d'
      sed -n '/^cluster:/,$p' "$S"; } > anchor.yaml
    head -c 1048576 /dev/zero | tr '\0' A | gzip -9 > m.gz
    for _ in $(seq 10); do cat m.gz m.gz > m2.gz && mv m2.gz m.gz; done
    { printf '{"traceEvents":[{"ph":"X","name":"' | gzip; cat m.gz; printf '"}]}' | gzip; } > bomb.json.gz
    rm -f m.gz
    printf 'not gzip at all' > notgz.json.gz
    # bytes of every value, the same every run, an OSC sequence first
    { printf '\033]0;pwned\007'; awk 'BEGIN { srand(21); for (i = 0; i < 4096; i++)
        printf "%c", int(rand() * 256) }'; } > random.bin
    # Megatron logs: 60 iterations of about 1000 ms, and one twice as fast
    for speed in 1000 500; do
        awk -v s=$speed 'BEGIN { for (i = 1; i <= 60; i++)
            printf " [2026-12-01 10:00:%02d.000000] iteration %8d/      60 | consumed samples: %12d | elapsed time per iteration (ms): %.1f | throughput per GPU (TFLOP/s/GPU): %.1f | learning rate: 1.0E-04 | global batch size:     8 | lm loss: %.6E | loss scale: 1.0 | grad norm: 1.000 | number of skipped iterations:   0 | number of nan iterations:   0 |\n",
                i % 60, i, 8 * i, s + (i * 37) % 23, 100000 / s, 8 - i / 100 }' > log-$speed.log
    done
    cp "$L" real.log
    # a generated study with a log for every candidate of scale, retune and
    # validate, the EP-overlap candidate twice as fast, sealed run records
    # of the contract stage and of that candidate, and its frozen baseline
    "$M" gen --templates "$T" "$S" -o study > gen.out 2>&1 || return 1
    local st id var val
    while IFS=$'\t' read -r st _ id var val _; do
        case $st in scale | retune | validate) ;; *) continue ;; esac
        mkdir -p "study/results/$st"
        if [ "$st:$var:$val" = retune:ep_overlap:true ]; then
            cp log-500.log "study/results/$st/$id.log"
            run_record study 6_0 retune "$id"
        else
            cp log-1000.log "study/results/$st/$id.log"
        fi
    done < study/candidates.tsv
    run_record study 1 contract "$(awk -F'\t' '$1 == "contract" { print $3 }' study/candidates.tsv)"
    [ -n "$U" ] && chown -R "$U" study
    chmod -R go-w study
    # its baseline frozen, as the contract stage's job would, by its owner
    ${U:+runuser -u "$U" --} "$M" contract freeze study \
        --from "study/contracts/$(awk -F'\t' '$1 == "contract" { print $3 }' study/candidates.tsv).json" \
        >> gen.out 2>&1 || return 1
    "$M" report log-1000.log -o rep > /dev/null 2>&1 || return 1
    "$M" overlap --json "$D/traces/synthetic-2gpu.json" > overlap.json || return 1
    cp study/contracts/"$(awk -F'\t' '$1 == "retune" { print $3; exit }' study/candidates.tsv)".json \
        contract.json
    # stubs for the scripts of an accepted gen: log and succeed
    cat > bin/stub <<'STUB'
#!/bin/sh
while read -r _; do :; done
case ${0##*/} in sbatch) echo 42 ;; scontrol | head) echo n1 ;; wc) echo 1000 ;; dirname) echo . ;; esac
exit 0
STUB
    chmod +x bin/stub
    for c in sbatch srun scontrol head wc dirname grep mkdir cp tee awk cat nsys python python3 \
             touch id date hostname uname sinfo nvidia-smi true sleep env rm mv ln chmod; do
        ln -s stub "bin/$c"
    done
    chmod -R a+rX "$F"
}

# run_record STUDY ID STAGE CANDIDATE: runs/ID/contract.json, sealed, as
# the plugin writes it.
run_record() {
    local d=$1/runs/$2
    mkdir -p "$d"
    sed "s/,\"semantics\":/,\"run\":{\"candidate\":\"$4\",\"id\":\"$2\",\"stage\":\"$3\"},\"semantics\":/" \
        "$1/contracts/$4.json" | tr -d '\n' > "$d/contract.json"
    (cd "$d" && sha256sum contract.json > contract.json.sha256)
}

if ! (fixtures) > "$W/fixtures.out" 2>&1; then
    echo "Bail out! the fixtures could not be made:"
    diag < "$W/fixtures.out"
    exit 1
fi
STUDY=$F/study
# The commands may run `sh -c '...'`: the names they use are exported.
export M P S T D R F STUDY

# --- one case ----------------------------------------------------------------
# make_input RECIPE: the case's input in $C, named by $IN.
#   -             none
#   sed:EXPR      the tiny study through sed -E EXPR (which must change it)
#   yaml:TEXT json:TEXT log:TEXT xml:TEXT conf:TEXT   printf %b TEXT into in.EXT
#   gz:TEXT       the same, gzipped, into in.json.gz
#   sql:SQL       an SQLite file made by sqlite3 from SQL, in.sqlite
#   study         a copy of the generated study, the case's own
#   sh:SCRIPT     a bash script run in $C (it may set IN)
make_input() {
    local kind=${1%%:*} body=${1#*:}
    IN=
    case $kind in
    -) ;;
    sed)
        IN=$C/in.yaml
        sed -E "$body" "$S" > "$IN" || return 1
        cmp -s "$S" "$IN" && { echo "the sed expression changes nothing"; return 1; }
        ;;
    yaml | json | log | xml | conf) IN=$C/in.$kind; printf '%b' "$body" > "$IN" ;;
    gz) IN=$C/in.json.gz; printf '%b' "$body" | gzip > "$IN" ;;
    sql) IN=$C/in.sqlite; sqlite3 "$IN" "$body" || return 1 ;;
    study) IN=$C/study; cp -a "$STUDY" "$IN" ;;
    sh) eval "$body" ;;
    *) echo "unknown recipe '$kind'"; return 1 ;;
    esac
    return 0
}

# run_scripts DIR: every script gen wrote, in a scratch copy, under the stubs.
run_scripts() {
    local work=$W/scripts f
    rm -rf "$work" && cp -r "$1" "$work" && mkdir -p "$work/logs"
    for f in "$work"/submit.sh "$work"/*.sbatch "$work"/rank-env.sh; do
        [ -f "$f" ] || continue
        (cd "$work" && env -i PATH="$F/bin" SLURM_ARRAY_TASK_ID=0 SLURM_ARRAY_JOB_ID=7 \
            SLURM_JOB_ID=7 SLURM_JOB_NODELIST=n1 SLURM_PROCID=0 SLURM_NTASKS=2 SLURM_LOCALID=0 \
            "$BASH" "$f" true < /dev/null > /dev/null 2>&1)
    done
}

crashes=0 hangs=0 injections=0 silent=0 wrong=0 refused=0 accepted=0 n=0
declare -A per_group
# run_case ID EXPECT INPUT COMMAND PATTERN WHAT
run_case() {
    local id=$1 want=$2 input=$3 cmd=$4 pat=$5 what=$6 rc why= args as=() out=$W/out err=$W/err pre
    n=$((n + 1))
    per_group[${id%%-*}]=$(( ${per_group[${id%%-*}]:-0} + 1 ))
    export C=$W/case O=$W/case/o IN=
    rm -rf "$C" && mkdir "$C" && chmod 0755 "$C" && cd "$C" || return 1
    if ! make_input "$input" > "$err" 2>&1 < /dev/null; then
        tap_ok 1 "$id: the case's input cannot be made ($(head -c 200 "$err"))"
        wrong=$((wrong + 1))
        return
    fi
    eval "args=($cmd)"
    pre=$([ -e "$O" ] || [ -L "$O" ] && echo 1)
    if [ "${args[0]}" = @user ]; then
        args=("${args[@]:1}")
        [ -n "$U" ] && { chown -R "$U" "$C"; as=(runuser -u "$U" --); }
    fi
    ( ulimit -v $cap; ulimit -f $fcap; exec "${as[@]}" timeout -k 2 $TO "${args[@]}" ) \
        > "$out" 2> "$err" < /dev/null
    rc=$?
    [ "$want" = 0 ] && [ $rc = 0 ] && [ -f "$O/submit.sh" ] && run_scripts "$O"
    if [ $rc = 124 ] || [ $rc = 137 ]; then
        hangs=$((hangs + 1)) why="a hang (killed after $TO s)"
    elif [ $rc -ge 128 ]; then
        crashes=$((crashes + 1)) why="a crash (signal $((rc - 128)))"
    elif [ -n "$(find "$W" -name 'PWNED*' -print -quit)" ]; then
        injections=$((injections + 1)) why="an injection: $(find "$W" -name 'PWNED*' | head -3)"
        find "$W" -name 'PWNED*' -exec rm -f {} +
    elif grep -qaP '[\x00-\x08\x0b-\x1f\x7f]|\xc2[\x80-\x9f]' "$out" "$err"; then
        injections=$((injections + 1)) why="a control character reached the terminal"
    elif [ "$want" = 0 ]; then
        if [ $rc != 0 ]; then
            wrong=$((wrong + 1)) why="legitimate input refused (exit $rc)"
        elif [ "$pat" != - ] && ! cat "$out" "$err" | grep -qaE -- "$pat"; then
            wrong=$((wrong + 1)) why="accepted, but the output lacks /$pat/"
        else
            accepted=$((accepted + 1))
        fi
    elif [ $rc = 0 ]; then
        silent=$((silent + 1)) why="nonsense accepted silently (exit 0)"
    elif [ $rc != "$want" ]; then
        wrong=$((wrong + 1)) why="refused with exit $rc, not $want"
    elif ! grep -qaE -- "$pat" "$err" && { [ "$want" != 3 ] || ! grep -qaE -- "$pat" "$out"; }; then
        wrong=$((wrong + 1)) why="refused, but the message does not name it (/$pat/)"
    elif [ -z "$pre" ] && { [ -e "$O" ] || [ -L "$O" ]; } && [ "$want" != 4 ]; then
        wrong=$((wrong + 1)) why="refused, but $O was written"
    else
        refused=$((refused + 1))
    fi
    if [ -n "$why" ]; then
        { echo "$id: $why: $cmd"; head -c 600 "$err"; echo; head -c 300 "$out"; echo; } | diag
        tap_ok 1 "$id: $what"
    elif [ "$want" = 0 ]; then
        tap_ok 0 "$id: accepted: $what"
    else
        tap_ok 0 "$id: refused (exit $want): $what"
    fi
}

# The cases of the groups asked for; a stand-in for plugin_opts takes no
# plugstack.conf arguments (a cluster's are in its plugstack.conf).
awk -F'\t' -v groups=" $RUN_GROUPS " -v stand_in="${MOEFLOW_ROUND_PLUGIN:+1}" '
    /^(#|$)/ { next }
    { g = $1; sub(/-.*/, "", g) }
    index(groups, " " g " ") && !(stand_in && $4 ~ /--plugstack=/)' "$CASES" > "$W/cases"
tap_plan $(($(wc -l < "$W/cases") + 1))
while IFS=$'\t' read -r id want input cmd pat what; do
    run_case "$id" "$want" "$input" "$cmd" "$pat" "$what"
done < "$W/cases"
cd "$W" || exit 1

# Every subcommand and the plugin (or the groups asked for), with 10 cases
# or more each, and at least 300 cases in all.
missing=
for g in $RUN_GROUPS; do
    [ "${per_group[$g]:-0}" -ge 10 ] || missing+=" $g(${per_group[$g]:-0})"
done
[ "$RUN_GROUPS" != "$ALL_GROUPS" ] || [ "$n" -ge 300 ]
[ $? = 0 ] && [ -z "$missing" ]
tap_ok $? "the round covers $( [ "$RUN_GROUPS" = "$ALL_GROUPS" ] && echo "every subcommand and the plugin" || echo "$RUN_GROUPS") with 10 cases or more each ($n in all)${missing:+; too few:$missing}"
groups=
for g in $RUN_GROUPS; do groups+=" $g ${per_group[$g]:-0},"; done
echo "# hostile round: $n cases ($groups), $refused refused as expected, $accepted accepted as expected, $crashes crashes, $hangs hangs, $injections injections, $silent silent acceptances, $wrong other failures"
tap_done
