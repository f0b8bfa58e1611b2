"""The engine benchmark at two commits in one run: `experiments/engine/bench_engine.py` on the jbo of a
reference commit (checked out in a git worktree) and on this working tree, alternating, so that both
sides see the same machine and load. Compile and run time are reported apart, with each side's
median over the repeats and the ratio after / before.

    python experiments/engine/bench_before_after.py --before 07c2f4c --steps 50 200 --repeats 2 --update
    python experiments/engine/bench_before_after.py --before 3a5afba --steps 400 1000 --repeats 1 \
        --out bench_engine_blocked_lml.json --update

Each invocation runs `bench_engine.py --steps ... --botorch-steps` (no BoTorch) with the persistent
compilation cache off (JBO_CACHE=0), in a fresh process, one core's worth of threads each. Writes
bench_engine_before_after.json, or --out (experiments/results/engine with --update, else its scratch mirror).
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # experiments/: outdir
from before_after import alternate, write  # noqa: E402
from outdir import add_update_flag, output_dir  # noqa: E402


def bench(tree: Path, steps, seeds: int, tag: str, scratch: Path) -> dict:
    env = dict(os.environ, JBO_CACHE="0", JBO_SCRATCH=str(scratch), PYTHONPATH=str(tree))
    env.pop("JBO_UPDATE_RESULTS", None)
    # experiments/engine/bench_engine.py (writes <scratch>/engine/), or at an older commit
    # experiments/engine/bench_engine.py (writes <scratch>/ itself)
    script = tree / "experiments" / "engine" / "bench_engine.py"
    if not script.exists():
        script = tree / "experiments" / "bench_engine.py"
    cmd = [sys.executable, str(script), "--steps", *map(str, steps)]
    cmd += ["--seeds", str(seeds), "--botorch-steps", "--tag", tag]
    subprocess.run(cmd, check=True, cwd=tree, env=env, stdout=subprocess.DEVNULL)
    name = f"bench_engine_{tag}.json"
    out = scratch / "engine" / name
    return json.loads((out if out.exists() else scratch / name).read_text())


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--before", required=True, help="the reference commit")
    ap.add_argument("--steps", type=int, nargs="+", default=[50, 200])
    ap.add_argument("--seeds", type=int, default=8)
    ap.add_argument("--repeats", type=int, default=2)
    ap.add_argument("--out", default="bench_engine_before_after.json", help="file name in the output folder")
    add_update_flag(ap)
    args = ap.parse_args()

    def measure(side, tree, r, scratch):
        record = bench(tree, args.steps, args.seeds, f"{side}{r}", scratch / "scratch")
        print(side, r, [(j["steps"], round(j["compile_s"], 2), round(j["run_s"], 3)) for j in record["jbo"]])
        return record

    runs, before_rev, after_rev = alternate(args.before, args.repeats, measure)
    table = []
    for T in args.steps:
        row = {"steps": T, "seeds": args.seeds}
        for side in ("before", "after"):
            rows = [next(j for j in rec["jbo"] if j["steps"] == T) for rec in runs[side]]
            row[f"{side}_compile_s"] = float(np.median([j["compile_s"] for j in rows]))
            row[f"{side}_run_s"] = float(np.median([j["run_s"] for j in rows]))
            row[f"{side}_median_final_regret"] = rows[0]["median_final_regret"]
        row["compile_ratio_after_before"] = row["after_compile_s"] / row["before_compile_s"]
        row["run_ratio_after_before"] = row["after_run_s"] / row["before_run_s"]
        table.append(row)
        print(json.dumps(row))
    write(
        output_dir("engine") / args.out,
        "experiments/engine/bench_before_after.py",
        before_rev,
        after_rev,
        machine=runs["after"][0]["machine"],
        load_average_at_start=[rec["load_average_at_start"] for rec in runs["after"]],
        task=runs["after"][0]["task"],
        table=table,
        runs=runs,
    )


if __name__ == "__main__":
    main()
