#!/usr/bin/env python3
"""moeflow's contract capture: what the trainer's environment really holds.

`moeflow gen` copies this file into the study directory; the contract stage
runs it as a job step with the training stages' srun container options and
the launcher's Python:

    PYTHON moeflow_capture.py --out contract/measured.json --entry SCRIPT.py
        --megatron DIALECT --megatron-version X.Y [--megatron-commit PREFIX]
        --transformer-engine VERSION|"" --apex BOOL --deepep BOOL --hybridep BOOL

It records Python, torch, CUDA, NCCL, cuDNN, Megatron (version and commit of
the tree the entry script imports from), Transformer Engine, Apex, DeepEP,
HybridEP and the GPUs, compares the software with what the study declares
(the rules are in moeflow-study(5), CONTRACT) and exits 3 on a
contradiction, so that submit.sh's afterok chain stops.  Exit 2: bad usage.

It needs Python 3.8 and the standard library only: every other module may be
missing, may raise anything while it imports, or may hang (each import and
command is bounded in time).
"""
import argparse
import csv
import datetime
import importlib
import importlib.util
import json
import os
import platform
import re
import signal
import socket
import subprocess
import sys

EXIT_CONTRADICTION = 3
# Generous: a first import of torch or TE on a cold node takes seconds.
# MOEFLOW_CAPTURE_TIMEOUT_S (both bounds at once) is for the tests.
IMPORT_TIMEOUT_S = int(os.environ.get("MOEFLOW_CAPTURE_TIMEOUT_S", "120"))
COMMAND_TIMEOUT_S = int(os.environ.get("MOEFLOW_CAPTURE_TIMEOUT_S", "30"))
PREFIX = "moeflow capture: "


class Timeout(Exception):
    pass


def one_line(exc):
    """An exception as one line; an ImportError's text says it all."""
    lines = str(exc).strip().splitlines()
    text = lines[0] if lines else ""
    if isinstance(exc, ImportError) and text:
        return text
    return "%s: %s" % (type(exc).__name__, text) if text else type(exc).__name__


def bounded(what, fn, *args):
    """fn(*args) within IMPORT_TIMEOUT_S: (value, None) or (None, reason).
    Catches everything a third-party module may raise, SystemExit included."""
    def expire(signum, frame):
        raise Timeout("timed out after %d s" % IMPORT_TIMEOUT_S)
    old = signal.signal(signal.SIGALRM, expire)
    signal.alarm(IMPORT_TIMEOUT_S)
    try:
        return fn(*args), None
    except KeyboardInterrupt:
        raise
    except BaseException as exc:  # noqa: B902 -- a module may raise anything
        return None, "%s failed: %s" % (what, one_line(exc))
    finally:
        signal.alarm(0)
        signal.signal(signal.SIGALRM, old)


def try_import(name):
    return bounded("import " + name, importlib.import_module, name)


def run(cmd):
    """A command's stdout, or (None, reason); never waits past the timeout."""
    try:
        p = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                           universal_newlines=True, timeout=COMMAND_TIMEOUT_S)
    except FileNotFoundError:
        return None, "%s: not found" % cmd[0]
    except subprocess.TimeoutExpired:
        return None, "%s: timed out after %d s" % (" ".join(cmd), COMMAND_TIMEOUT_S)
    except OSError as exc:
        return None, "%s: %s" % (cmd[0], exc)
    if p.returncode != 0:
        err = (p.stderr or p.stdout).strip().splitlines()
        return None, "%s exited %d%s" % (" ".join(cmd), p.returncode,
                                         ": " + err[0] if err else "")
    return p.stdout, None


def value(v, reason):
    return {"version": v, "reason": reason} if v is None else {"version": v}


def dist_version(names):
    """The installed distribution's version when a module has no __version__."""
    try:
        from importlib import metadata
    except ImportError:
        return None
    for name in names:
        try:
            return metadata.version(name)
        except Exception:
            continue
    return None


def module_facts(name, dists, attr=None):
    """Whether `import name` (and name.attr) works, and its version."""
    mod, why = try_import(name)
    if mod is not None and attr and not hasattr(mod, attr):
        mod, why = None, "import %s: it has no %s" % (name, attr)
    if mod is None:
        return {"imported": False, "version": None, "reason": why}
    ver = getattr(mod, "__version__", None) or dist_version(dists)
    out = {"imported": True, "version": str(ver) if ver is not None else None,
           "path": os.path.dirname(getattr(mod, "__file__", None) or "") or None}
    if ver is None:
        out["reason"] = "%s has no __version__ and no installed distribution" % name
    return out


# --- torch, CUDA, NCCL, cuDNN -------------------------------------------

