#!/usr/bin/env python3
"""Megatron's own parse_args + validate_args on every generated candidate.

usage: validate_args.py VALIDATE_DIR MEGATRON_ROOT > validate.tsv

VALIDATE_DIR holds one folder per (study, dialect) written by `moeflow gen`
(lane.sh prepare).  For each candidate of each stage, a forked child of a
process that imported the dialect's megatron.training.arguments sets the
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
import sys
import traceback

TREES = {"core-0.16": "megatron-lm-core_v0.16.0", "core-0.19": "megatron-lm-core_v0.19.0",
         "bridge-pin": "megatron-lm-2a75ac12"}
DEFAULTS = {"tokenizer_type": "GPT2BPETokenizer"}  # pretrain_gpt.py's args_defaults
PARALLEL = int(os.environ.get("LANE_VALIDATE_JOBS", "8"))


def version_tuple(text):
    return tuple(int(x) for x in re.findall(r"\d+", text)[:3])


def verdict_of(message, te_declared):
    """te-absent-here only where the message is a TE check the study meets."""
    if not te_declared or not re.search(r"\bTE\b|[Tt]ransformer[ _-][Ee]ngine", message):
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


def run_child(candidate, te_declared, out_path):
    try:
        verdict, message = check(candidate)
    except SystemExit as e:  # argparse errors
        verdict, message = "fail", f"argparse exit {e.code}"
    except BaseException as e:  # noqa: BLE001 - any refusal is the answer
        message = (f"{type(e).__name__}: {e}".splitlines() or [type(e).__name__])[0]
        where = traceback.extract_tb(e.__traceback__)[-1]
        message += f" ({os.path.relpath(where.filename, os.getcwd())}:{where.lineno})"
        verdict = verdict_of(message, te_declared)
    with open(out_path, "w") as f:
        json.dump([verdict, message.replace("\t", " ")[:400]], f)


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


def validate_dialect(validate_dir, root, dialect, tmp):
    """Forks one child per candidate from a process that imported Megatron."""
    pid = os.fork()
    if pid:
        os.waitpid(pid, 0)
        return
    tree = os.path.join(root, TREES[dialect])
    sys.path.insert(0, tree)
    os.chdir(tree)
    standin = os.environ.get("LANE_PYDANTIC_STANDIN")
    if standin:
        sys.path.append(standin)
    import megatron.training.arguments  # noqa: F401 - imported once, before the forks
    running = {}
    for n, (study, stage, index, cand, te) in enumerate(jobs_of(validate_dir, dialect)):
        out = os.path.join(tmp, f"{dialect}.{n}.json")
        while len(running) >= PARALLEL:
            done, _ = os.wait()
            running.pop(done, None)
        child = os.fork()
        if child == 0:
            devnull = os.open(os.devnull, os.O_WRONLY)
            os.dup2(devnull, 1)
            run_child(cand, te, out)
            os._exit(0)
        running[child] = out
    while running:
        done, _ = os.wait()
        running.pop(done, None)
    os._exit(0)


def main():
    validate_dir, root = sys.argv[1], sys.argv[2]
    tmp = os.path.join(validate_dir, ".results")
    os.makedirs(tmp, exist_ok=True)
    print("dialect\tstudy\tstage\tindex\tverdict\tmessage")
    for dialect in TREES:
        validate_dialect(validate_dir, root, dialect, tmp)
        for n, (study, stage, index, _, _) in enumerate(jobs_of(validate_dir, dialect)):
            path = os.path.join(tmp, f"{dialect}.{n}.json")
            try:
                with open(path) as f:
                    verdict, message = json.load(f)
            except (OSError, ValueError):
                verdict, message = "fail", "the check died without an answer"
            print(f"{dialect}\t{study}\t{stage}\t{index}\t{verdict}\t{message}")


if __name__ == "__main__":
    main()
