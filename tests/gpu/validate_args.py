#!/usr/bin/env python3
"""Megatron's own parse_args + validate_args on every generated candidate.

usage: validate_args.py VALIDATE_DIR MEGATRON_ROOT > validate.tsv

VALIDATE_DIR holds one folder per (study, dialect) written by `moeflow gen`
(lane.sh prepare).  One interpreter per dialect imports that dialect's
megatron.training.arguments; for each candidate of each stage it sets the
candidate's environment (CUDA_DEVICE_MAX_CONNECTIONS ..., WORLD_SIZE, RANK),
parses its argv exactly as pretrain_gpt.py would and runs validate_args with
pretrain_gpt.py's defaults.  Output, tab-separated:
    dialect study stage index verdict message
verdict: pass | fail | te-absent-here (the only failure is a Transformer
Engine check, and the study declares a TE version that satisfies it: the
job is valid in the study's container, not on this machine).
"""
import json
import os
import re
import subprocess
import sys
import traceback

TREES = {"core-0.16": "megatron-lm-core_v0.16.0", "core-0.19": "megatron-lm-core_v0.19.0",
         "bridge-pin": "megatron-lm-2a75ac12"}
DEFAULTS = {"tokenizer_type": "GPT2BPETokenizer"}  # pretrain_gpt.py's args_defaults


def version_tuple(text):
    return tuple(int(x) for x in re.findall(r"\d+", text)[:3])


def verdict_of(message, te_declared, te_check=False):
    """te-absent-here only where the failure is a TE check the study meets:
    its message says so, or it failed inside Megatron's TE version probe
    (core 0.16's is_te_min_version compares None when TE is absent)."""
    if not te_declared or te_declared == "none":  # "none": the study says no TE
        return "fail"
    if not te_check and not re.search(r"\bTE\b|[Tt]ransformer[ _-][Ee]ngine", message):
        return "fail"
    need = re.search(r"TE\s*(?:version\s*)?>=\s*([0-9.]+)", message)
    if need and version_tuple(te_declared) < version_tuple(need.group(1)):
        return "fail"
    return "te-absent-here"


def check(candidate):
    """Runs in a forked child: returns (verdict, message)."""
    from megatron.training.arguments import parse_args, validate_args
    os.environ.update(candidate["env"])
    os.environ["WORLD_SIZE"] = str(candidate["world_size"])
    os.environ["RANK"] = str(candidate.get("rank", 0))
    os.environ["LOCAL_RANK"] = "0"
    sys.argv = ["pretrain_gpt.py"] + candidate["argv"]
    args = parse_args(None, False)
    validate_args(args, dict(DEFAULTS))
    return "pass", ""


def run_one(candidate, te_declared, base_env):
    """(verdict, message) for one candidate, in this process."""
    os.environ.clear()
    os.environ.update(base_env)
    try:
        verdict, message = check(candidate)
    except SystemExit as e:  # argparse errors
        verdict, message = "fail", f"argparse exit {e.code}"
    except BaseException as e:  # noqa: BLE001 - any refusal is the answer
        message = (f"{type(e).__name__}: {e}".splitlines() or [type(e).__name__])[0]
        frames = traceback.extract_tb(e.__traceback__)
        where = frames[-1]
        message += f" ({os.path.relpath(where.filename, os.getcwd())}:{where.lineno})"
        te_probe = any(f.name in ("is_te_min_version", "get_te_version") for f in frames)
        if te_probe:
            message += " in is_te_min_version"
        verdict = verdict_of(message, te_declared, te_probe)
    return verdict, message.replace("\t", " ")[:400]


def jobs_of(validate_dir, dialect):
    for name in sorted(os.listdir(validate_dir)):
        manifest = os.path.join(validate_dir, name, "manifest.json")
        if not name.endswith("-" + dialect) or not os.path.exists(manifest):
            continue
        with open(manifest) as f:
            m = json.load(f)
        with open(os.path.join(validate_dir, name, "study.json")) as f:
            te = json.load(f)["software"]["transformer_engine"]
        for stage in m["stages"]:
            for index, cand in enumerate(stage["candidates"]):
                yield name[: -len(dialect) - 1], stage["stage"], index, cand, te


def validate_dialect(validate_dir, root, dialect):
    """Every candidate of one dialect, one after another in this process:
    validate_args only reads the namespace parse_args returns and the
    environment, which run_one resets each time."""
    tree = os.path.join(root, TREES[dialect])
    sys.path.insert(0, tree)
    os.chdir(tree)
    standin = os.environ.get("LANE_PYDANTIC_STANDIN")
    if standin:
        sys.path.append(standin)
    base_env = dict(os.environ)
    rows = []
    for study, stage, index, cand, te in jobs_of(validate_dir, dialect):
        saved = sys.stdout
        sys.stdout = open(os.devnull, "w")  # Megatron prints every argument
        try:
            verdict, message = run_one(cand, te, base_env)
        finally:
            sys.stdout.close()
            sys.stdout = saved
        rows.append(f"{dialect}\t{study}\t{stage}\t{index}\t{verdict}\t{message}")
    print("\n".join(rows))


def main():
    validate_dir, root = os.path.abspath(sys.argv[1]), os.path.abspath(sys.argv[2])
    if len(sys.argv) > 3:
        validate_dialect(validate_dir, root, sys.argv[3])
        return
    # One fresh interpreter per dialect: each imports its own megatron.
    procs = [subprocess.Popen([sys.executable, os.path.abspath(__file__), validate_dir, root, d],
                              stdout=subprocess.PIPE, text=True) for d in TREES]
    print("dialect\tstudy\tstage\tindex\tverdict\tmessage")
    for d, p in zip(TREES, procs):
        out, _ = p.communicate()
        if p.returncode:
            print(f"{d}\t-\t-\t-\tfail\tthe checker exited {p.returncode}")
        sys.stdout.write(out if out.endswith("\n") or not out else out + "\n")


if __name__ == "__main__":
    main()