def dotted(v, wide):
    """NCCL/cuDNN version integers: 22105 -> 2.21.5 (wide: major*10000)."""
    major, rest = (v // 10000, v % 10000) if wide else (v // 1000, v % 1000)
    return "%d.%d.%d" % (major, rest // 100, rest % 100)


def nccl_version(torch):
    v = torch.cuda.nccl.version()
    if isinstance(v, tuple):
        return ".".join(str(x) for x in v)
    return dotted(int(v), int(v) >= 10000)


def cudnn_version(torch):
    v = torch.backends.cudnn.version()
    return None if v is None else dotted(int(v), int(v) >= 90000)


def torch_facts(out):
    torch, why = try_import("torch")
    if torch is None:
        out["torch"] = value(None, why)
        for key in ("cuda", "nccl", "cudnn"):
            out[key] = value(None, "no torch (%s)" % why)
        return None
    out["torch"] = value(str(torch.__version__), None)
    cuda = getattr(torch.version, "cuda", None)
    out["cuda"] = value(cuda, "torch was built without CUDA")
    for key, fn in (("nccl", nccl_version), ("cudnn", cudnn_version)):
        v, why = bounded("torch's %s version" % key, fn, torch)
        out[key] = value(v, why or "torch reports no %s" % key)
    return torch


# --- Megatron -------------------------------------------------------------

def read_text(path):
    try:
        with open(path) as f:
            return f.read().strip()
    except OSError:
        return None


def git_dir(tree):
    """TREE/.git, or where its .git file points (a submodule or worktree)."""
    dot = os.path.join(tree, ".git")
    if os.path.isdir(dot):
        return dot
    text = read_text(dot)
    if text and text.startswith("gitdir:"):
        return os.path.normpath(os.path.join(tree, text[len("gitdir:"):].strip()))
    return None


def read_ref(gitdir, ref):
    common = read_text(os.path.join(gitdir, "commondir"))
    common = os.path.normpath(os.path.join(gitdir, common)) if common else gitdir
    for d in (gitdir, common):
        sha = read_text(os.path.join(d, ref))
        if sha:
            return sha
    for line in (read_text(os.path.join(common, "packed-refs")) or "").splitlines():
        parts = line.split()
        if len(parts) == 2 and parts[1] == ref:
            return parts[0]
    return None


def git_commit(tree):
    """(commit, source, reason) of the git checkout at TREE itself: a
    repository above it (a project that vendors Megatron) is not asked."""
    gitdir = git_dir(tree)
    if gitdir is None:
        return None, None, "no .git in %s (a tarball or an installed package)" % tree
    head = read_text(os.path.join(gitdir, "HEAD")) or ""
    sha = read_ref(gitdir, head[5:].strip()) if head.startswith("ref: ") else head
    if sha and re.match(r"^[0-9a-f]{40}([0-9a-f]{24})?$", sha):
        return sha, ".git/HEAD", None
    text, why = run(["git", "-C", tree, "rev-parse", "HEAD"])
    if text and re.match(r"^[0-9a-f]{40}", text.strip()):
        return text.strip(), "git rev-parse HEAD", None
    return None, None, why or "git rev-parse HEAD printed no commit"


def load_package_info(path):
    spec = importlib.util.spec_from_file_location("moeflow_megatron_package_info", path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return str(mod.__version__)


def megatron_facts():
    """megatron.core.package_info read on its own: importing megatron.core
    itself needs torch, and the version is all the contract needs."""
    spec, why = bounded("finding megatron", importlib.util.find_spec, "megatron")
    locs = list(spec.submodule_search_locations or []) if spec else []
    if not locs:
        return {"version": None, "reason": why or "no megatron package on sys.path %s"
                % [p for p in sys.path[:3]]}
    for loc in locs:
        info = os.path.join(loc, "core", "package_info.py")
        if os.path.isfile(info):
            break
    else:
        return {"version": None, "path": locs[0],
                "reason": "%s has no core/package_info.py" % locs[0]}
    version, why = bounded("reading " + info, load_package_info, info)
    tree = os.path.dirname(loc)
    commit, source, reason = git_commit(tree)
    out = {"version": version, "path": loc, "commit": commit}
    if why:
        out["reason"] = why
    if commit:
        out["commit_source"] = source
    else:
        out["commit_reason"] = reason
    return out


# --- GPUs -----------------------------------------------------------------

SMI_FIELDS = ["index", "name", "uuid", "pci.bus_id", "driver_version", "memory.total"]


def smi_gpus():
    text, why = run(["nvidia-smi", "--query-gpu=" + ",".join(SMI_FIELDS),
                     "--format=csv,noheader,nounits"])
    if text is None:
        return None, why
    gpus = []
    for row in csv.reader(text.strip().splitlines()):
        row = [c.strip() for c in row]
        if len(row) == len(SMI_FIELDS):
            gpus.append({"index": int(row[0]) if row[0].isdigit() else row[0], "name": row[1],
                         "uuid": row[2], "pci_bus_id": row[3], "driver": row[4],
                         "memory_mib": int(row[5]) if row[5].isdigit() else row[5]})
    return gpus, None


def torch_gpus(torch):
    gpus = []
    for i in range(torch.cuda.device_count()):
        p = torch.cuda.get_device_properties(i)
        gpus.append({"index": i, "name": p.name, "memory_mib": p.total_memory // (1 << 20),
                     "capability": "%d.%d" % (p.major, p.minor)})
    return gpus


def gpu_facts(torch):
    out = {"visible": {k: os.environ[k] for k in ("CUDA_VISIBLE_DEVICES", "SLURM_STEP_GPUS")
                       if k in os.environ}}
    gpus, why = smi_gpus()
    out["nvidia_smi"] = gpus if gpus is not None else None
    if gpus is None:
        out["nvidia_smi_reason"] = why
    if torch is None:
        out["torch"], out["torch_reason"] = None, "no torch"
    else:
        out["torch"], reason = bounded("torch.cuda", torch_gpus, torch)
        if reason:
            out["torch_reason"] = reason
    devices = gpus or out["torch"] or []
    out["count"] = len(devices)
    out["model"] = devices[0]["name"] if devices else None
    out["memory_mib"] = devices[0]["memory_mib"] if devices else None
    out["driver"] = gpus[0]["driver"] if gpus else None
    topo, why = run(["nvidia-smi", "topo", "-m"])
    # nvidia-smi underlines the header with terminal escapes even into a pipe
    out["topology"] = re.sub(r"\x1b\[[0-9;]*m", "", topo) if topo else topo
    if topo is None:
        out["topology_reason"] = why
    return out


# --- the comparison -------------------------------------------------------

def major_minor(v, n=2):
    """The first n numbers of a version ('2.9.0+cu12' -> (2, 9)), or None."""
    nums = re.findall(r"\d+", (v or "").split("+")[0])[:n]
    return tuple(int(x) for x in nums) if nums else None


def same_release(declared, measured):
    """Equal on the declared components, at most major.minor."""
    d = major_minor(declared)
    return d is not None and major_minor(measured, len(d)) == d


def absent_text(facts):
    return "absent (%s)" % facts.get("reason", "not found")


def check(field, declared, measured, outcome, note=None):
    c = {"field": field, "declared": declared, "measured": measured, "outcome": outcome}
    if note:
        c["note"] = note
    return c


def check_megatron(a, m):
    field = "software.megatron"
    want = "%s (megatron.core %s%s)" % (a.megatron, a.megatron_version,
                                       ", commit " + a.megatron_commit if a.megatron_commit else "")
    if m.get("version") is None:
        return check(field, want, absent_text(m), "unchecked",
                     "Megatron was not found where the launcher imports it from: recorded, "
                     "not compared (the trainer may add it to the path itself)")
    got = "%s at %s" % (m["version"], m["path"])
    if m.get("commit"):
        got += ", commit %s" % m["commit"][:12]
    if a.megatron_commit and m.get("commit"):
        ok = m["commit"].startswith(a.megatron_commit)
        return check(field, want, got, "agrees" if ok else "contradicts")
    ok = same_release(a.megatron_version, m["version"])
    note = None
    if a.megatron_commit and ok:
        note = "the commit cannot be read (%s): only the version is compared" % m["commit_reason"]
    return check(field, want, got, "agrees" if ok else "contradicts", note)


def check_te(a, m):
    field = "software.transformer_engine"
    got = m["version"] if m["imported"] else absent_text(m)
    if not a.transformer_engine:
        return check(field, '"" (none: --transformer-impl local)', got, "agrees",
                     "found, unused: the jobs run --transformer-impl local" if m["imported"]
                     else None)
    if not m["imported"]:
        return check(field, a.transformer_engine, got, "contradicts")
    if m["version"] is None:
        return check(field, a.transformer_engine, "present, version unknown", "unchecked",
                     m.get("reason"))
    ok = same_release(a.transformer_engine, m["version"])
    return check(field, a.transformer_engine, got, "agrees" if ok else "contradicts")


def check_presence(field, declared, m, both_ways, unused_note):
    got = (m["version"] or "present") if m["imported"] else absent_text(m)
    want = "true" if declared else "false"
    if declared and not m["imported"]:
        return check(field, want, got, "contradicts")
    if not declared and m["imported"]:
        return check(field, want, got, "contradicts" if both_ways else "agrees",
                     None if both_ways else unused_note)
    return check(field, want, got, "agrees")


def compare(a, m):
    return [
        check_megatron(a, m["megatron"]),
        check_te(a, m["transformer_engine"]),
        # Megatron picks Apex up by itself: without TE, Apex's FusedAdam and
        # FusedLayerNorm whenever apex imports (core 0.19 optimizer/__init__.py,
        # models/gpt/gpt_layer_specs.py): found when declared absent changes
        # what runs.
        check_presence("software.apex", a.apex, m["apex"], True, None),
        check_presence("software.deepep", a.deepep, m["deepep"], False,
                       "found, unused: no job selects the flex-deepep dispatcher"),
        check_presence("software.hybridep", a.hybridep, m["hybridep"], False,
                       "found, unused: no job selects the flex-hybridep dispatcher"),
    ]


# --- main -----------------------------------------------------------------

def boolean(text):
    if text not in ("true", "false"):
        raise argparse.ArgumentTypeError("want true or false, not %r" % text)
    return text == "true"


def parse_args(argv):
    p = argparse.ArgumentParser(prog="moeflow_capture.py",
                                description="Measure the trainer's environment for the "
                                "moeflow contract and compare it with the study.")
    p.add_argument("--out", required=True, help="measured.json to write")
    p.add_argument("--entry", default="", help="the launcher's .py script ('' if none)")
    p.add_argument("--megatron", required=True, help="software.megatron (dialect)")
    p.add_argument("--megatron-version", required=True, help="its major.minor")
    p.add_argument("--megatron-commit", default="", help="its commit prefix, if pinned")
    p.add_argument("--transformer-engine", default="", help="software.transformer_engine")
    for name in ("apex", "deepep", "hybridep"):
        p.add_argument("--" + name, type=boolean, default=False, help="software." + name)
    return p.parse_args(argv)


def set_import_path(entry):
    """sys.path[0] as `python ENTRY` has it: the folder of the entry script,
    symlinks resolved; without one, the working directory (as python -m)."""
    here = os.path.dirname(os.path.realpath(entry)) if entry else os.getcwd()
    sys.path[0] = here
    return here


def measure(a):
    m = {"format": 1, "host": socket.gethostname(), "kernel": platform.release(),
         "captured_at": datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ"),
         "launcher": {"python": sys.executable, "entry": a.entry or None,
                      "import_path": set_import_path(a.entry),
                      "entry_exists": os.path.isfile(a.entry) if a.entry else None,
                      "enforced": bool(a.entry)},
         "python": {"version": platform.python_version(), "executable": sys.executable}}
    torch = torch_facts(m)
    m["megatron"] = megatron_facts()
    m["transformer_engine"] = module_facts("transformer_engine",
                                           ["transformer_engine", "transformer-engine"])
    m["apex"] = module_facts("apex", ["apex"])
    m["deepep"] = module_facts("deep_ep", ["deep_ep", "deep-ep"], "Buffer")
    m["hybridep"] = module_facts("deep_ep", ["deep_ep", "deep-ep"], "HybridEPBuffer")
    m["gpus"] = gpu_facts(torch)
    return m


def write_json(path, doc):
    """Whole or not at all: readers never see half a file."""
    d = os.path.dirname(path) or "."
    os.makedirs(d, exist_ok=True)
    tmp = "%s.tmp-%d" % (path, os.getpid())
    with open(tmp, "w") as f:
        json.dump(doc, f, indent=2, sort_keys=True)
        f.write("\n")
    os.replace(tmp, path)


def report(checks, enforced):
    """Prints every disagreement; 3 when one stops the chain."""
    stop = False
    for c in checks:
        line = "%s: declared %s, measured %s" % (c["field"], c["declared"], c["measured"])
        if c["outcome"] == "contradicts" and enforced:
            sys.stderr.write(PREFIX + line + "\n")
            stop = True
        elif c["outcome"] == "contradicts":
            sys.stderr.write(PREFIX + "warning: " + line + " (not enforced: the launcher "
                             "names no .py script, so this Python may not be the trainer's)\n")
        elif c["outcome"] == "unchecked":
            sys.stderr.write(PREFIX + "warning: %s: %s\n" % (line, c.get("note", "")))
    return EXIT_CONTRADICTION if stop else 0


def main(argv=None):
    a = parse_args(argv)
    m = measure(a)
    m["checks"] = compare(a, m)
    write_json(a.out, m)
    rc = report(m["checks"], m["launcher"]["enforced"])
    sys.stderr.flush()
    print(PREFIX + "python %s, torch %s, megatron %s, transformer_engine %s, %d GPU(s); wrote %s%s"
          % (m["python"]["version"], m["torch"]["version"] or "absent",
             m["megatron"].get("version") or "absent",
             m["transformer_engine"]["version"] or
             ("present" if m["transformer_engine"]["imported"] else "absent"),
             m["gpus"]["count"], a.out,
             "; a measured version contradicts the study" if rc else ""))
    return rc


if __name__ == "__main__":
    sys.exit(main())
