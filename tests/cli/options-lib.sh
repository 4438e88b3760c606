# shellcheck shell=bash
# What the code accepts and what the man pages and the bash completion say,
# each read from its source so that a new option, subcommand or plugstack
# key shows up here without editing the tests.  Sourced by
# tests/cli/doc-options.sh and tests/cli/bash-completion.sh.
S=$MOEFLOW_SRCDIR

# --- the code -----------------------------------------------------------------

# Subcommand names, from the table in gen/commands.c.
code_commands() {
    sed -n 's/^ *{ *"\([a-z][a-z0-9-]*\)", *".*/\1/p' "$S/gen/commands.c"
}

# The gen/*.c files behind subcommand $1: the file defining cmd_$1 and the
# gen/ helpers it includes (fit and layouts share gen/fitargs.c).
code_command_files() {
    local main h
    main=$(grep -l "^int cmd_$1(int argc, char \*\*argv)" "$S"/gen/*.c | head -1)
    [ -n "$main" ] || return 1
    echo "$main"
    for h in $(sed -n 's/^#include "\([a-z_]*\)\.h"$/\1/p' "$main"); do
        [ -f "$S/gen/$h.c" ] && echo "$S/gen/$h.c"
    done
}

# Long options of getopt_long tables: { "name", no_argument, ... }.
getopt_longopts() {
    grep -ohE '\{ *"[a-z][a-z0-9-]*", *(no|required|optional)_argument' "$@" |
        sed -E 's/^\{ *"([^"]*)".*/\1/' | sort -u
}

code_command_options() {
    local files
    mapfile -t files < <(code_command_files "$1")
    getopt_longopts "${files[@]}"
}

# "LONG KEY" for each option of command $1's tables, KEY its short letter
# or - for a long-only option.
code_command_keys() {
    local files
    mapfile -t files < <(code_command_files "$1")
    grep -ohE "\{ *\"[a-z][a-z0-9-]*\", *(no|required|optional)_argument, *('.'|0)" "${files[@]}" |
        sed -E "s/^\{ *\"([^\"]*)\", *[a-z_]+, *'?([^',]*)'?$/\1 \2/; s/ 0$/ -/" | sort -u
}

# main.c's own options (it compares argv[1] by hand).
code_global_options() {
    grep -ohE 'strcmp\(argv\[1\], "--[a-z-]+"\)' "$S/gen/main.c" |
        sed -E 's/.*"--([a-z-]+)".*/\1/' | sort -u
}

# SPANK options: { "moe-...", "ARG", "help", has_arg, val, cb } in spank/.
code_spank_options() {
    grep -ohE '\{ *"[a-z][a-z0-9-]*", *("[^"]*"|NULL), *$|\{ *"[a-z][a-z0-9-]*", *("[^"]*"|NULL), *"' \
        "$S"/spank/*.c | sed -E 's/^\{ *"([^"]*)".*/\1/' | sort -u
}

# Plugstack keys: the config_keys[] table of lib/core/plugin_config.c.
code_plugstack_keys() {
    sed -n '/config_keys\[\] = {/,/^};/p' "$S/lib/core/plugin_config.c" |
        sed -nE 's/^ *\{ *"([a-z_]+)", *apply_.*/\1/p' | sort -u
}

# --- the man pages --------------------------------------------------------------

# Man source to plain words: \- is -, font escapes go.
man_text() { sed -e 's/\\-/-/g' -e 's/\\f[BIRPV]//g' -e 's/\\(aq/'"'"'/g' "$@"; }

# Every --option named anywhere in the input.
dashdash() { grep -oE -- '--[a-z][a-z0-9-]*[a-z0-9]' | sed 's/^--//' | sort -u; }

# The lines of page $1's sections (.SH or .SS) whose title matches the ERE $2.
man_sections() {
    awk -v re="$2" '
        /^\.S[HS] / { t = $0; sub(/^\.S[HS] +/, "", t); gsub(/"/, "", t); in_s = (t ~ re); next }
        in_s { print }' "$1"
}

# The tag line of every .TP item of the input: an option list's entries.
tp_tags() { awk 'tag { print; tag = 0 } /^\.TP/ { tag = 1 }'; }

# moeflow.1's subsection(s) for command $1: ".SS gen", ".SS "fit and layouts options"".
cmd_section_re() { echo "(^|[ ,])$1([ ,]|$)"; }

# Pages that document command $1: moeflow.1's section for it and its global
# OPTIONS, and doc/moeflow-$1.1 where there is one.
man_command_text() {
    man_sections "$S/doc/moeflow.1" "$(cmd_section_re "$1")|^OPTIONS$" | man_text
    [ -f "$S/doc/moeflow-$1.1" ] && man_text "$S/doc/moeflow-$1.1"
}

man_command_options() { man_command_text "$1" | dashdash; }

# The options that man pages list for command $1: .TP tags and SYNOPSIS lines.
man_command_listed() {
    {
        man_sections "$S/doc/moeflow.1" "$(cmd_section_re "$1")" | tp_tags
        man_sections "$S/doc/moeflow.1" "$(cmd_section_re "$1")" | grep -E '^\.(B|RB|BR|BI|nf)? ?.*moeflow '"$1"
        man_sections "$S/doc/moeflow.1" "$(cmd_section_re "$1")" |
            awk '/^\.(RB|BR) \[/ && !seen_pp { print } /^\.PP/ { seen_pp = 1 }'
        if [ -f "$S/doc/moeflow-$1.1" ]; then
            tp_tags < "$S/doc/moeflow-$1.1"
            man_sections "$S/doc/moeflow-$1.1" '^SYNOPSIS$'
        fi
    } | man_text | dashdash
}

# moeflow(1)'s shared vocabulary, one line per entry: "LONG SHORT CMD..."
# (SHORT - when the entry gives none), from each .TP tag of "Shared
# options" and the entry's "Commands:" line (parentheses dropped).
man_vocabulary() {
    man_sections "$S/doc/moeflow.1" '^Shared options$' | man_text | awk '
        /^\.TP/ { tag = 1; next }
        tag { long = ""; short = "-"
              for (i = 1; i <= NF; i++) {
                  w = $i; gsub(/"/, "", w)
                  if (w ~ /^--[a-z]/ && long == "") long = substr(w, 3)
                  else if (w ~ /^-[a-zA-Z]$/) short = substr(w, 2)
              }
              tag = 0; next }
        /^Commands:/ { line = $0; sub(/^Commands: */, "", line); gsub(/\([^)]*\)/, "", line)
                       gsub(/[,.]/, " ", line); gsub(/ +/, " ", line)
                       print long " " short " " line }'
}

# The options the SPANK plugin's page lists (its OPTIONS section).
man_spank_listed() { man_sections "$S/doc/spank_moeflow.8" '^OPTIONS$' | tp_tags | man_text | dashdash; }
man_spank_options() { man_text "$S/doc/spank_moeflow.8" | dashdash; }

# Plugstack keys listed in spank_moeflow(8): "key=" at the start of a tag.
man_plugstack_keys() {
    man_sections "$S/doc/spank_moeflow.8" '^PLUGSTACK ARGUMENTS$' | tp_tags | man_text |
        sed -nE 's/^\.[A-Z]* *([a-z_]+)=.*/\1/p' | sort -u
}

# --- set arithmetic --------------------------------------------------------------

# Lines of $1 missing from $2 (both sorted lists, as strings).
missing_from() { comm -23 <(printf '%s\n' "$1" | sed '/^$/d' | sort -u) <(printf '%s\n' "$2" | sed '/^$/d' | sort -u); }

# ok_subset DESCRIPTION WANT HAVE: every line of WANT is in HAVE, and WANT
# has at least one (an extractor that finds nothing is broken, and an
# empty list is a subset of anything).
ok_subset() {
    local miss
    if [ -z "$(printf '%s\n' "$2" | sed '/^$/d')" ]; then
        echo "nothing to check: the list of what should be there is empty" | diag
        tap_ok 1 "$1"
        return
    fi
    miss=$(missing_from "$2" "$3")
    [ -z "$miss" ] || { echo "missing:"; echo "$miss"; } | diag
    tap_ok "$([ -z "$miss" ]; echo $?)" "$1"
}
