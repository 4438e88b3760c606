#!/bin/bash
# Every option the code accepts is in its man page, and every option a man
# page lists is accepted.  The lists come from the code itself (the command
# table, the getopt_long tables, the SPANK option tables, the plugstack key
# table) and from the pages' option lists, so a new option without
# documentation, or a documented option that went away, fails here.
. "$MOEFLOW_SRCDIR/tests/integration/lib.sh"
. "$MOEFLOW_SRCDIR/tests/cli/options-lib.sh"

commands=$(code_commands)
# four checks per subcommand, then the global options, the plugin's options
# and keys both ways, the plugstack snippet, the command list, and the pages
n_pages=$(ls "$S"/doc/*.[1-8] | wc -l)
# moeflow(1)'s shared vocabulary: one check per entry, one more per short
# letter it fixes, and one that the list is there
vocab=$(man_vocabulary)
n_vocab=$(printf '%s\n' "$vocab" | sed '/^$/d' | wc -l)
n_short=$(printf '%s\n' "$vocab" | awk '$2 != "-"' | wc -l)
tap_plan $(( 4 * $(echo "$commands" | wc -w) + 12 + n_pages + n_vocab + n_short ))

# The usage of $1 --help, with mentions of other commands ("for moeflow gen
# --stage", "nsys export --type", "srun --distribution") cut off: their
# options are theirs.
help_options() {
    "$MOEFLOW_BIN" "$1" --help 2>&1 |
        sed -E -e "s/moeflow ($(echo "$commands" | grep -vx "$1" | paste -sd'|'))( .*|$)//" \
            -e 's/(nsys|srun|sbatch|salloc|lstopo|torchrun) .*//' | dashdash
}

for c in $commands; do
    code=$(code_command_options "$c")
    ok_subset "moeflow $c: every option in the code is in its man page" "$code" "$(man_command_options "$c")"
    ok_subset "moeflow $c: every option its man pages list is accepted" "$(man_command_listed "$c")" "$code"
    ok_subset "moeflow $c --help names only accepted options" "$(help_options "$c")" "$code"
    "$MOEFLOW_BIN" "$c" --help > /dev/null 2>&1
    tap_ok $? "moeflow $c --help exits 0"
done

global=$(code_global_options)
ok_subset "moeflow's own options (main.c) are in moeflow(1)" "$global" \
    "$(man_sections "$S/doc/moeflow.1" '^OPTIONS$' | man_text | dashdash)"
ok_subset "moeflow(1)'s OPTIONS are main.c's" \
    "$(man_sections "$S/doc/moeflow.1" '^OPTIONS$' | tp_tags | man_text | dashdash)" "$global"

ok_subset "every SPANK option (spank/*.c) is in spank_moeflow(8)" "$(code_spank_options)" "$(man_spank_options)"
ok_subset "every option spank_moeflow(8) lists is registered by the plugin" "$(man_spank_listed)" \
    "$(code_spank_options)"
ok_subset "every plugstack key (lib/core/plugin_config.c) is in spank_moeflow(8)" "$(code_plugstack_keys)" \
    "$(man_plugstack_keys)"
ok_subset "every plugstack key spank_moeflow(8) lists is parsed" "$(man_plugstack_keys)" \
    "$(code_plugstack_keys)"
ok_subset "the plugstack snippet's comments name every key" "$(code_plugstack_keys)" \
    "$(sed -nE 's/^# +([a-z_]+)=.*/\1/p' "$S/etc/plugstack.conf.d/moeflow.conf.in")"

# The command list: gen/commands.c, moeflow --help and moeflow(1) agree.
man_cmds=$(grep -E '^\.SS [a-z]+$' "$S/doc/moeflow.1" | sed 's/^\.SS //')
help_cmds=$("$MOEFLOW_BIN" --help | sed -nE 's/^  ([a-z][a-z0-9-]*) .*/\1/p')
ok_subset "every subcommand has its own section in moeflow(1)" "$commands" "$man_cmds"
ok_subset "moeflow(1) and moeflow --help name the same subcommands as gen/commands.c" \
    "$man_cmds
$help_cmds" "$commands"

# The shared vocabulary: an option listed there is taken by exactly the
# commands it names, under that one name, and a short letter it gives means
# that option in every command that has the option or the letter.
ok "moeflow(1) lists a shared vocabulary (SHARED VOCABULARY, Shared options)" \
    test "$n_vocab" -ge 8
keys=$(for c in $commands; do code_command_keys "$c" | sed "s/^/$c /"; done)
while read -r long short listed; do
    [ -n "$long" ] || continue
    have=$(printf '%s\n' "$keys" | awk -v l="$long" '$2 == l { print $1 }' | sort -u)
    want=$(printf '%s\n' $listed | sort -u)
    miss="$(missing_from "$have" "$want")$(missing_from "$want" "$have")"
    [ -z "$miss" ] || echo "--$long: the code's commands: $(echo $have); moeflow(1): $(echo $want)" | diag
    tap_ok "$([ -z "$miss" ]; echo $?)" "vocabulary --$long: taken by exactly $(echo $want)"
    [ "$short" = - ] && continue
    bad=$(printf '%s\n' "$keys" | awk -v l="$long" -v k="$short" \
        '($2 == l && $3 != k) || ($3 == k && $2 != l) { print $1 ": --" $2 " -" $3 }')
    [ -z "$bad" ] || echo "$bad" | diag
    tap_ok "$([ -z "$bad" ]; echo $?)" "vocabulary -$short is --$long in every command that has either"
done <<< "$vocab"

# Every environment variable the CLI reads is in moeflow(1)'s ENVIRONMENT.
ok_subset "every variable gen/ reads with getenv() is in moeflow(1)'s ENVIRONMENT" \
    "$(grep -ohE 'getenv\("[A-Z_]+"\)' "$S"/gen/*.c | sed -E 's/getenv\("(.*)"\)/\1/' | sort -u)" \
    "$(man_sections "$S/doc/moeflow.1" '^ENVIRONMENT$' | tp_tags | man_text | sed -nE 's/^\.B +([A-Z_]+)$/\1/p')"

# Every moeflow page a page refers to ("moeflow-study (5)") is in doc/.
refs=$(man_text "$S"/doc/*.[1-8] | grep -ohE '^\.BR (moeflow|spank_moeflow)[a-z-]* \([1-8]\)' |
    sed -E 's/^\.BR ([^ ]+) \(([1-8])\)$/\1.\2/' | sort -u)
ok_subset "every moeflow page named in a SEE ALSO or the text is in doc/" "$refs" \
    "$(cd "$S/doc" && ls ./*.[1-8] | sed 's|^\./||')"

# groff finds nothing to warn about in any page.
for page in "$S"/doc/*.[1-8]; do
    warn=$(LC_ALL=C.UTF-8 groff -man -Tutf8 -ww -z "$page" 2>&1)
    [ -z "$warn" ] || echo "$warn" | diag
    tap_ok "$([ -z "$warn" ]; echo $?)" "groff -ww: no warnings in $(basename "$page")"
done
tap_done
