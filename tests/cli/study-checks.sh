#!/bin/bash
# One bad-study fixture per check of the study loader: every fail() call of
# lib/study/study.c is read from the source, its message turned into a
# pattern, and at least one tests/data/study/bad/*.err must match it (the
# unit test test_study checks that each fixture gives exactly its .err).
# A check added without a fixture fails here.  A check whose message comes
# from another module (the model check, number and launcher parsing, the
# pipeline layout, the layout rules) is matched through that module's own
# messages, read from its source the same way.
. "$MOEFLOW_SRCDIR/tests/integration/lib.sh"
S=$MOEFLOW_SRCDIR
out=$(mktemp -d) && trap 'rm -rf "$out"' EXIT
tap_plan 3

python3 - "$S" > "$out/report" 2>&1 <<'PY'
import glob, os, re, sys

src = sys.argv[1]
STR = r'"(?:[^"\\]|\\.)*"'


def read(path):
    return open(os.path.join(src, path), encoding="utf-8").read()


def c_string(lits):
    """The value of adjacent C string literals."""
    out = ""
    for lit in re.findall(STR, lits):
        out += bytes(lit[1:-1], "utf-8").decode("unicode_escape")
    return out


def fmt_re(fmt):
    """A printf format as a regular expression of what it prints."""
    out, i = "", 0
    while i < len(fmt):
        m = re.match(r"%[-+ #0]*(\*|\d+)?(\.(\*|\d+))?(hh|h|ll|l|z|j|t)?([diouxXeEfgGcsp%])", fmt[i:])
        if m:
            conv = m.group(5)
            out += {"%": "%", "c": "."}.get(conv, "-?[0-9]+" if conv in "diouxX" else ".*?")
            i += m.end()
        else:
            out += re.escape(fmt[i])
            i += 1
    return out


def formats(path, call, first=False):
    """The messages of every call `call(x, "fmt", ...)` (first: `call("fmt",
    ...)`) in a source file; a bare "%s" stands for the string literals
    among its arguments.  String macros of the file are expanded."""
    text, out = read(path), []
    for name, value in re.findall(r"^#define (\w+) (" + STR + r")$", text, re.M):
        text = re.sub(r"(?<=[\s\"])" + name + r"\b(?=[\s,)])", value, text)
    lead = r"\(" if first else r"\([^,()]+,\s*"
    for m in re.finditer(r"\b" + call + lead + r"((?:" + STR + r"\s*)+)", text):
        fmt = c_string(m.group(1))
        if fmt == "%s":
            rest = text[m.end():text.index(";", m.end())]
            out += [re.escape(c_string(lit)) for lit in re.findall(STR, rest)]
        else:
            out.append(fmt_re(fmt))
    return out


# Who writes the message of a check whose text is "%s" (or the layout's
# "%s%s"): the enclosing function of study.c, the path pattern, the sources.
number = formats("lib/core/number.c", "moe_error_set")
DELEGATES = {
    "model_check": (r"model\.[a-z_]+", formats("lib/study/model_check.c", "moe_error_set")),
    "cluster_rates": (None, number),  # the keys its table names
    "launcher_check": (r"cluster\.launcher\.command",
                       formats("lib/study/launcher.c", "moe_error_set") +
                       formats("lib/core/shquote.c", "moe_error_set")),
    "workload_read": (r"workload\.capacity_factor", number),
    "time_limit_check": (r"cluster\.time_limit", formats("lib/study/time_limit.c", "moe_error_set")),
    # cluster.env's keys are the variables' names, upper case
    "env_name_check": (r"cluster\.env\.[A-Za-z0-9_]+", []),
    "env_read": (r"cluster\.env(\.[A-Za-z0-9_]+)?", []),
    "extra_args_read": (r"cluster\.launcher\.extra_args(\[[0-9]+\])?",
                        formats("lib/study/megatron_extra.c", "moe_error_set")),
    "pipeline_check": (r"baseline\.pipeline_layout", formats("lib/study/study_pipeline.c", "moe_error_set")),
    "layout_check": (r"(baseline|workload)\.[a-z_]+",
                     [w + r"( \(baseline\.pipeline_layout, .*\))?" for w in formats("lib/fit/layouts.c", "WHY", first=True)]),
}

