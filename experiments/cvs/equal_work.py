"""Equal-work speed comparison of jbo's uCVS baselines against the authors' released code.

  JBO_CACHE=0 python experiments/cvs/equal_work.py --authors /path/to/BO-uCVS
      -> equal_work.json (experiments/results/cvs/ with --update)

Problem: Hartmann-6 with six dummy variables (12-D), the cheap cost set (0.01, 0.01, 0.01, 0.1, 0.1,
0.1, 1) with unknown costs (cost noise std 0.01 on every set, clipped to [0.001, 2]), free-variable
variance v = 0.02, budget C = 100, 5 free initial points, no observation noise: the authors' objective
"Hartmann6" (dims 12), costs_id 3, var_id 2, and jbo's CVSProblem("hartmann12", "cheap", 0.02,
preset="official"). Methods: UCB-PSQ and ETC-50, one seed each.

Three kinds of run, alternated method by method in one process so that the ratios are measured under
the same machine state (authors' UCB-PSQ, jbo at the authors' sizes, jbo at the grid's sizes, then the
same for ETC-50):

* the authors' code (only with --authors PATH, a local copy of GitHub Fsoft-AIC/BO-uCVS; that code is
  not part of jbo and is never imported into this process): a child process sets up the run as the
  released main.py does (seeded torch, get_objective, 5 uniform initial points, the SE-ARD kernel with
  l = 0.2, noise 1e-4, 1500 fixed Monte-Carlo rows) and calls the repository's bo_loop with
  get_acquisition("ucb" / "etc") -- main.py itself only runs the proposed method through
  modified_bo_loop -- then get_regret and the three plot_regret figures as main.py does. Its wall clock
  covers all of that. The child also counts the L-BFGS-B iterations and function evaluations of every
  scipy minimize call (a wrapper around core.utils.minimize; the authors' files are not changed).
* jbo at the authors' sizes: 1500 Monte-Carlo rows, 2 local starts, the authors' screening sizes (2000
  uniform points for UCB-PSQ, whose only maximisation is the full set; 100 for ETC-50, the authors'
  size for the expected sets, also used by jbo on ETC's full-set steps where the authors screen 2000),
  and --opt-steps Adam steps per start. The default 29 is the number of gradients the authors'
  L-BFGS-B computes per start: in their whole UCB-PSQ run it made 16.3 iterations and 373 function
  evaluations per start on average, i.e. 373 / (d + 1) = 29 forward-difference gradients; the JSON
  records the numbers of each authors' run. jbo's Adam step is one value and reverse-mode gradient
  (about 3 evaluations' cost, not d + 1).
* jbo at the authors' sizes with the authors' kind of optimiser: the same sizes, but jbo's bounded
  L-BFGS (opt_method="lbfgs") for --lbfgs-steps iterations per start (default 16, the authors' 16.3
  L-BFGS-B iterations per start; 0 skips this run).
* jbo at the grid's sizes (fig1.GRID_ACQ: 16 Monte-Carlo rows, 16 candidates, 1 start x 5 Adam steps).

With --authors-timeout (seconds per method) or --finish-by (UTC HH:MM) an authors' run is stopped
at a time limit; the steps it completed
and their time (from its log's time stamps) are then compared with jbo runs of the same number of
steps (T_max = 5 + k, marked "same steps"), and the full-budget jbo runs are made as well.

jbo runs are timed as compile (ahead of time; run with JBO_CACHE=0 for a cold compile) and run
(fig1.run_program: T_max scan steps, one seed, steps after the budget do no work). Before the timed
runs the script waits until the 1-minute load average is below --max-load or until --wait-until (UTC
HH:MM). The JSON is rewritten after every run.
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import os
import subprocess
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # experiments/: outdir
from outdir import add_update_flag, output_dir  # noqa: E402

METHODS = {"UCB-PSQ": ("ucb_psq", "ucb"), "ETC-50": ("etc", "etc")}  # jbo method, authors' acq_name
SEED = 0


# ---------------------------------------------------------------- the authors' code, in a child process
def authors_child(path: str, acq_name: str, seed: int, budget: float, out: str):
    """Run one baseline with the authors' code at `path` (cwd and sys.path), write a JSON summary to out."""
    os.chdir(path)
    sys.path.insert(0, path)
    import matplotlib

    matplotlib.use("Agg")
    import core.utils as U
    import numpy as np
    import torch

    lbfgs = []
    minimize = U.minimize

    def counted(*a, **k):
        res = minimize(*a, **k)
        lbfgs.append((int(res.nit), int(res.nfev)))
        return res

    U.minimize = counted  # instrumentation only: maximize_fn looks minimize up in core.utils
    from core.acquisitions import get_acquisition
    from core.cvs import get_control_sets_and_costs
    from core.dists import get_dists_and_samples, get_marginal_var
    from core.objectives import get_objective
    from core.optimization import bo_loop
    from core.regret import get_regret, plot_regret
    from gpytorch.constraints.constraints import Interval
    from gpytorch.kernels import RBFKernel, ScaleKernel
    from gpytorch.likelihoods.gaussian_likelihood import GaussianLikelihood

    t0 = time.perf_counter()
    print("EQUAL_WORK_START", dt.datetime.now().isoformat(sep=" "), flush=True)  # the format of core.utils.log
    torch.manual_seed(seed)
    dims = 12
    obj, noisy, opt_val, bounds = get_objective("Hartmann6", 0.01, True, None, dims)
    init_X = U.uniform_samples(bounds=bounds, n_samples=5)
    with torch.no_grad():
        init_y = noisy(init_X)
    kernel = ScaleKernel(RBFKernel(ard_num_dims=dims, lengthscale_constraint=Interval(1e-2, 1e4)))
    kernel.outputscale = 1.0
    kernel.base_kernel.lengthscale = 0.2
    likelihood = GaussianLikelihood()
    likelihood.noise = 0.01**2
    control_sets, random_sets, costs = get_control_sets_and_costs(dims=dims, control_sets_id=0, costs_id=3)
    all_dists, samples = get_dists_and_samples(dims=dims, variance=get_marginal_var(2))
    acquisition = get_acquisition(acq_name=acq_name, eps_schedule_id=0, costs=costs)
    t_loop = time.perf_counter()
    X, y, idxs, queries, T, spent = bo_loop(
        init_X,
        init_y,
        likelihood,
        kernel,
        noisy,
        0,
        budget,
        acquisition,
        bounds,
        all_dists,
        control_sets,
        random_sets,
        samples,
        costs,
        None,
    )
    loop_s = time.perf_counter() - t_loop
    simple, cumu, cs_cumu, cost_per_iter = get_regret(
        idxs, queries, obj, control_sets, random_sets, samples, bounds, spent, opt_val
    )
    figs = f"results/equal_work/{acq_name}_seed{seed}/"
    for reg, axis, suffix in ((cumu, "T", "_T"), (cs_cumu, "C", "_C"), (simple, "C", "_Csimple")):
        plot_regret(reg, cost_per_iter, axis, T, save=True, save_dir=figs, filename=acq_name + suffix)
    run_s = time.perf_counter() - t0
    nit = np.array([a for a, _ in lbfgs])
    nfev = np.array([b for _, b in lbfgs])
    summary = dict(
        run_s=run_s,
        bo_loop_s=loop_s,
        steps=int(T),
        spent=float(np.sum(spent)),
        final_simple_regret=float(simple[-1]),
        set_counts=np.bincount(np.asarray(idxs), minlength=len(control_sets)).tolist(),
        lbfgsb_calls=len(lbfgs),
        lbfgsb_iterations_mean=float(nit.mean()) if len(nit) else None,
        lbfgsb_function_evaluations_mean=float(nfev.mean()) if len(nfev) else None,
        torch_threads=torch.get_num_threads(),
        torch=torch.__version__,
    )
    Path(out).write_text(json.dumps(summary))


