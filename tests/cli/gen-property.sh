#!/bin/bash
# Property (issue 21): whatever a study's strings hold, `moeflow gen` either
# refuses the study naming the field, or writes scripts whose code does not
# depend on them.  For adversarial and random strings in every string field
# of the study schema, and in -o:
#   - a string holding a control character is refused, naming the field;
#   - every generated script passes `bash -n` and holds no control
#     character but newlines;
#   - every #SBATCH directive comes before the first command, and sbatch
#     reads the same directives as for a plain value (a bash transcription
#     of sbatch 22.05's parser), the field's own one carrying the value
#     exactly;
#   - the scripts run the same commands: each script runs under stub
#     commands (first on an empty PATH) that log their arguments, with the
#     value masked, and the log equals the one for a plain value.
# Runs the real moeflow gen; the random strings are the same every run.
# In the sanitizer build only gen itself runs for each value (refused naming
# the field, or written): ASan and UBSan watch the C code that reads and
# writes the value, while the checks of the scripts are shell code on bytes
# the plain build's run of this test has checked already (gen writes the
# same bytes in both builds), and took most of the sanitizer phase's time
# (issue 40: the test command within 30 minutes on 2 cores).
. "$MOEFLOW_SRCDIR/tests/integration/lib.sh"
M=$MOEFLOW_BIN
T=$MOEFLOW_SRCDIR/templates
gen_only= how=
grep -q __asan_init "$M" && gen_only=1 how=" (the sanitizer build: gen only)"
tmp=$(mktemp -d /tmp/mfgp.XXXXXX)
trap 'rm -rf "$tmp"' EXIT
export LC_ALL=C

# --- the fields ---------------------------------------------------------------
# Every string field of lib/study/study_schema.c.  Those whose values are
# checked against a form (Slurm's, a preset name, a pipeline layout) are
# tested one at a time; the free-text ones, which reach the commands the
# scripts run (or only the contracts), all at once with the same value: a
# study and a run of the scripts per value instead of five.
stages=(contract fit scale profile retune validate)
each=(name model.preset cluster.partition cluster.account cluster.time_limit cluster.qos
      cluster.reservation cluster.constraint "${stages[@]/#/cluster.stage_time_limit.}"
      baseline.pipeline_layout)
# cluster.env's one variable and cluster.launcher.extra_args' item (the
# value of a flag that takes any string) are strings too, of a map and a
# list
together=(cluster.container.image cluster.container.mounts cluster.container.workdir
          cluster.launcher.command cluster.launcher.extra_args cluster.env
          workload.data workload.tokenizer software.transformer_engine)
# A new string field must be added above (and so tested): the schema's
# STR(...) and SBATCH_STR(...) entries, each STAGE_TIME(...) one, and the
# fields spelled out as MOE_F_STR, MOE_F_STRMAP or MOE_F_ARGS -- the
# macros' own definitions (#define and its continued lines) aside.
nstr=$(awk '/^#define/ { def = 1 } !def { print } { if (!/\\$/) def = 0 }' \
           "$MOEFLOW_SRCDIR/lib/study/study_schema.c" |
       grep -oE '(^|[ (,])(SBATCH_)?STR\([A-Z]|STAGE_TIME\([A-Z]|MOE_F_(STR|STRMAP|ARGS)\b' | wc -l)