def study_keys(text):
    """study.c with the study keys of lib/study/study_schema.h written out:
    MOE_SK_<SECTION>_<KEY> as its path, MOE_SK_KEY(PARENT, KEY) as its
    last segment, each a string literal as the messages print them."""
    keys = {}
    for name, value in re.findall(r"^#define (MOE_SK_\w+) ((?:MOE_SK_\w+ )?" + STR + r")$",
                                  read("lib/study/study_schema.h"), re.M):
        parts = value.split(" ", 1)
        keys[name] = (keys[parts[0]] if len(parts) == 2 else "") + c_string(parts[-1])
    text = re.sub(r"\bMOE_SK_KEY\((\w+), (\w+)\)",
                  lambda m: '"' + keys["MOE_SK_%s_%s" % m.groups()][len(keys["MOE_SK_" + m.group(1)]) + 1:] + '"',
                  text)
    return re.sub(r"\bMOE_SK_\w+\b",
                  lambda m: '"' + keys[m.group(0)] + '"' if m.group(0) in keys else m.group(0), text)


study = study_keys(read("lib/study/study.c"))
sites, problems = [], []
# every call with its enclosing function
funcs = [(m.start(), m.group(1))
         for m in re.finditer(r"^(?:static )?[A-Za-z_][\w ]*?\*?(\w+)\([^;]*$", study, re.M)]


def body(name):
    """The text of study.c's function name."""
    at = [i for i, (pos, f) in enumerate(funcs) if f == name][0]
    end = funcs[at + 1][0] if at + 1 < len(funcs) else len(study)
    return study[funcs[at][0]:end]


for m in re.finditer(r"\bfail\(c,\s*(" + STR + r"|[^,]+?),\s*((?:" + STR + r"\s*)+)", study):
    lineno = study.count("\n", 0, m.start()) + 1
    enclosing = [f for at, f in funcs if at < m.start()][-1]
    path, fmt = m.group(1), c_string(m.group(2))
    literal = path.startswith('"')
    if fmt not in ("%s", "%s%s") and not literal:  # require(): any path, its own text
        path_re, text_re = DELEGATES.get(enclosing, (r"[a-z_.]+", None))[0], fmt_re(fmt)
    elif fmt in ("%s", "%s%s"):
        if enclosing not in DELEGATES:
            problems.append(f"study.c:{lineno} ({enclosing}): its message comes from elsewhere; "
                            "add its delegate to tests/cli/study-checks.sh")
            continue
        path_re, texts = DELEGATES[enclosing]
        if path_re is None:
            keys = re.findall(r'"([a-z_]+\.[a-z_.0-9]+)"', body(enclosing))
            path_re = "(" + "|".join(re.escape(k) for k in keys) + ")"
        if literal:
            path_re = re.escape(c_string(path))
        text_re = "(" + "|".join(texts) + ")"
    else:
        path_re, text_re = re.escape(c_string(path)), fmt_re(fmt)
    sites.append((lineno, enclosing, fmt, re.compile("^" + path_re + ": " + text_re + "$")))

fixtures = {}
for err in sorted(glob.glob(os.path.join(src, "tests/data/study/bad/*.err"))):
    msg = open(err, encoding="utf-8").readline().rstrip("\n")
    fixtures[os.path.basename(err)] = re.sub(r"^[^:]+:\d+:\d+: ", "", msg)

uncovered = []
for lineno, enclosing, fmt, rx in sites:
    hits = [name for name, msg in fixtures.items() if rx.match(msg)]
    print(f"study.c:{lineno:<4} {enclosing:<16} {fmt[:50]!r:<54} {', '.join(hits) or 'NO FIXTURE'}")
    if not hits:
        uncovered.append(lineno)
for p in problems:
    print(p)
yamls = {os.path.basename(y)[:-5] for y in glob.glob(os.path.join(src, "tests/data/study/bad/*.yaml"))}
errs = {n[:-4] for n in fixtures}
for n in sorted(yamls ^ errs):
    print(f"{n}: a .yaml without its .err, or the other way round")
print(f"SITES {len(sites)} UNCOVERED {len(uncovered)} PROBLEMS {len(problems)} "
      f"UNPAIRED {len(yamls ^ errs)} FIXTURES {len(fixtures)}")
PY
summary=$(tail -n 1 "$out/report")
diag < "$out/report"
read -r _ sites _ uncovered _ problems _ unpaired _ fixtures <<< "$summary"
ok "the loader's checks are read from lib/study/study.c (more than 30), each one's message known" \
    test "${sites:-0}" -gt 30 -a "${problems:-1}" = 0
ok "every check of the study loader has a fixture in tests/data/study/bad ($sites checks, $fixtures fixtures)" \
    test "${uncovered:-1}" = 0
ok "every fixture has its expected message and every message its fixture" test "${unpaired:-1}" = 0
tap_done
