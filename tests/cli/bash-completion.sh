#!/bin/bash
# etc/bash-completion/moeflow offers exactly the subcommands of gen/commands.c,
# exactly each subcommand's getopt_long options, and the value choices that
# the commands' own --help prints.  A new option or command fails here until
# the completion knows it.
. "$MOEFLOW_SRCDIR/tests/integration/lib.sh"
. "$MOEFLOW_SRCDIR/tests/cli/options-lib.sh"
COMPLETION=$S/etc/bash-completion/moeflow
M=$MOEFLOW_BIN
tmp=$(mktemp -d) || exit 1
trap 'rm -rf "$tmp"' EXIT

commands=$(code_commands)
tap_plan $(( $(echo "$commands" | wc -w) + 12 ))

# Completes the last word of "moeflow WORD... LAST" as bash would, one
# candidate per line.
complete_words() {
    (cd "$tmp" && bash -c '
        . "$1"; shift
        COMP_WORDS=("$@"); COMP_CWORD=$(( $# - 1 ))
        _moeflow
        printf "%s\n" "${COMPREPLY[@]}"' _ "$COMPLETION" "$@") | sed '/^$/d' | sort -u
}

# ok_same DESCRIPTION A B: the same set of lines.
ok_same() {
    local a b
    a=$(missing_from "$2" "$3")
    b=$(missing_from "$3" "$2")
    [ -z "$a$b" ] || { echo "only in the code: $a"; echo "only in the completion: $b"; } | diag
    tap_ok "$([ -z "$a$b" ]; echo $?)" "$1"
}

bash -c '. "$1" && complete -p moeflow' _ "$COMPLETION" > "$tmp/complete" 2>&1
ok "sourcing the completion registers it for moeflow" has "$tmp/complete" '-F _moeflow moeflow$'

ok_same "'moeflow <TAB>' offers gen/commands.c's subcommands and main.c's options" \
    "$commands
$(code_global_options | sed 's/^/--/')" "$(complete_words moeflow '')"

for c in $commands; do
    ok_same "'moeflow $c --<TAB>' offers exactly $c's getopt_long options" \
        "$(code_command_options "$c" | sed 's/^/--/')" "$(complete_words moeflow "$c" --)"
done

# Value choices, as each command's --help spells them.
stages=$("$M" gen --help | sed -nE 's/.*--stage STAGE .*\(([a-z|]+)\).*/\1/p' | tr '|' '\n')
ok_same "'moeflow gen --stage <TAB>' offers the stages of moeflow gen --help" \
    "$stages" "$(complete_words moeflow gen --stage '')"
bottlenecks=$("$M" gen --help | tr '\n' ' ' |
    sed -nE 's/.*--for BOTTLENECK +[^(]*\(([a-z, ]+)\).*/\1/p' | tr -s ', ' '\n\n')
ok_same "'moeflow gen --for <TAB>' offers the bottlenecks of moeflow gen --help" \
    "$bottlenecks" "$(complete_words moeflow gen --for '')"
presets=$("$M" fit --help | sed -n 's/^presets: //p' | tr ' ' '\n')
ok_same "'moeflow fit --preset <TAB>' offers the presets of moeflow fit --help" \
    "$presets" "$(complete_words moeflow fit --preset '')"
modes=$("$M" topo --help | sed -nE 's/.*--mode ([a-z|]+)\].*/\1/p' | tr '|' '\n')
ok_same "'moeflow topo --mode <TAB>' offers the modes of moeflow topo --help" \
    "$modes" "$(complete_words moeflow topo --mode '')"
gpus=$("$M" fit --help | sed -nE 's/.*--gpu ([a-z0-9|]+) .*/\1/p' | tr '|' '\n')
ok_same "'moeflow fit --gpu <TAB>' offers the GPU types of moeflow fit --help (lib/fit/gpu.h)" \
    "$gpus" "$(complete_words moeflow fit --gpu '')"
impls=$("$M" fit --help | sed -nE 's/.*--transformer-impl ([a-z|]+) .*/\1/p' | tr '|' '\n')
ok_same "'moeflow fit --transformer-impl <TAB>' offers te and local" \
    "$impls" "$(complete_words moeflow fit --transformer-impl '')"
verbs=$("$M" contract --help 2>&1 | sed -nE 's/^(usage:)? *moeflow contract ([a-z]+) .*/\2/p')
ok_same "'moeflow contract <TAB>' offers the verbs of moeflow contract --help" \
    "$verbs" "$(complete_words moeflow contract '')"

# Arguments that are files complete as files.
touch "$tmp/rank0.json.gz"
mkdir "$tmp/outdir"
ok_same "'moeflow overlap ra<TAB>' completes a trace file" "rank0.json.gz" \
    "$(complete_words moeflow overlap ra)"
ok_same "'moeflow gen study -o o<TAB>' completes directories only" "outdir" \
    "$(complete_words moeflow gen study.yaml -o o)"
ok_same "'moeflow place --hostfile ra<TAB>' completes files" "rank0.json.gz" \
    "$(complete_words moeflow place --hostfile ra)"
tap_done