# The study, one line per field; ${v[PATH]} are YAML scalars.
declare -A v=(
    [name]=tiny [model.preset]= [cluster.partition]=batch [cluster.account]=moe-perf
    [cluster.time_limit]='"00:10:00"' [cluster.container.image]='"nvcr.io/nvidia/pytorch:25.01-py3"'
    [cluster.container.mounts]='"/data:/data"' [cluster.launcher.command]='"python pretrain_gpt.py"'
    [workload.data]='"/data/tokens_text_document"' [software.transformer_engine]='"2.9"'
    [baseline.pipeline_layout]='"EttttL"' [cluster.qos]=normal [cluster.reservation]=moe
    [cluster.constraint]=h100 [cluster.container.workdir]='"/workspace"'
    [cluster.launcher.extra_args]='"moe"' [cluster.env]='"1"'
    [workload.tokenizer]='"Qwen/Qwen3-30B-A3B"'
)
# no stage has its own time limit, but the one under test: cluster.time_limit
# then reaches every script
for st in "${stages[@]}"; do v[cluster.stage_time_limit.$st]=; done
# A field's values start with its prefix: Megatron's rules read the TE
# version (>= 2.1 for the permute fusion).
# The workdir is a path in the container.
declare -A prefix=([software.transformer_engine]=2.9. [cluster.container.workdir]=/)
plain=("${!v[@]}")
declare -A plain_v
for k in "${plain[@]}"; do plain_v[$k]=${v[$k]}; done

