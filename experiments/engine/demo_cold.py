"""`jbo demo` from an empty compilation cache, at a reference commit and on this working tree, in one run.

Each measurement is a fresh `python -m jbo demo --out <dir>` (run through WITH_PHASES below) with JBO_CACHE_DIR set to a new empty
directory (the persistent compilation cache cold, as on a first run), the reference commit checked
out in a git worktree and imported through PYTHONPATH, the two sides alternating so that both see
the same machine and load. Recorded per run: the wall seconds of the whole command (interpreter
start to exit), the demo's own total and each program's compile and run seconds as it prints them,
the compile's phases summed over the run's programs (JAX's own duration events, read through
jax.monitoring in the demo's process: tracing to a jaxpr, lowering to MLIR, XLA's backend compile,
with the persistent cache's reads and writes), and its summary table; the final table of each side is
compared row by row (mean and median final simple regret).

    python experiments/engine/demo_cold.py --before af344ea --repeats 3 --update
    python experiments/engine/demo_cold.py --before a1e4218 --repeats 3 --out demo_cold_batched_carry.json --update
    python experiments/engine/demo_cold.py --before af344ea --repeats 3 --out demo_cold_against_af344ea.json --update

Writes demo_cold_before_after.json (or --out; experiments/results/demo with --update, else its scratch mirror)
and, from the last run of this tree, the demo's own files (demo_summary.csv / .json, demo_regret.png)
and its console (demo_cold_cache_run.txt).
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # experiments/: outdir
from before_after import ROOT, alternate  # noqa: E402
from outdir import add_update_flag, output_dir  # noqa: E402

# `python -m jbo demo ...` with a listener that sums JAX's duration events and prints them at exit
WITH_PHASES = """
import atexit, collections, json, runpy, sys
import jax.monitoring
seconds = collections.defaultdict(float)
jax.monitoring.register_event_duration_secs_listener(lambda event, s, **_: seconds.__setitem__(event, seconds[event] + s))
atexit.register(lambda: print("PHASES " + json.dumps(seconds), file=sys.stderr))
sys.argv[0] = "jbo"
runpy.run_module("jbo", run_name="__main__")
"""
PHASE_NAMES = {  # JAX's event -> the record's name
    "/jax/core/compile/jaxpr_trace_duration": "trace_s",
    "/jax/core/compile/jaxpr_to_mlir_module_duration": "lower_s",
    "/jax/core/compile/backend_compile_duration": "xla_s",
}
PROGRAM = re.compile(r"\[(\d+)/(\d+)\] (.+?) on (\w+): .*compile ([\d.]+) s, run ([\d.]+) s")


def demo(tree: Path, scratch: Path) -> dict:
    """One cold `jbo demo` of the jbo in `tree`: wall seconds, printed programs, summary rows."""
    cache, out = Path(tempfile.mkdtemp(dir=scratch)), Path(tempfile.mkdtemp(dir=scratch))
    env = dict(os.environ, JBO_CACHE_DIR=str(cache), PYTHONPATH=str(tree))
    env.pop("JBO_CACHE", None)
    t0 = time.perf_counter()
    done = subprocess.run(
        [sys.executable, "-c", WITH_PHASES, "demo", "--out", str(out)],
        cwd=scratch,
        env=env,
        capture_output=True,
        text=True,
    )
    wall = time.perf_counter() - t0
    if done.returncode:
        raise RuntimeError(f"jbo demo failed in {tree}:\n{done.stderr[-2000:]}")
    console = done.stdout + done.stderr
    programs = [
        {"program": m[2], "methods": m[3], "problem": m[4], "compile_s": float(m[5]), "run_s": float(m[6])}
        for m in PROGRAM.finditer(console)
    ]
    meta = json.loads((out / "demo_summary.json").read_text())
    events = json.loads(re.search(r"^PHASES (.*)$", console, re.M)[1])
    console = re.sub(r"^PHASES .*\n?", "", console, flags=re.M)
    return {
        "wall_s": wall,
        "total_s": meta["total_seconds"],
        "programs": programs,
        "phases": {PHASE_NAMES.get(k, k): v for k, v in sorted(events.items())},
        "rows": meta["rows"],
        "out": out,
        "console": console,
    }


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--before", required=True, help="the reference commit")
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--out", default="demo_cold_before_after.json", help="file name in the output folder")
    add_update_flag(ap)
    args = ap.parse_args()
    out_dir = output_dir("demo")
    sys.path.insert(0, str(ROOT))
    from jbo.studies import machine_info

    load = os.getloadavg()

    def measure(side, tree, r, scratch):
        record = demo(tree, scratch)
        print(f"{side} {r}: {record['wall_s']:.1f} s wall, {record['total_s']:.1f} s in the demo", flush=True)
        if side == "after" and r == args.repeats - 1:  # the last run of this tree: its files are kept
            out_dir.mkdir(parents=True, exist_ok=True)
            for name in ("demo_summary.csv", "demo_summary.json", "demo_regret.png"):
                shutil.copy(record["out"] / name, out_dir / name)
            header = (
                "# JBO_CACHE_DIR=<empty directory> python -m jbo demo --out <dir> (cold compilation cache), "
                f"{machine_info()}, the last run of experiments/engine/demo_cold.py (wall {record['wall_s']:.2f} s)\n"
            )
            (out_dir / "demo_cold_cache_run.txt").write_text(header + record["console"])
        return record

    runs, before_rev, after_rev = alternate(args.before, args.repeats, measure)
    for side in runs.values():
        for record in side:
            record.pop("out"), record.pop("console")

    def rows(side):
        return {(r["problem"], r["method"]): r for r in runs[side][-1]["rows"]}

    before, after = rows("before"), rows("after")
    compare = [
        {
            "problem": p,
            "method": m,
            "mean_before": before[(p, m)]["mean_simple_regret"],
            "mean_after": after[(p, m)]["mean_simple_regret"],
            "median_before": before[(p, m)]["median_simple_regret"],
            "median_after": after[(p, m)]["median_simple_regret"],
            "identical": before[(p, m)]["mean_simple_regret"] == after[(p, m)]["mean_simple_regret"]
            and before[(p, m)]["median_simple_regret"] == after[(p, m)]["median_simple_regret"],
        }
        for (p, m) in before
    ]
    result = {
        "command": "python experiments/engine/demo_cold.py " + " ".join(sys.argv[1:]),
        "machine": machine_info(),
        "load_average_at_start": load,
        "load_average_at_end": os.getloadavg(),
        "before": before_rev,
        "after": after_rev
        + (
            " + working tree changes" if subprocess.run(["git", "diff", "--quiet", "HEAD"], cwd=ROOT).returncode else ""
        ),
        "median_wall_s": {s: float(np.median([r["wall_s"] for r in runs[s]])) for s in runs},
        "median_demo_total_s": {s: float(np.median([r["total_s"] for r in runs[s]])) for s in runs},
        "median_compile_s_sum": {
            s: float(np.median([sum(p["compile_s"] for p in r["programs"]) for r in runs[s]])) for s in runs
        },
        "median_run_s_sum": {
            s: float(np.median([sum(p["run_s"] for p in r["programs"]) for r in runs[s]])) for s in runs
        },
        "median_phases_s": {
            s: {k: float(np.median([r["phases"].get(k, 0.0) for r in runs[s]])) for k in PHASE_NAMES.values()}
            for s in runs
        },
        "final_regret_before_after": compare,
        "runs": runs,
    }
    path = out_dir / args.out
    path.write_text(json.dumps(result, indent=1))
    print(
        json.dumps(
            {
                k: result[k]
                for k in (
                    "median_wall_s",
                    "median_demo_total_s",
                    "median_compile_s_sum",
                    "median_run_s_sum",
                    "median_phases_s",
                )
            },
            indent=1,
        )
    )
    print(f"wrote {path}")


if __name__ == "__main__":
    main()