def steps_from_log(log: Path) -> tuple[int, float | None]:
    """(BO steps completed, seconds from the run's start to the start of the step after the last
    completed one) from the child's log (core.utils.log prints 't = k' with a time stamp each step)."""
    start, stamps = None, []
    for line in log.read_text(errors="replace").splitlines():
        if line.startswith("EQUAL_WORK_START "):
            start = dt.datetime.fromisoformat(line.split(" ", 1)[1].strip())
        elif " - t = " in line:
            stamps.append(dt.datetime.fromisoformat(line.split(" - ", 1)[0]))
    if start is None or len(stamps) < 2:
        return 0, None
    return len(stamps) - 1, (stamps[-1] - start).total_seconds()


def run_authors(path: Path, acq_name: str, budget: float, log: Path, timeout: float) -> dict:
    """The authors' run in a child process; stopped after `timeout` s, when the steps it completed and
    their time (from the log) are recorded instead of the whole run."""
    out = log.with_suffix(".json")
    out.unlink(missing_ok=True)
    cmd = [
        sys.executable,
        str(Path(__file__).resolve()),
        "--child",
        str(path),
        acq_name,
        str(SEED),
        str(budget),
        str(out),
    ]
    t0 = time.perf_counter()
    with open(log, "w") as fh:
        try:
            proc = subprocess.run(cmd, stdout=fh, stderr=subprocess.STDOUT, timeout=timeout)
            code = proc.returncode
        except subprocess.TimeoutExpired:
            code = None
    wall = time.perf_counter() - t0
    if code is None:
        k, secs = steps_from_log(log)
        return dict(
            complete=False,
            stopped_after_s=wall,
            steps=k,
            run_s=secs,
            note=f"stopped at the time limit ({timeout:.0f} s): run_s is the time of the first {k} steps "
            "(from the run's start, set-up included), the jbo runs marked 'same steps' make as many",
        )
    if code != 0:
        return dict(complete=False, error=f"exit {code}; see {log.name}", process_wall_s=wall)
    res = json.loads(out.read_text())
    res["complete"] = True
    res["process_wall_s"] = wall  # includes starting Python and importing torch / botorch
    return res


