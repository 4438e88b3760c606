#!/bin/bash
# Rule 3 (lib/README.md), a seal covers bytes, explored: a generated study
# with a sealed retune run record, its frozen baseline and its winner; each
# case corrupts one sealed file, its seal or its folder in one of many ways
# (a NUL and bytes after it, a NUL inside, a byte changed, bytes appended,
# a mode others can write, another owner, an edit resealed) chosen by a
# seeded generator.  For every case:
#   - `contract winner` and `gen --winners` accept exactly what `contract
#     verify` accepts (one function, moe_contract_check_run);
#   - whatever verify accepts, `sha256sum -c` accepts too, holds no NUL and
#     nobody but the owner can write;
#   - every corruption but a valid resealed edit is refused.
. "$MOEFLOW_SRCDIR/tests/integration/lib.sh"
require_root
M=$MOEFLOW_BIN
U=nobody
N=${MOEFLOW_SEAL_CASES:-48}
tap_plan $((N + 2))
tmp=$(mktemp -d /tmp/mfsp.XXXXXX)
trap 'rm -rf "$tmp"' EXIT
chmod 0755 "$tmp"
export MOEFLOW_TEMPLATE_DIR=$MOEFLOW_SRCDIR/templates
as_user() { runuser -u "$U" -- "$@"; }

P=$tmp/pristine
"$M" gen "$MOEFLOW_SRCDIR/etc/studies/tiny-moe-2gpu.yaml" -o "$P" > "$tmp/out" 2>&1 ||
    { diag < "$tmp/out"; echo "Bail out! gen failed"; exit 1; }
R=$(awk -F'\t' '$1 == "retune" && $4 == "ep_overlap" { print $3 }' "$P/candidates.tsv")
C=$(awk -F'\t' '$1 == "contract" { print $3 }' "$P/candidates.tsv")
mkdir -p "$P/runs/6_0"
sed "s/,\"semantics\":/,\"run\":{\"candidate\":\"$R\",\"id\":\"6_0\",\"stage\":\"retune\"},\"semantics\":/" \
    "$P/contracts/$R.json" | tr -d '\n' > "$P/runs/6_0/contract.json"
(cd "$P/runs/6_0" && sha256sum contract.json > contract.json.sha256 && chmod 0444 contract.json*)
chown -R "$U" "$P" && chmod -R go-w "$P"
as_user "$M" contract freeze "$P" --from "$P/contracts/$C.json" > "$tmp/out" 2>&1 &&
    as_user "$M" contract winner "$P" "$P/runs/6_0" >> "$tmp/out" 2>&1
tap_ok $? "the fixture: a frozen baseline, a sealed retune record and its winner"
as_user "$M" contract verify "$P/runs/6_0" > "$tmp/out" 2>&1 &&
    as_user "$M" gen "$P/study.yaml" --stage validate --winners "$P" >> "$tmp/out" 2>&1
tap_ok $? "... which verify and gen --winners accept"
WIN=$(cd "$P/winners" && ls ./*.json | cut -c3-)

# verdict S: "accept" or "refuse" for each judge, in one line
judge() {
    local s=$1 v w g
    as_user "$M" contract verify "$s" > /dev/null 2>&1 &&
        as_user "$M" contract verify "$s/runs/6_0" > /dev/null 2>&1 && v=accept || v=refuse
    rm -rf "$s/winners.bak" && mv "$s/winners" "$s/winners.bak"
    as_user "$M" contract winner "$s" "$s/runs/6_0" > /dev/null 2>&1 && w=accept || w=refuse
    rm -rf "$s/winners" && mv "$s/winners.bak" "$s/winners"
    as_user "$M" gen "$s/study.yaml" --stage validate --winners "$s" > /dev/null 2>&1 && g=accept || g=refuse
    echo "$v $w $g"
}

# files whose bytes verify vouches for: each agrees with its seal, has no
# NUL, and nobody but its owner can write it
vouched() {
    local s=$1 f
    (cd "$s/contract" && sha256sum -c --quiet frozen.json.sha256) &&
        (cd "$s/runs/6_0" && sha256sum -c --quiet contract.json.sha256) || return 1
    for f in "$s/contract" "$s/contract/frozen.json"* "$s/runs/6_0" "$s/runs/6_0/contract.json"*; do
        [ "$(stat -c %U "$f")" = "$U" ] && [ $(( 0$(stat -c %a "$f") & 022 )) = 0 ] || return 1
        [ -f "$f" ] && [ "$(tr -d '\000' < "$f" | wc -c)" != "$(wc -c < "$f")" ] && return 1
    done
    return 0
}

# corrupt S KIND TARGET RAND: one corruption; TARGET is a sealed file
corrupt() {
    local s=$1 kind=$2 f=$1/$3 r=$4 size
    chmod u+w "$f" "$f.sha256" "$(dirname "$f")"
    size=$(wc -c < "$f")
    case $kind in
    nul-append) printf '\000%s' "x$r" >> "$f" ;;
    nul-inside) printf '\000' | dd of="$f" bs=1 seek=$((r % size)) conv=notrunc status=none ;;
    byte) printf 'Z' | dd of="$f" bs=1 seek=$((r % size)) conv=notrunc status=none ;;
    append) printf ' ' >> "$f" ;;
    mode-file) chmod "$(printf %o $(( 0444 | (r % 2 ? 020 : 002) )))" "$f" ;;
    mode-seal) chmod "$(printf %o $(( 0444 | (r % 2 ? 020 : 002) )))" "$f.sha256" ;;
    mode-dir) chmod "$(printf %o $(( 0755 | (r % 2 ? 020 : 002) )))" "$(dirname "$f")" ;;
    owner) chown daemon "$f" ;;
    owner-seal) chown daemon "$f.sha256" ;;
    resealed-nul) printf '\000%s' "x$r" >> "$f"
                  (cd "$(dirname "$f")" && sha256sum "$(basename "$f")" > "$(basename "$f").sha256") ;;
    esac
    case $kind in mode-* | owner*) ;; *) chmod a-w "$f" "$f.sha256" ;; esac
    case $kind in mode-dir) ;; *) chmod go-w,u+w "$(dirname "$f")" ;; esac
}

KINDS=(nul-append nul-inside byte append mode-file mode-seal mode-dir owner owner-seal resealed-nul)
TARGETS=(contract/frozen.json runs/6_0/contract.json "winners/$WIN")
seed=38
for i in $(seq "$N"); do
    seed=$(( (seed * 1103515245 + 12345) % 2147483648 ))
    kind=${KINDS[seed % ${#KINDS[@]}]} target=${TARGETS[(seed / 16) % 3]}
    s=$tmp/case$i
    cp -a "$P" "$s"
    corrupt "$s" "$kind" "$target" $((seed / 64))
    read -r v w g < <(judge "$s")
    why=
    if [ "$target" = "winners/$WIN" ]; then
        # verify and winner do not read winners/: gen --winners alone judges it
        [ "$g" = refuse ] || why="gen --winners accepted a corrupted winner"
    else
        [ "$v" = "$w" ] && [ "$v" = "$g" ] || why="verify $v, winner $w, gen --winners $g"
        [ -z "$why" ] && [ "$v" = accept ] && ! vouched "$s" && why="verify accepts what sha256sum -c, the owner or the mode refuses"
        [ -z "$why" ] && [ "$v" = accept ] && why="a corruption ($kind) accepted"
    fi
    [ -n "$why" ] && diag <<< "case $i: $kind of $target: $why"
    tap_ok $([ -z "$why" ]; echo $?) "case $i: $kind of $target: refused alike by every judge"
    rm -rf "$s"
done
tap_done
