#!/usr/bin/env python3
"""The GPU lane's evidence, from what its jobs wrote.

usage: collect.py DATA_DIR MOEFLOW > results.tsv
       collect.py --steady STEADY_DIR > steady.tsv

DATA_DIR is tests/data/gpu: lane-<dialect>.tar.xz per dialect, the
generated study directory as the stand-in jobs left it on the GPU machine
(its PyTorch-profiler traces are kept apart, under traces/).
For every candidate of every stage, tab-separated:
    dialect stage index candidate rc steps median_ms peak_mib predicted_mib
rc: the trainer's exit status (the job's, for the contract capture);
steps: iterations logged; median_ms: median step time over the stage's own
window (post-warm-up screening steps; report_window for validate);
peak_mib: the largest "max allocated" Megatron printed (rank 0);
predicted_mib: `moeflow fit` for the candidate's layout, recompute and MBS,
pipeline rank 0 (the rank that prints memory).
"""
import glob
import json
import os
import re
import statistics
import subprocess
import sys
import tempfile

STAGES = ["contract", "fit", "scale", "profile", "retune", "validate"]
ITER = re.compile(r"iteration\s+(\d+)/\s*\d+ .*elapsed time per iteration \(ms\): ([0-9.]+)")
PEAK = re.compile(r"max allocated: ([0-9.]+)")


def exit_codes(study):
    """candidate id -> exit status, from the jobs' own output."""
    codes = {}
    for path in glob.glob(os.path.join(study, "logs", "*.out")):
        with open(path, errors="replace") as f:
            text = f.read()
        for m in re.finditer(r"candidate ([0-9a-f]{64})\b.* exited (\d+)", text):
            codes[m.group(1)] = int(m.group(2))
        job = re.search(r"-(\d+)\.out$", path)
        state = job and os.path.join(study, ".standin", job.group(1) + ".rc")
        m = re.search(r"(?:validate|contract): candidate ([0-9a-f]{64})", text)
        if m and state and os.path.exists(state):
            with open(state) as f:
                codes.setdefault(m.group(1), int(f.read().strip()))
    return codes


def window(study_json, stage, train_iters):
    m = study_json["measure"]
    if stage == "validate":
        return m["report_window"][0], m["report_window"][1]
    return m["warmup"] + 1, train_iters


def log_figures(path, first, last):
    steps, times, peak = 0, [], None
    if not os.path.exists(path):
        return 0, None, None
    with open(path, errors="replace") as f:
        for line in f:
            it = ITER.search(line)
            if it:
                steps += 1
                if first <= int(it.group(1)) <= last:
                    times.append(float(it.group(2)))
            pk = PEAK.search(line)
            if pk:
                peak = max(peak or 0.0, float(pk.group(1)))
    return steps, (statistics.median(times) if times else None), peak


def predicted_mib(moeflow, study, cand):
    p = cand["contract"]["parallel"]
    t = cand["contract"]["tuning"]["recompute"]
    recompute = t["granularity"]
    if recompute == "selective":
        recompute = ",".join(t["modules"])
    args = [moeflow, "fit", os.path.join(study, "study.yaml"), "--json",
            "--tp", str(p["tp"]), "--cp", str(p["cp"]), "--pp", str(p["pp"]),
            "--vpp", str(p["vpp"]), "--ep", str(p["ep"]), "--etp", str(p["etp"]),
            "--mbs", str(cand["contract"]["workload"]["mbs"]), "--recompute", recompute]
    out = subprocess.run(args, capture_output=True, text=True)
    if out.returncode not in (0, 1):
        raise SystemExit(f"collect: {' '.join(args)}: {out.stderr.strip()}")
    return json.loads(out.stdout)["memory"]["ours_gib"]["total"] * 1024


def stated_te(study):
    """The lane ran before issue 40: pre40-studies.sh says why and how."""
    helper = os.path.join(os.path.dirname(os.path.abspath(__file__)), "pre40-studies.sh")
    subprocess.run(["sh", "-c", '. "$1" && say_te_none "$2"', "sh", helper, study], check=True)


def rows(data_dir, moeflow, tmp):
    for archive in sorted(glob.glob(os.path.join(data_dir, "lane-*.tar.xz"))):
        subprocess.run(["tar", "-xJf", archive, "-C", tmp], check=True)
        study = os.path.join(tmp, os.path.basename(archive)[: -len(".tar.xz")])
        dialect = os.path.basename(study)[len("lane-"):]
        stated_te(study)
        with open(os.path.join(study, "manifest.json")) as f:
            manifest = json.load(f)
        with open(os.path.join(study, "study.json")) as f:
            study_json = json.load(f)
        codes = exit_codes(study)
        for stage in sorted(manifest["stages"], key=lambda s: STAGES.index(s["stage"])):
            for index, cand in enumerate(stage["candidates"]):
                argv = cand["argv"]
                iters = int(argv[argv.index("--train-iters") + 1])
                first, last = window(study_json, stage["stage"], iters)
                log = os.path.join(study, "results", stage["stage"], cand["id"] + ".log")
                steps, median, peak = log_figures(log, first, last)
                rc = codes.get(cand["id"], "-")
                pred = "-" if stage["stage"] == "contract" else \
                    f"{predicted_mib(moeflow, study, cand):.1f}"
                yield [dialect, stage["stage"], str(index), cand["id"], str(rc), str(steps),
                       "-" if median is None else f"{median:.1f}",
                       "-" if peak is None else f"{peak:.1f}", pred]


def steady_rows(steady_dir):
    """The scale stage run alone with a long warm-up (lane.sh steady): per
    layout, the median step over its post-warm-up window."""
    for study in sorted(glob.glob(os.path.join(steady_dir, "*", "manifest.json"))):
        study = os.path.dirname(study)
        with open(os.path.join(study, "study.json")) as f:
            study_json = json.load(f)
        with open(os.path.join(study, "manifest.json")) as f:
            manifest = json.load(f)
        for stage in manifest["stages"]:
            for cand in stage["candidates"]:
                p = cand["contract"]["parallel"]
                layout = ".".join(f"{k}{p[k]}" for k in ("tp", "cp", "pp", "vpp", "ep", "etp"))
                argv = cand["argv"]
                iters = int(argv[argv.index("--train-iters") + 1])
                first, last = window(study_json, "scale", iters)
                res = os.path.join(study, "results", "scale", cand["id"])
                steps, median, _ = log_figures(res + ".log", first, last)
                rc = open(res + ".rc").read().strip() if os.path.exists(res + ".rc") else "-"
                yield [os.path.basename(study), layout, rc, str(steps), f"{first}-{last}",
                       "-" if median is None else f"{median:.1f}"]


def main():
    if sys.argv[1] == "--steady":
        print("dialect\tlayout\trc\tsteps\twindow\tmedian_ms")
        for row in steady_rows(sys.argv[2]):
            print("\t".join(row))
        return
    data_dir, moeflow = sys.argv[1], sys.argv[2]
    print("dialect\tstage\tindex\tcandidate\trc\tsteps\tmedian_ms\tpeak_mib\tpredicted_mib")
    with tempfile.TemporaryDirectory() as tmp:
        for row in rows(data_dir, moeflow, tmp):
            print("\t".join(row))


if __name__ == "__main__":
    main()