# ---------------------------------------------------------------- jbo
def run_jbo(method: str, sizes: dict, tmax: int, budget: float) -> dict:
    """One seed of jbo (fig1.run_program with the budget as an argument): compile s, run s, summary."""
    import jax
    import numpy as np

    from jbo import engine
    from jbo.algorithms import cvs as A
    from jbo.problems import cvs as P

    env = P.CVSProblem("hartmann12", "cheap", 0.02, preset="official")
    kw = dict(method=method, **sizes)
    if method == "etc":
        kw["groups"] = "official"  # the authors' groups (5, 1, 2, 3), (6, 4, 7)
    alg = A.CVS(**kw)
    params = alg.default_params()._replace(budget=budget)
    stacked, axes = engine.stack_environments([env])
    prog = jax.jit(engine.environments_program(alg, tmax, axes, 1, budget, True, True))
    keys = jax.random.split(jax.random.key(2025), 1)  # fig1.run_program's keys
    t0 = time.perf_counter()
    compiled = prog.lower(stacked, keys, params).compile()
    tc = time.perf_counter() - t0
    t0 = time.perf_counter()
    trace = jax.block_until_ready(compiled(stacked, keys, params))
    tr = time.perf_counter() - t0
    m = trace.metrics
    active = np.asarray(m["active"][0, 0]) & ~np.asarray(m["initial"][0, 0])
    sets = np.asarray(trace.actions.set[0, 0])[active]
    xs = np.asarray(trace.actions.x[0, 0])[active]
    f_eval = np.asarray(P.expected_values(env, sets, xs, jax.random.key(7), 8192))
    f_own = np.asarray(m["value"][0, 0])[active]
    f_plus = float(env.f_plus)
    return dict(
        compile_s=tc,
        run_s=tr,
        steps=int(active.sum()),
        spent=float(np.asarray(m["cost"][0, 0])[active].sum()),
        final_simple_regret=float(f_plus - f_eval.max()),
        final_simple_regret_own_1500_rows=float(f_plus - f_own.max()),
        set_counts=np.bincount(sets, minlength=7).tolist(),
        truncated=bool(np.asarray(m["cost"][0, 0])[active].sum() < budget),
    )