study() {  # study [FIELD YAML-VALUE]...: the study text with the FIELDs set
    local -A s
    for k in "${plain[@]}"; do s[$k]=${plain_v[$k]}; done
    while [ $# -ge 2 ]; do s[$1]=$2; shift 2; done
    local model="num_layers: 4, hidden: 512, ffn_hidden: 2048, moe_ffn_hidden: 1024,
  num_experts: 8, topk: 2, num_heads: 8, num_query_groups: 4, vocab: 32000"
    [ -n "${s[model.preset]}" ] && model="preset: ${s[model.preset]}"
    local st times=
    for st in "${stages[@]}"; do
        [ -n "${s[cluster.stage_time_limit.$st]}" ] &&
            times+="${times:+, }$st: ${s[cluster.stage_time_limit.$st]}"
    done
    cat <<EOF
name: ${s[name]}
model: {$model}
cluster: {gpu: h100, gpus_per_node: 2, nodes: 1, time_limit: ${s[cluster.time_limit]},
  partition: ${s[cluster.partition]}, account: ${s[cluster.account]}, qos: ${s[cluster.qos]},
  reservation: ${s[cluster.reservation]}, constraint: ${s[cluster.constraint]},
  stage_time_limit: {$times}, env: {GP_TEST_VAR: ${s[cluster.env]}},
  container: {image: ${s[cluster.container.image]}, mounts: ${s[cluster.container.mounts]},
    workdir: ${s[cluster.container.workdir]}},
  launcher: {command: ${s[cluster.launcher.command]}, extra_args: [--wandb-project, ${s[cluster.launcher.extra_args]}]}}
workload: {seq_len: 1024, mbs: 1, gbs: 8, data: ${s[workload.data]},
  tokenizer: ${s[workload.tokenizer]}}
software: {megatron: core-0.19, transformer_engine: ${s[software.transformer_engine]}}
baseline: {ep: 2, pipeline_layout: ${s[baseline.pipeline_layout]}}
measure: {warmup: 2, screen_steps: 6, validate_steps: 50, report_window: [41, 50], profile_steps: [4, 5]}
retune: {mbs: [2]}
EOF
}

yaml_quote() {  # a YAML double-quoted scalar that reads back as $1, byte for byte
    local s=$1 out= c i
    for ((i = 0; i < ${#s}; i++)); do
        c=${s:i:1}
        if [ "$c" = $'\xc2' ] && [[ ${s:i+1:1} == [$'\x80'-$'\x9f'] ]]; then
            out+=$(printf '\\u00%02x' "'${s:i+1:1}")   # C1: YAML takes it escaped only
            i=$((i + 1))
            continue
        fi
        case $c in
        '"') out+='\"' ;;
        '\') out+='\\' ;;
        [$'\x01'-$'\x1f'$'\x7f']) out+=$(printf '\\x%02x' "'$c") ;;
        *) out+=$c ;;
        esac
    done
    printf '"%s"' "$out"
}

has_control() { [[ $1 == *[$'\x01'-$'\x1f'$'\x7f']* || $1 == *$'\xc2'[$'\x80'-$'\x9f']* ]]; }

# --- the values -------------------------------------------------------------------
adversarial=(
    'a'$'\n''touch PWNED' $'\r' $'\x1b[31m' $'\x7f' $'\t' $'\xc2\x85' $'\xc2\x9b'
    '$(touch PWNED)' '`touch PWNED`' "'; touch PWNED; '" '"; touch PWNED; "' '\' 'a\' '\\"'
    '#' ' #SBATCH --wrap=id' '${IFS}' '$HOME' '*' '?' '[a]' '~root' '!' '&&' '|' '>x' '<x'
    '{a,b}' '%j' '%%A' 'hetjob' 'PackJob' '--wrap=touch PWNED' '-' "'" '"' 'é€' $'\xe2\x80\xa8'
    ' ' 'a b' "it's" 'x" --export=ALL "' "x' --export=ALL '" '\" #' 'a' 'x-1.2_3+4' '12:30' EttttL
)
RANDOM=21
pool=(a b z 0 9 - _ . + / : , = @ % ' ' '"' "'" '\' '$' '`' '#' ';' '&' '|' '<' '>' '(' ')'
      '{' '}' '[' ']' '*' '?' '~' '!' $'\n' $'\t' $'\x01' é €)
# In this shell, not a $(...) subshell: bash reseeds RANDOM in subshells (so
# the "same every run" values were not), and $(...) strips trailing
# newlines (a value of newlines became '', which is no hostile value at all
# but "no pipeline layout", and then differed from the plain one).
random_value() {
    local n=$((RANDOM % 10 + 1))
    rv=
    for ((j = 0; j < n; j++)); do rv+=${pool[RANDOM % ${#pool[@]}]}; done
}
values=("${adversarial[@]}")
for ((r = 0; r < 12; r++)); do random_value; values+=("$rv"); done

# --- the stubs ----------------------------------------------------------------------
# Every external command the scripts run is a stub (a small sh script: it
# runs thousands of times): it logs its name and arguments to a file of its
# own (the two sides of a pipe run at once), each argument between
# two unit separators (\037, a control character, so never part of an
# accepted value), reads its input to the end (a pipe never breaks), and
# prints what the script needs to go on.  The log is then normalised: the
# value under test (between the markers Zq and qZ, which no test value
# holds) and candidate ids (hashes of the contract, which holds the value)
# are masked, and the commands of each script sorted (the two sides of a
# pipe log in either order).
mkdir -p "$tmp/bin"
cat > "$tmp/bin/stub" <<'STUB'
#!/bin/sh
n=${0##*/}
{ printf '%s' "$n"; for a in "$@"; do printf ' \037%s\037' "$a"; done; echo; } > "$MOEFLOW_TEST_LOG.$$"
while read -r _; do :; done
case $n in
sbatch) echo 42 ;; scontrol | head) echo n1 ;; wc) echo 1000 ;; dirname) echo . ;;
grep) exit 1 ;;
esac
exit 0
STUB
chmod +x "$tmp/bin/stub"
for c in sbatch srun scontrol head wc dirname grep mkdir cp tee awk cat nsys python touch id \
         date hostname uname sinfo nvidia-smi true; do
    ln -s stub "$tmp/bin/$c"
done
BASH_BIN=$(command -v bash)

normalise() {  # normalise LOG DIR: the stubs' log of one script of the study DIR, comparable across values
    local dir
    dir=$(printf '%s' "$2" | sed 's/[][\\.*^$/]/\\&/g')
    sed -E -e "s/$dir/@DIR@/g" -e 's/Zq([^q]|q[^Z])*qZ/@VALUE@/g' \
        -e ':w' -e 's/@VALUE@\x1f \x1f@VALUE@/@VALUE@/; tw' \
        -e 's/[0-9a-f]{64}/@ID@/g' "$1" | sort
}

# run_scripts DIR LOG: every script of DIR, in a scratch copy, logged.
run_scripts() {
    local dir=$1 log=$2 work=$tmp/run f rc
    rm -rf "$work" && cp -r "$dir" "$work" &&
        mkdir -p "$work"/results/{contract,fit,scale,profile,retune,validate} "$work/logs"
    for f in submit.sh contract.sbatch fit.sbatch scale.sbatch profile.sbatch retune.sbatch \
             validate.sbatch rank-env.sh; do
        rm -rf "$tmp/one" && mkdir "$tmp/one"
        (cd "$work" && env -i PATH="$tmp/bin" SLURM_ARRAY_TASK_ID=0 SLURM_ARRAY_JOB_ID=7 \
            SLURM_JOB_ID=7 SLURM_JOB_NODELIST=n1 SLURM_PROCID=0 SLURM_NTASKS=2 SLURM_LOCALID=0 \
            MOEFLOW_TEST_LOG="$tmp/one/cmd" "$BASH_BIN" "./$f" true \
            < /dev/null > /dev/null 2>&1)
        rc=$?
        cat "$tmp/one"/cmd.* > "$tmp/one.log" 2>/dev/null
        { echo "== $f: exit $rc"; normalise "$tmp/one.log" "$dir"; } >> "$log"
    done
}

# sbatch_args FILE: the arguments sbatch reads from FILE's #SBATCH lines, one
# a line, as sbatch 22.05 reads them (src/sbatch/opt.c: the scan stops at
# the first command; in a line, hetjob/packjob are blanked, quotes group,
# a backslash escapes the next byte even inside quotes, an unquoted # ends
# the line).
sbatch_args() {
    local line rest c q esc arg i started words
    while IFS= read -r line; do
        if [[ $line != '#SBATCH'* ]]; then
            [[ $line =~ ^[[:space:]]*(#|$) ]] && continue
            break
        fi
        rest=${line#\#SBATCH}
        if [[ $rest != *[\"\'\\#]* && ! $rest =~ [Hh][Ee][Tt][Jj][Oo][Bb]|[Pp][Aa][Cc][Kk][Jj][Oo][Bb] ]]; then
            read -ra words <<< "$rest"   # nothing to unquote: the fast path
            [ ${#words[@]} -gt 0 ] && printf '%s\n' "${words[@]}"
            continue
        fi
        shopt -s nocasematch
        while [[ $rest =~ (hetjob|packjob) ]]; do
            rest=${rest/"${BASH_REMATCH[1]}"/"$(printf '%*s' ${#BASH_REMATCH[1]} '')"}
        done
        shopt -u nocasematch
        q= esc= arg= started=
        for ((i = 0; i < ${#rest}; i++)); do
            c=${rest:i:1}
            if [ -n "$esc" ]; then arg+=$c esc= started=1
            elif [ "$c" = '\' ]; then esc=1 started=1
            elif [ -n "$q" ]; then if [ "$c" = "$q" ]; then q=; else arg+=$c; fi
            elif [ "$c" = '"' ] || [ "$c" = "'" ]; then q=$c started=1
            elif [ "$c" = '#' ]; then break
            elif [ "$c" = ' ' ] || [ "$c" = $'\t' ]; then
                [ -n "$started" ] && printf '%s\n' "$arg"
                arg= started=
            else arg+=$c started=1
            fi
        done
        [ -n "$started" ] && printf '%s\n' "$arg"
    done < "$1"
}

# static_ok DIR: bash -n, no control character, #SBATCH before any command.
static_ok() {
    local f bad=0
    for f in "$1"/*.sh "$1"/*.sbatch; do
        "$BASH_BIN" -n "$f" 2> "$tmp/syntax" || { echo "bash -n $f:"; cat "$tmp/syntax"; bad=1; }
        if grep -q $'[\x01-\x09\x0b-\x1f\x7f]' "$f"; then echo "$f holds a control character"; bad=1; fi
        awk '/^#SBATCH/ { last = NR } !/^[[:space:]]*(#|$)/ && !first { first = NR }
             END { exit !(last < first) }' "$f" || { echo "$f: an #SBATCH line after a command"; bad=1; }
    done
    return $bad
}

# expected_sbatch FIELD VALUE STAGE: the plain directives of STAGE's script
# with FIELD's own one carrying VALUE.
expected_sbatch() {
    local f=$1 val stage=$3
    val=$(printf '%s' "$2" | sed 's/[|&\\]/\\&/g')
    case $f in
    name) sed "s|^--job-name=moeflow-tiny-|--job-name=moeflow-$val-|" ;;
    cluster.partition | cluster.account | cluster.qos | cluster.reservation | cluster.constraint)
        sed "s|^--${f#cluster.}=.*|--${f#cluster.}=$val|" ;;
    cluster.time_limit) sed "s|^--time=.*|--time=$val|" ;;
    cluster.stage_time_limit."$stage") sed "s|^--time=.*|--time=$val|" ;;
    *) cat ;;
    esac
}

sbatch_same() {  # sbatch_same FIELD VALUE DIR: directives as the plain ones, FIELD's exact
    local f s bad=0
    for f in "$plain_dir"/*.sbatch; do
        s=${f##*/}
        [ -f "$f.args" ] || sbatch_args "$f" > "$f.args"
        expected_sbatch "$1" "$2" "${s%.sbatch}" < "$f.args" | sed -E 's/[0-9a-f]{64}/@ID@/' |
            sed "s|^--moe-study=.*|--moe-study=$(printf '%s' "$3" | sed 's/[|&\\]/\\&/g')|" |
            sort > "$tmp/want"
        sbatch_args "$3/$s" | sed -E 's/[0-9a-f]{64}/@ID@/' | sort > "$tmp/got"
        cmp -s "$tmp/want" "$tmp/got" || { echo "$s: #SBATCH as sbatch reads them:"; diff "$tmp/want" "$tmp/got"; bad=1; }
    done
    return $bad
}

gen() {  # gen OUT [STUDY]: moeflow gen of STUDY ($tmp/study.yaml)
    rm -rf "$1"
    "$M" gen --templates "$T" "${2:-$tmp/study.yaml}" -o "$1" > "$tmp/gen.out" 2>&1
}

# --- the plain run ----------------------------------------------------------------------
study > "$tmp/study.yaml"
plain_dir=$tmp/plain
gen "$plain_dir" || { cat "$tmp/gen.out" | diag; echo "1..0 # SKIP the plain study fails"; exit 1; }
tap_plan $(( ${#each[@]} + 4 ))
nf=$(( ${#each[@]} + ${#together[@]} ))
[ "$nstr" -eq "$nf" ]
tap_ok $? "the test covers every string field of the schema ($nf listed, $nstr in study_schema.c)"
static_ok "$plain_dir" > "$tmp/why" 2>&1; r=$?; diag < "$tmp/why"; tap_ok $r "the plain scripts pass the static checks"
# plain_log GROUP: the log of the scripts for plain values.  The free-text
# fields get plain values between the markers, masked as the hostile ones
# are, so that the logs compare.
plain_log() {
    local log=$tmp/plain-$1.log args=() f
    if [ ! -f "$log" ] && [ "$1" = together ]; then
        for f in "${together[@]}"; do args+=("$f" "\"${prefix[$f]}ZqplainqZ\""); done
        study "${args[@]}" > "$tmp/plain.yaml"
        gen "$tmp/plain-$1" "$tmp/plain.yaml" && run_scripts "$tmp/plain-$1" "$log"
    elif [ ! -f "$log" ]; then
        run_scripts "$plain_dir" "$log"
    fi
    echo "$log"
}

# check_value GROUP VALUE FIELD...: 0, or 1 with the reason on stdout.
# A free-text value goes between markers, after its field's prefix.  The
# launcher is split into words as the shell splits a simple command, quotes
# and all (moe_shsplit): the markers then land in its first and last word,
# and the words between them are masked as one value.
check_value() {
    local group=$1 val=$2 f args=() names= rc out=$tmp/out plog
    shift 2
    for f in "$@"; do
        case $group:$f in
        together:*) args+=("$f" "$(yaml_quote "${prefix[$f]}Zq${val}qZ")") ;;
        *) args+=("$f" "$(yaml_quote "$val")") ;;
        esac
        names+="${names:+|}${f//./\\.}"
    done
    study "${args[@]}" > "$tmp/study.yaml"
    gen "$out"; rc=$?
    if [ $rc -ne 0 ]; then
        # one error (moeflow: FILE:LINE:COL: FIELD: why), or a list of
        # them, each FIELD one of those under test
        [ $rc -eq 2 ] && grep -qE "^(moeflow: |  ).*study.yaml:[0-9]+:[0-9]+: ($names)[:.\[]" "$tmp/gen.out" &&
            ! grep -E "^(moeflow: |  ).*study.yaml:[0-9]+:[0-9]+: " "$tmp/gen.out" |
                grep -qvE "study.yaml:[0-9]+:[0-9]+: ($names)[:.\[]" &&
            return 0
        echo "refused without naming $* (exit $rc):"; cat "$tmp/gen.out"; return 1
    fi
    if has_control "$val"; then echo "accepted a control character in $*"; return 1; fi
    [ -n "$gen_only" ] && return 0
    static_ok "$out" || return 1
    [ "$group" = together ] || sbatch_same "$1" "$val" "$out" || return 1
    [ "$group" = together ] && { sbatch_same "" "" "$out" || return 1; }
    rm -f "$tmp/hostile.log"
    run_scripts "$out" "$tmp/hostile.log"
    [ -e "$tmp/run/PWNED" ] && { echo "a script ran touch PWNED"; return 1; }
    plog=$(plain_log "$group")
    cmp -s "$plog" "$tmp/hostile.log" || { echo "the commands differ:"; diff "$plog" "$tmp/hostile.log" | head -20; return 1; }
    return 0
}

check_all() {  # check_all GROUP DESCRIPTION FIELD...: one TAP point over every value
    local group=$1 desc=$2 failed=0 accepted=0 refused=0 val
    shift 2
    : > "$tmp/why"
    for val in "${values[@]}"; do
        if check_value "$group" "$val" "$@" >> "$tmp/why" 2>&1; then
            if [ -d "$tmp/out" ]; then accepted=$((accepted + 1)); else refused=$((refused + 1)); fi
        else
            echo "... for the value $(printf '%q' "$val")" >> "$tmp/why"
            failed=$((failed + 1))
        fi
    done
    [ $failed -eq 0 ] || head -40 "$tmp/why" | diag
    tap_ok $failed "$desc: ${#values[@]} values, $accepted written as plain data, $refused refused naming the field$how"
}

for f in "${each[@]}"; do
    check_all each "$f" "$f"
done
check_all together "${together[*]}" "${together[@]}"

# --- -o ------------------------------------------------------------------------------------------
study > "$tmp/study.yaml"
failed=0 accepted=0 refused=0
: > "$tmp/why"
for val in "${values[@]}"; do
    d=${val//\//_}
    [ -z "$d" ] || [ "$d" = . ] || [ "$d" = .. ] && continue
    mkdir -p "$tmp/o" && rm -rf "$tmp/o"/*
    gen "$tmp/o/$d"; rc=$?
    if [ $rc -ne 0 ]; then
        if [ $rc -eq 1 ] && grep -q '^moeflow: -o: ' "$tmp/gen.out"; then refused=$((refused + 1)); continue; fi
        { echo "-o $(printf '%q' "$d"): exit $rc"; cat "$tmp/gen.out"; } >> "$tmp/why"; failed=$((failed + 1)); continue
    fi
    if has_control "$d" || { [ -z "$gen_only" ] &&
        ! { static_ok "$tmp/o/$d" && sbatch_same -o "" "$tmp/o/$d"; } >> "$tmp/why" 2>&1; }; then
        echo "... for -o $(printf '%q' "$d")" >> "$tmp/why"; failed=$((failed + 1)); continue
    fi
    accepted=$((accepted + 1))
done
[ $failed -eq 0 ] || head -40 "$tmp/why" | diag
if [ -n "$gen_only" ]; then
    tap_ok $failed "-o: $accepted paths written, $refused refused naming -o$how"
else
    tap_ok $failed "-o: $accepted paths written (--moe-study read back exactly), $refused refused naming -o"
fi
tap_done
