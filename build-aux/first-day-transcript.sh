#!/bin/bash
# Records doc/first-day-transcript.txt: a new user's first day, as root on
# this machine, following README.md literally on a fresh clone of REPO,
# with no moeflow plugin anywhere: the set-up command, the first steps on
# their own model, then a local Slurm cluster whose plugstack has no
# moeflow plugin, where gen refuses the default study and the study with
# cluster.plugin: none runs its whole chain.  The trainer on the cluster is
# the test double (tests/doubles/fake-megatron: invented step times) and nsys
# tests/doubles/bin/nsys, as in README's walk-through.  Commands come from README's own code blocks where
# README gives them; every output is the real one, long build output cut
# to its last lines.
#
#   build-aux/first-day-transcript.sh REPO OUT
set -u
repo=${1:?usage: first-day-transcript.sh REPO OUT}
out=${2:?usage: first-day-transcript.sh REPO OUT}
W=/tmp/first-day
rm -rf "$W" /tmp/fd-walk
mkdir -p "$W"
exec 3> "$out"

say() { printf '%s\n' "$*" >&3; }
# run CMD: shows "# CMD", runs it in the clone, shows its output and, when
# it is not 0, its exit status.  TAIL=N keeps the last N lines.
run() {
    local rc
    say "# $1"
    (cd "$W/moeflow" 2> /dev/null || cd "$W" || exit; bash -c "$1") > "$W/out" 2>&1
    rc=$?
    if [ -n "${TAIL:-}" ] && [ "$(wc -l < "$W/out")" -gt "$TAIL" ]; then
        say "... ($(( $(wc -l < "$W/out") - TAIL )) lines of apt, autotools and make output)"
        tail -n "$TAIL" "$W/out" >&3
    else
        cat "$W/out" >&3
    fi
    [ "$rc" = 0 ] || say "[exit $rc]"
    return 0
}
# README's block: the lines of the first ```sh block after a heading.
readme_sh() {
    awk -v h="$1" 'index($0, h) == 1 { on = 1 } on && /^```sh/ { grab = 1; next }
                   grab && /^```/ { exit } grab { print }' "$W/moeflow/README.md"
}

say "# A new user's first day with moeflow: README.md followed literally on a fresh clone,"
say "# as root on Debian 12 (2 CPUs), with no moeflow plugin on the cluster.  Recorded by"
say "# build-aux/first-day-transcript.sh on $(date -u +%Y-%m-%d) from $(git -C "$repo" rev-parse --short HEAD)."
say ""
run "git clone -q $repo $W/moeflow && cd $W/moeflow && git log --oneline -1"

say ""
say "## README, Set up: the first command"
TAIL=12 run "$(readme_sh '## Set up')"

say ""
say "## README, First steps: the commands of its console block"
# one command per "# " line and its indented continuation lines
python3 - "$W/moeflow/README.md" > "$W/first-steps.cmds" <<'EOF'
import sys
block = open(sys.argv[1]).read().split("\n## First steps", 1)[1].split("```console", 1)[1]
cmds, cur = [], None
for line in block.split("```", 1)[0].splitlines():
    if line.startswith("# "):
        if cur is not None:
            cmds.append(cur)
        cur = line[2:]
    elif line.startswith("    ") and cur is not None:
        cur += "\n" + line
    elif cur is not None:
        cmds.append(cur)
        cur = None
if cur is not None:
    cmds.append(cur)
print("\0".join(cmds), end="")
EOF
while IFS= read -r -d '' c; do run "$c"; done < <(cat "$W/first-steps.cmds"; printf '\0')

say ""
say "## README, On your cluster: a Slurm without the moeflow plugin"
say "# (a local cluster, tests/cluster/localcluster.sh, with no --plugin: its plugstack.conf is empty)"
run "tests/cluster/localcluster.sh up --prefix /tmp/fd-lc --nodes 1 2>&1 | tail -n 1"
export SLURM_CONF=/tmp/fd-lc/etc/slurm.conf
run "sbatch --help | grep -c -- --moe-stage"
run "id slurmtest > /dev/null 2>&1 || useradd -m slurmtest; install -d -o slurmtest -m 0755 /tmp/fd-walk /tmp/fd-walk/bin && install -m 0755 _build/gen/moeflow tests/doubles/fake-megatron tests/doubles/bin/nsys /tmp/fd-walk/bin/ && cp -rL templates tests/data/megatron/argparse-core_v0.19.0.txt /tmp/fd-walk/ && chmod -R a+rX /tmp/fd-walk"
as='runuser -u slurmtest -- env SLURM_CONF=/tmp/fd-lc/etc/slurm.conf PATH=/tmp/fd-walk/bin:/usr/bin:/bin MOEFLOW_TEMPLATE_DIR=/tmp/fd-walk/templates'
run "sed 's|command: python pretrain_gpt.py|command: /tmp/fd-walk/bin/fake-megatron /tmp/fd-walk/argparse-core_v0.19.0.txt|' etc/studies/tiny-moe-2gpu.yaml > /tmp/fd-walk/tiny.yaml"
run "$as moeflow gen /tmp/fd-walk/tiny.yaml -o /tmp/fd-walk/tiny"
run "sed -i 's|^  launcher:|  plugin: none\n  launcher:|' /tmp/fd-walk/tiny.yaml && grep -A1 '^  plugin' /tmp/fd-walk/tiny.yaml"
run "$as moeflow gen /tmp/fd-walk/tiny.yaml -o /tmp/fd-walk/tiny | tail -n 2"
run "grep -c -- '--moe-stage' /tmp/fd-walk/tiny/*.sbatch | sort | uniq -c; grep -m1 'contract check' /tmp/fd-walk/tiny/scale.sbatch"
run "cd /tmp/fd-walk/tiny && $as ./submit.sh"
run "timeout 900 bash -c 'while [ -n \"\$(squeue -h)\" ]; do sleep 1; done'; cat /tmp/fd-walk/tiny/results/*/*.rc | sort | uniq -c"
run "grep -h 'moeflow contract check' /tmp/fd-walk/tiny/logs/retune-*_0.out"
run "_build/gen/moeflow contract verify /tmp/fd-walk/tiny"
run "_build/gen/moeflow report /tmp/fd-walk/tiny --stage retune | head -n 6"
run "tests/cluster/localcluster.sh down --prefix /tmp/fd-lc"
rm -rf /tmp/fd-walk
