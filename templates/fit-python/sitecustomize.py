# moeflow: loaded by the fit stage's jobs only (their PYTHONPATH starts with
# this folder).  It fills the outputs that torch's fake process group leaves
# as torch.empty left them, so that a memory-fit run routes real tokens, and
# then runs the sitecustomize this folder hides, if the image has one.
import os
import sys


def _fake_process_group_run():
    # /proc/self/cmdline, not sys.argv: a launcher may rewrite argv.
    try:
        with open("/proc/self/cmdline", "rb") as f:
            words = f.read().split(b"\0")
    except OSError:
        words = [w.encode() for w in sys.argv]
    return b"--fake-process-group" in words


def _chain_hidden_sitecustomize():
    import importlib.machinery
    import importlib.util

    here = os.path.dirname(os.path.abspath(__file__))
    rest = [p for p in sys.path if os.path.abspath(p or os.curdir) != here]
    spec = importlib.machinery.PathFinder.find_spec("sitecustomize", rest)
    if spec is None or spec.loader is None:
        return
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)


_chain_hidden_sitecustomize()
if os.environ.get("MOEFLOW_FAKE_COLLECTIVES", "fill") != "off" and _fake_process_group_run():
    try:
        import moeflow_fake_collectives

        moeflow_fake_collectives.install(os.environ.get("MOEFLOW_FAKE_COLLECTIVES", "fill"))
    except Exception as exc:  # never stop the job: report, and let the fit report flag it
        sys.stderr.write("moeflow-fake-collectives: not installed: %s: %s\n"
                         % (type(exc).__name__, exc))
