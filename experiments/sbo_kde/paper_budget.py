"""SBO-KDE Fig 1 at the released code's T = 350 on one GPU: a queue of fig1.py runs, one process per problem and
method, a few at a time, under one deadline.

    OUT=/tmp/out python experiments/sbo_kde/paper_budget.py --seeds 10 --tag paper_h100_s10 \
        --jobs ackley:sbo_kde ackley:gp_ucb newsvendor:sbo_kde newsvendor:gp_ucb ...

`jbo reproduce sbo_kde fig1 fig2 --budget paper` runs it, one method per step (experiments/sbo_kde/figures.py).

Each job is `fig1.py --problems <problem> --methods <method> --seeds <seeds> --tag <tag>_<method>` at fig1.py's
defaults (the released code's T = 350, the paper's M = 1024), writing fig1_<problem>_<tag>_<method>.csv where
fig1.py writes (experiments/results/sbo_kde/fig1/, fig2/ for ackley_4c, with --update, which the jobs are given,
else their scratch mirror). Heavy methods evaluate
the M x M KDE acquisition (SBO-KDE, StableOpt, MinimaxApprox): on one H100 at 10 seeds such a program holds one 43.9
GiB buffer while it runs, and XLA's autotuner asks for 20 GiB of scratch while it compiles, so heavy jobs run one at
a time (--heavy-memory 0.8 of the GPU) and the others (GP-UCB, DRBO-KDE: a few hundred MiB to 2 GiB at 10 seeds)
beside them (--light-memory 0.03 each). A job starts when its share fits beside those running: the first such job in
the queue, so the order given is the priority. The shares are caps (each process grows its pool up to its share;
nothing is preallocated), and caps that add up to the whole GPU fail: pools that grow together run out of the
physical memory. Because jobs share the GPU, the compile and run seconds that fig1.py writes into each file are not
a measure of one job alone. A job still running at --deadline seconds is stopped (its file is then not written);
the runner exits with a non-zero status when a job failed, was stopped or did not start.
After every finished job, the files written so far and the jobs' logs (logs/job_<problem>_<method>.log) are packed
into $OUT/results.tgz when OUT is set (the files as experiments/results/sbo_kde/<figure>/<name>, to unpack in the
repository root); nothing else is written there, so the tarball is the one file to fetch.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tarfile
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "experiments"))  # outdir
from outdir import add_update_flag, output_dir, updating  # noqa: E402

PAPER = "sbo_kde"

HEAVY = {"sbo_kde", "stableopt", "minimax_approx", "sbo_oracle", "sbo_empirical"}


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--jobs", nargs="+", required=True, help="problem:method pairs, run in this order")
    ap.add_argument("--seeds", type=int, default=5)
    ap.add_argument("--tag", default="paper_gpu")
    ap.add_argument("--parallel", type=int, default=3)
    ap.add_argument("--heavy-memory", type=float, default=0.8, help="GPU memory fraction of a heavy job")
    ap.add_argument("--light-memory", type=float, default=0.03, help="GPU memory fraction of the other jobs")
    ap.add_argument("--deadline", type=float, default=540.0, help="seconds after which running jobs are stopped")
    ap.add_argument("--code-compat", action="store_true", help="pass --code-compat to fig1.py")
    ap.add_argument("--quick", action="store_true", help="pass --quick to fig1.py (a smoke run)")
    ap.add_argument("--screen-block", type=int, default=None, help="pass --screen-block to fig1.py")
    add_update_flag(ap)
    args = ap.parse_args()
    bad = [j for j in args.jobs if j.count(":") != 1]
    if bad:
        raise ValueError(f"--jobs: {bad} are not problem:method pairs")
    jobs = [tuple(j.split(":")) for j in args.jobs]
    out = Path(os.environ["OUT"]) if os.environ.get("OUT") else None

    def folder(problem):  # where fig1.py writes a problem's files: its figure's folder
        return "fig2" if problem == "ackley_4c" else "fig1"

    csvs = {f: output_dir(PAPER, f) for f in {folder(p) for p, _ in jobs}}
    logs = Path(tempfile.mkdtemp(prefix="paper_budget_"))
    start = time.monotonic()
    queue, running, written, failed = list(jobs), {}, [], []

    def log(msg):
        print(f"[{time.monotonic() - start:6.1f} s] {msg}", flush=True)

    def share(method):
        return args.heavy_memory if method in HEAVY else args.light_memory

    while queue or running:
        for job, (proc, path, t0) in list(running.items()):
            if proc.poll() is not None:
                del running[job]
                log(f"{job[0]}:{job[1]} rc {proc.returncode} after {time.monotonic() - t0:.1f} s (log {path.name})")
                if proc.returncode != 0:
                    failed.append(f"{job[0]}:{job[1]}")
                fig = folder(job[0])
                written += [(fig, p) for p in csvs[fig].glob(f"fig*_{job[0]}_{args.tag}_{job[1]}.*")]
                if out is not None:
                    with tarfile.open(out / "results.tgz", "w:gz") as tar:
                        for fig_name, p in written:
                            tar.add(p, arcname=f"experiments/results/{PAPER}/{fig_name}/{p.name}")
                        for p in sorted(logs.glob("job_*.log")):
                            tar.add(p, arcname=f"logs/{p.name}")
        if time.monotonic() - start > args.deadline:
            for job, (proc, _, _) in running.items():
                log(f"{job[0]}:{job[1]} stopped at the deadline")
                failed.append(f"{job[0]}:{job[1]}")
                proc.kill()
            log(f"not started: {[f'{p}:{m}' for p, m in queue]}")
            failed += [f"{p}:{m}" for p, m in queue]
            break
        free = 1.0 - sum(share(m) for _, m in running)
        fits = [j for j in queue if share(j[1]) <= free - 0.05]  # 5% for the CUDA contexts
        if fits and len(running) < args.parallel:
            problem, method = fits[0]
            queue.remove(fits[0])
            env = dict(
                os.environ,
                PYTHONPATH=str(ROOT),
                PYTHONUNBUFFERED="1",
                XLA_PYTHON_CLIENT_PREALLOCATE="false",
                XLA_PYTHON_CLIENT_MEM_FRACTION=f"{share(method):.2f}",
            )
            cmd = [
                sys.executable,
                str(ROOT / "experiments/sbo_kde/fig1.py"),
                "--problems",
                problem,
                "--methods",
                method,
            ]
            cmd += ["--seeds", str(args.seeds), "--tag", f"{args.tag}_{method}"]
            cmd += ["--code-compat"] * args.code_compat + ["--quick"] * args.quick + ["--update"] * updating()
            if args.screen_block is not None:
                cmd += ["--screen-block", str(args.screen_block)]
            path = logs / f"job_{problem}_{method}.log"
            with path.open("w") as out_file:  # the child keeps its own copy of the descriptor
                proc = subprocess.Popen(cmd, stdout=out_file, stderr=subprocess.STDOUT, cwd=ROOT, env=env)
            running[(problem, method)] = (proc, path, time.monotonic())
            log(f"{problem}:{method} started ({len(running)} running)")
            continue
        time.sleep(1.0)
    log("done")
    if failed:  # a non-zero exit, so that jbo reproduce runs the step again
        raise SystemExit(f"paper_budget: {len(failed)} job(s) failed, stopped or not started: {' '.join(failed)}")


if __name__ == "__main__":
    main()