def utc_time(hhmm: str) -> dt.datetime:
    """The next (or just past) UTC time HH:MM as a datetime."""
    hh, mm = map(int, hhmm.split(":"))
    now = dt.datetime.now(dt.timezone.utc)
    when = now.replace(hour=hh, minute=mm, second=0, microsecond=0)
    return when + dt.timedelta(days=1) if when < now - dt.timedelta(hours=12) else when


def wait_for_load(max_load: float, until: str) -> dict:
    deadline = utc_time(until)
    t0 = time.time()
    while os.getloadavg()[0] >= max_load and dt.datetime.now(dt.timezone.utc) < deadline:
        time.sleep(15)
    return dict(
        waited_s=round(time.time() - t0, 1), load_when_started=os.getloadavg(), max_load=max_load, until_utc=until
    )


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--authors", type=Path, default=None, help="a local copy of Fsoft-AIC/BO-uCVS (not part of jbo)")
    ap.add_argument("--methods", nargs="*", default=list(METHODS))
    ap.add_argument("--opt-steps", type=int, default=29, help="jbo's Adam steps per start at the authors' sizes")
    ap.add_argument("--lbfgs-steps", type=int, default=16, help="jbo's L-BFGS iterations per start (0: no run)")
    ap.add_argument("--tmax", type=int, default=200, help="jbo's scan length (the runs here take 100-160 steps)")
    ap.add_argument("--budget", type=float, default=100.0)
    ap.add_argument("--max-load", type=float, default=0.8)
    ap.add_argument("--wait-until", default="00:55", help="UTC HH:MM: start then whatever the load")
    ap.add_argument(
        "--authors-timeout",
        nargs="*",
        type=float,
        default=None,
        help="seconds per method (in --methods order) after which the authors' run is stopped; its completed "
        "steps are then compared with jbo runs of as many steps",
    )
    ap.add_argument(
        "--finish-by",
        default=None,
        help="UTC HH:MM: limit the authors' runs so that everything ends about then (each remaining method "
        "keeps --jbo-reserve s for its jbo runs; the first of two authors' runs gets 60%% of the rest)",
    )
    ap.add_argument("--jbo-reserve", type=float, default=240.0)
    ap.add_argument("--out", type=Path, default=None, help="default: equal_work.json in the output folder")
    add_update_flag(ap)
    a = ap.parse_args()
    a.out = (a.out or output_dir("cvs") / "equal_work.json").resolve()  # the authors' child runs in their folder

    import fig1 as F

    from jbo import studies

    sys.stdout.reconfigure(line_buffering=True)
    out = dict(
        machine=studies.machine_info(),
        jbo_cache=os.environ.get("JBO_CACHE", "(unset: on)"),
        problem="hartmann12 (authors: Hartmann6, dims 12), cheap costs, unknown (std 0.01 on every set), "
        "v = 0.02, budget 100, 5 free initial points, no observation noise",
        seed=SEED,
        authors_code=(
            f"{a.authors} (a local copy of GitHub Fsoft-AIC/BO-uCVS, run in a child process; not part of jbo)"
            if a.authors
            else None
        ),
        started_utc=dt.datetime.now(dt.timezone.utc).isoformat(timespec="seconds"),
        loadavg_at_start=os.getloadavg(),
    )
    out["wait"] = wait_for_load(a.max_load, a.wait_until)
    print(out, flush=True)
    runs = out["runs"] = []
    authors_sizes = {
        "ucb_psq": dict(num_mc=1500, num_raw=2000, num_starts=2, opt_steps=a.opt_steps),
        "etc": dict(num_mc=1500, num_raw=100, num_starts=2, opt_steps=a.opt_steps),
    }

    def record(entry):
        entry["load_after"] = os.getloadavg()
        runs.append(entry)
        print(json.dumps(entry), flush=True)
        out["loadavg_at_end"] = os.getloadavg()
        out["ended_utc"] = dt.datetime.now(dt.timezone.utc).isoformat(timespec="seconds")
        a.out.write_text(json.dumps(out, indent=1))

    def jbo_run(name, jm, label, sizes, tmax):
        load = os.getloadavg()
        res = run_jbo(jm, sizes, tmax, a.budget)
        sizes = dict({"opt_method": "adam", **sizes}, tmax=tmax)
        record(dict(code=label, method=name, sizes=sizes, load_before=load, **res))

    timeouts = dict(zip(a.methods, a.authors_timeout)) if a.authors_timeout else {}
    finish_by = utc_time(a.finish_by) if a.finish_by else None
    later = []  # full-budget jbo runs of methods whose authors' run was stopped early
    for n, name in enumerate(a.methods):
        jm, am = METHODS[name]
        matched = None  # the authors' step count when their run was stopped early
        if a.authors:
            limit = timeouts.get(name, 24 * 3600.0)
            if finish_by is not None:  # leave each remaining method its jbo runs, the first 60% of the rest
                left = (finish_by - dt.datetime.now(dt.timezone.utc)).total_seconds()
                remaining = len(a.methods) - n
                avail = left - a.jbo_reserve * remaining
                limit = min(limit, max(avail * (0.6 if remaining > 1 else 1.0), 60.0))
            load = os.getloadavg()
            log = a.out.with_name(f"{a.out.stem}_authors_{am}.log")
            res = run_authors(a.authors.resolve(), am, a.budget, log, limit)
            record(
                dict(
                    code="authors",
                    method=name,
                    acq_name=am,
                    sizes="1500 Monte-Carlo rows; screening 2000 single-point calls (full set) / 100 (expected "
                    "sets), then scipy L-BFGS-B (finite-difference gradients) from 2 starts",
                    time_limit_s=limit,
                    load_before=load,
                    **res,
                )
            )
            if not res.get("complete") and res.get("steps"):
                matched = res["steps"]
        plan = [("jbo, authors' sizes", authors_sizes[jm]), ("jbo, grid sizes", dict(F.GRID_ACQ))]
        if a.lbfgs_steps:
            lbfgs = dict(authors_sizes[jm], opt_steps=a.lbfgs_steps, opt_method="lbfgs")
            plan.insert(1, ("jbo, authors' sizes, L-BFGS", lbfgs))
        if matched:
            todo = [(label + ", same steps", sz, 5 + matched) for label, sz in plan]
            later += [(name, jm, label, sz, a.tmax) for label, sz in plan]
        else:
            todo = [(label, sz, a.tmax) for label, sz in plan]
        for label, sizes, tmax in todo:
            jbo_run(name, jm, label, sizes, tmax)
    for name, jm, label, sizes, tmax in later:
        if finish_by is not None and dt.datetime.now(dt.timezone.utc) > finish_by:
            print("past --finish-by: skipping the full-budget jbo run", name, label, flush=True)
            continue
        jbo_run(name, jm, label, sizes, tmax)

    ratios = {}
    for name in a.methods:
        by = {r["code"]: r for r in runs if r["method"] == name}
        auth = by.get("authors", {})
        if auth.get("run_s"):
            suffix = "" if auth.get("complete") else ", same steps"
            for label in ("jbo, authors' sizes", "jbo, authors' sizes, L-BFGS", "jbo, grid sizes"):
                r = by.get(label + suffix)
                if r is None:
                    continue
                key = f"{name}: authors / {label}{suffix} ({auth['steps']} steps)"
                ratios[key + ", run s"] = auth["run_s"] / r["run_s"]
                ratios[key + ", compile + run s"] = auth["run_s"] / (r["run_s"] + r["compile_s"])
    out["ratios"] = ratios
    out["loadavg_at_end"] = os.getloadavg()
    out["ended_utc"] = dt.datetime.now(dt.timezone.utc).isoformat(timespec="seconds")
    a.out.write_text(json.dumps(out, indent=1))
    print(json.dumps(ratios, indent=1))


if __name__ == "__main__":
    if len(sys.argv) > 1 and sys.argv[1] == "--child":
        p, acq, seed, budget, dest = sys.argv[2:7]
        authors_child(p, acq, int(seed), float(budget), dest)
    else:
        main()
