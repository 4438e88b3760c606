#!/usr/bin/env python3
"""The prediction register's checks (issue 42), one per mode; exit 1 and
say why on stderr when one fails.

  check-register.py rows SRCDIR         register.tsv against the table
  check-register.py history SRCDIR      each pre-registered row's git history
  check-register.py claims SRCDIR FIT   every claim rendered from figures.py is
                                        in its file; no other figure there
FIT is a file holding `moeflow fit`'s output (the "@fit" claims).  The
claims mode scans the files claims.tsv and figures-allowed.tsv name and
every README.md under tests/gpu/ (but _work/), whether or not it has a
claim, so a README's new percentage fails until it is rendered or allowed.
"""
import csv, os, re, subprocess, sys

mode, SRC = sys.argv[1], sys.argv[2]
CAL = os.path.join(SRC, "tests/calibration")
CLASSES = {"calibration", "held-out", "unregistered", "report", "superseded",
           "published-calibration", "published-held-out", "published-report", "pending"}
# The table's use column for each class a table row may have.
USE = {"calibration": "calibrate", "held-out": "out-of-sample", "unregistered": "out-of-sample",
       "report": "report", "published-calibration": "calibrate",
       "published-held-out": "out-of-sample", "published-report": "report"}
bad = []


def tsv(path):
    with open(path) as f:
        return list(csv.DictReader((l for l in f if not l.startswith("#")), delimiter="\t"))


reg = tsv(os.path.join(CAL, "register.tsv"))

if mode == "rows":
    table = {r["id"]: r for r in tsv(os.path.join(CAL, "steptime-table.tsv"))}
    seen = set()
    for r in reg:
        k = (r["id"], r["quantity"])
        if k in seen:
            bad.append("%s %s: twice" % k)
        seen.add(k)
        if r["class"] not in CLASSES:
            bad.append("%s: class %r" % (r["id"], r["class"]))
        if r["gpu"] not in ("alone", "shared", "unknown", "-"):
            bad.append("%s: gpu %r" % (r["id"], r["gpu"]))
        # A step time measured beside another job is not the model's to
        # match: it may only be reported or superseded.
        if r["gpu"] == "shared" and r["quantity"] == "step_ms" and r["class"] not in ("report", "superseded"):
            bad.append("%s: a shared-GPU step time as %s" % (r["id"], r["class"]))
        # The rule: a row a fit has used is calibration.
        if r["fitted_by"] != "-" and r["class"] not in ("calibration", "published-calibration"):
            bad.append("%s: fitted by %s but %s" % (r["id"], r["fitted_by"], r["class"]))
        if r["class"] in ("held-out", "pending") and r["prereg_commit"] == "-":
            bad.append("%s: held out without a pre-registration commit" % r["id"])
        if r["class"] == "pending" and r["measured"] != "-":
            bad.append("%s: pending but measured" % r["id"])
        if r["quantity"] == "peak_gib" or r["class"] in ("superseded", "pending") or r["id"].startswith("autopilot-"):
            continue
        t = table.get(r["id"])
        if t is None:
            bad.append("%s: not in steptime-table.tsv" % r["id"])
            continue
        if USE.get(r["class"]) != t["use"]:
            bad.append("%s: register %s, table %s" % (r["id"], r["class"], t["use"]))
        if abs(float(t["measured"]) - float(r["measured"])) > 0.05:
            bad.append("%s: measured %s in the register, %s in the table" % (r["id"], r["measured"], t["measured"]))
    for i in table:
        if (i, "step_ms") not in seen and (i, "tflops") not in seen:
            bad.append("%s: in the table, not in the register" % i)

elif mode == "history":
    def git(*a):
        return subprocess.run(["git", "-C", SRC] + list(a), capture_output=True, text=True)
    for r in reg:
        c, m = r["prereg_commit"], r["measured_commit"]
        if c == "-":
            continue
        if git("cat-file", "-e", c + "^{commit}").returncode:
            bad.append("%s: pre-registration commit %s not in history" % (r["id"], c))
            continue
        # The prediction is in the pre-registering commit's message, as typed then.
        if r["predicted"] not in git("log", "-1", "--format=%B", c).stdout:
            bad.append("%s: %s is not in %s's message" % (r["id"], r["predicted"], c))
        if m == "-":
            continue
        if git("merge-base", "--is-ancestor", c, m).returncode or \
                git("rev-parse", c).stdout == git("rev-parse", m).stdout:
            bad.append("%s: prediction %s does not precede measurement %s" % (r["id"], c, m))
        # The measurement commit holds the value (steady runs: steady-1gpu.tsv).
        if r["call"] == "steady-1gpu.sh":
            rows = git("show", m + ":tests/gpu/steady-1gpu.tsv").stdout
            want = r["measured"] if r["quantity"] == "step_ms" else None
            line = [l for l in rows.splitlines() if l.startswith(r["id"] + "\t")]
            if not line:
                bad.append("%s: not in %s:tests/gpu/steady-1gpu.tsv" % (r["id"], m))
            elif want and want not in line[0].split("\t"):
                bad.append("%s: %s not measured at %s" % (r["id"], want, m))

elif mode == "claims":
    fit_out = open(sys.argv[3]).read()
    figs = dict(l.rstrip("\n").split("\t", 1) for l in subprocess.run(
        [sys.executable, os.path.join(CAL, "figures.py"), SRC], capture_output=True, text=True,
        check=True).stdout.splitlines())

    def fold(text):
        text = text.replace("\\-", "-").replace("\u2212", "-").replace("\\(mu", "x").replace("**", "")
        text = re.sub(r"\\f[BIRP]", "", text)
        return re.sub(r"\s+", " ", text)

    def region(name):
        """The parts whose figures must all come from the register."""
        if name == "@fit":
            return fold("".join(l for l in fit_out.splitlines(True) if "confidence:" in l))
        text = open(os.path.join(SRC, name)).read()
        if name.startswith("doc/"):
            m = re.search(r"^\.SH ACCURACY\n(.*?)(?=^\.SH )", text, re.S | re.M)
            return fold(m.group(1) if m else "")
        if name == "NEWS":
            return fold(text.split("\nUnreleased", 1)[1].split("\n0.1.0", 1)[0])
        return fold(text)

    claims = [l.rstrip("\n").split("\t") for l in open(os.path.join(CAL, "claims.tsv"))
              if l.strip() and not l.startswith("#")]
    allowed = [l.rstrip("\n").split("\t") for l in open(os.path.join(CAL, "figures-allowed.tsv"))
               if l.strip() and not l.startswith("#")]
    # every README under tests/gpu/ is scanned, whether or not it has a claim
    readmes = set()
    for d, dirs, names in os.walk(os.path.join(SRC, "tests/gpu")):
        dirs[:] = [x for x in dirs if x != "_work"]
        readmes |= {os.path.relpath(os.path.join(d, "README.md"), SRC)} if "README.md" in names else set()
    files = sorted({c[0] for c in claims} | {a[0] for a in allowed} | readmes)
    for f in files:
        text = region(f)
        for c in (c for c in claims if c[0] == f):
            try:
                # str.format would read the dots in a key as attributes
                want = fold(re.sub(r"\{([^{}]+)\}", lambda m: figs[m.group(1)], c[1]))
            except KeyError as e:
                bad.append("%s: no figure %s" % (f, e))
                continue
            if want not in text:
                bad.append("%s: says otherwise than the register: %r" % (f, want))
            text = text.replace(want, " ")
        for a in (a for a in allowed if a[0] == f):
            if fold(a[1]) not in text:
                bad.append("%s: allowed phrase gone (drop it from figures-allowed.tsv): %r" % (f, a[1]))
            text = text.replace(fold(a[1]), " ")
        for m in re.finditer(r"[-+]?\d+(\.\d+)?%", text):
            bad.append("%s: figure not derived from the register: %r" % (
                f, text[max(0, m.start() - 50):m.end() + 10]))
else:
    sys.exit("check-register.py: mode %r" % mode)

for b in bad:
    print(b, file=sys.stderr)
sys.exit(1 if bad else 0)
