"""Equal-work speed comparison of jbo's uCVS and its baselines against the authors' released code.

  python experiments/ucvs/equal_work.py --authors /path/to/BO-uCVS --pin 1 --max-load 99 [--update]
      -> equal_work.json and its table equal_work.md (experiments/results/ucvs/equal_work/ with --update,
         else its scratch mirror), the authors' logs equal_work_authors_*.log

--pin 1 runs as the committed comparison ran (`OMP_NUM_THREADS=1 JBO_CACHE=0 taskset -c 1`): one thread on
CPU 1, for this process and the authors' child, and jbo's compile cold. --authors defaults to
$BO_UCVS_PATH, so that `jbo reproduce ucvs equal_work` (which passes no path) runs the authors' side where
that is set; with neither (or with --authors none) only jbo's runs are made and equal_work.md has no rows.

Problem: Hartmann-6 with six dummy variables (12-D), the cheap cost set (0.01, 0.01, 0.01, 0.1, 0.1,
0.1, 1) with unknown costs (cost noise std 0.01 on every set, clipped to [0.001, 2]), free-variable
variance v = 0.02, 5 free initial points, no observation noise: the authors' objective "Hartmann6"
(dims 12), costs_id 3, var_id 2, and jbo's CVSProblem("hartmann12", "cheap", 0.02, preset="official").
One seed. The paper's budget is C = 100; here each method runs a reduced budget (a CPU budget of one
core-hour for the whole comparison), the same on both sides, so that both codes do the same steps:

* UCB-PSQ at C = 4.5 (5 full-set steps),
* ETC-50 at C = 0.25 (3 steps of its first group, the expected sets 5, 1, 2, 3 at cost 0.01-0.1, of which
  it plays set 5 at cost 0.1; its commit phase, full-set steps like UCB-PSQ's, lies beyond this budget),
* uCVS at C = 1.5, stopped after 8 steps on both sides (--steps): exploration while the remaining
  budget is at least 0.4 C (round robin from set 2: five cheaper sets, then the full set: 6 steps), then
  2 exploitation steps (hyper-parameters refitted, every set maximised).

The ratio is per equal work: the same problem, budget and number of steps, at the sizes below; run
time per run, with jbo's compile time apart, in wall seconds and in the process's CPU seconds
(time.process_time; on a machine shared with other work the CPU seconds count them less), both recorded;
equal_work.md shows CPU seconds with the wall ratio beside. Each comparison is --repeats alternations in one process
(the authors' run, then the jbo runs; again; ...), so that the ratios are measured under the same
machine state: the JSON gives each repeat, and per ratio the mean, the standard deviation and the
range over the repeats. uCVS is timed --ucvs-repeats times (default 1). The JSON is rewritten after
every run.

Three kinds of run:

* the authors' code (with --authors PATH, a local copy of GitHub Fsoft-AIC/BO-uCVS; that code is not
  part of jbo and is never imported into this process): a child process sets up the run as the
  released main.py does (seeded torch, get_objective, 5 uniform initial points, the SE-ARD kernel with
  l = 0.2, noise 1e-4, 1500 fixed Monte-Carlo rows) and calls the repository's bo_loop with
  get_acquisition("ucb" / "etc") for the baselines, and modified_bo_loop (exploration until 60 % of the
  budget, then Exploit_CVS with gp.fit every step) for uCVS, as main.py does; then get_regret and the
  three plot_regret figures as main.py does (not for a run stopped at --steps). Its time covers all of
  that from the set-up on (not Python's start or the imports). The child also counts the L-BFGS-B
  iterations and function evaluations of every scipy minimize call (a wrapper around
  core.utils.minimize) and records the sets it plays (a wrapper around core.optimization.log, which
  also stops a run at --steps); the authors' files are not changed by this script.
* jbo at the released code's sizes: 1500 Monte-Carlo rows, 2 local starts, the released code's
  screening sizes (2000 uniform points for UCB-PSQ, whose only maximisation is the full set; 100 for
  ETC-50 and uCVS, the released code's size for the expected sets, also used by jbo on their full-set
  maximisations, where the released code screens 2000 or 1500), and --opt-steps Adam steps per start.
  The default 29 is the number of gradients the released code's L-BFGS-B computed per start in a whole
  UCB-PSQ run (16.3 iterations and 373 function evaluations per start on average, 373 / (d + 1) = 29
  forward-difference gradients); the JSON records the numbers of each of the authors' runs here.
  jbo's Adam step is one value and reverse-mode gradient (about 3 evaluations' cost, not d + 1).
* jbo at the released code's sizes with the released code's kind of optimiser: the same sizes, but
  jbo's bounded L-BFGS (opt_method="lbfgs") for --lbfgs-steps iterations per start (default 16, the
  released code's 16.3 L-BFGS-B iterations per start; 0 skips this run).
* jbo at the grid's sizes (fig1.GRID_ACQ: 16 Monte-Carlo rows, 16 candidates, 1 start x 5 Adam steps).

jbo runs are timed as compile (once per method and sizes, ahead of time; run with JBO_CACHE=0 for a
cold compile) and run (the compiled program: T_max scan steps, one seed, steps after the budget do no
work; the same program and inputs on every repeat). Before the timed runs the script waits until the
1-minute load average is below --max-load or until --wait-until (UTC HH:MM).
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

#: name: jbo method, the authors' acq_name, the reduced budget, the step cap (None: the whole budget)
METHODS = {
    "UCB-PSQ": dict(jbo="ucb_psq", authors="ucb", budget=4.5, steps=None),
    "ETC-50": dict(jbo="etc", authors="etc", budget=0.25, steps=None),
    "uCVS": dict(jbo="ucvs", authors="proposed", budget=1.5, steps=8),
}
SEED = 0
AUTHORS_SIZES = (
    "1500 Monte-Carlo rows; screening 2000 (full set: UCB-PSQ, ETC, uCVS's exploration) / 1500 (uCVS's "
    "full-set LCB) / 100 (expected sets) single-point calls, then scipy L-BFGS-B (finite-difference "
    "gradients) from 2 starts"
)


class StepCap(Exception):
    """Raised by the child's wrapper of core.optimization.log when the loop starts step --steps + 1."""


# ---------------------------------------------------------------- the authors' code, in a child process
def authors_child(path: str, acq_name: str, seed: int, budget: float, steps: int, out: str):
    """Run one method with the authors' code at `path` (cwd and sys.path), write a JSON summary to out;
    steps > 0 stops the loop when it starts step steps + 1."""
    os.chdir(path)
    sys.path.insert(0, path)
    import matplotlib

    matplotlib.use("Agg")
    import core.optimization as O
    import core.utils as U
    import numpy as np
    import torch

    lbfgs, played = [], []
    minimize, log = U.minimize, O.log

    def counted(*a, **k):
        res = minimize(*a, **k)
        lbfgs.append((int(res.nit), int(res.nfev)))
        return res

    def logged(msg):
        if steps and msg.startswith(f"t = {steps + 1},"):
            raise StepCap
        log(msg)
        if msg.startswith("Control set chosen: "):
            played.append(int(msg.rsplit(" ", 1)[1]))

    U.minimize = counted  # instrumentation only: maximize_fn looks minimize up in core.utils
    O.log = logged  # the loops look log up in core.optimization
    from core.acquisitions import get_acquisition
    from core.cvs import get_control_sets_and_costs, get_eps_schedule
    from core.dists import get_dists_and_samples, get_marginal_var
    from core.objectives import get_objective
    from core.regret import get_regret, plot_regret
    from gpytorch.constraints.constraints import Interval
    from gpytorch.kernels import RBFKernel, ScaleKernel
    from gpytorch.likelihoods.gaussian_likelihood import GaussianLikelihood

    t0, c0 = time.perf_counter(), time.process_time()
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
    marginal_var = get_marginal_var(2)
    all_dists, samples = get_dists_and_samples(dims=dims, variance=marginal_var)
    acquisition = get_acquisition(acq_name=acq_name, eps_schedule_id=0, costs=costs)
    common = (bounds, all_dists, control_sets, random_sets, samples, costs)
    t_loop = time.perf_counter()
    capped = False
    try:
        if acq_name == "proposed":  # main.py: modified_bo_loop, exploration until 60 % of the budget
            eps = get_eps_schedule(
                id=0,
                costs=costs,
                control_sets=control_sets,
                random_sets=random_sets,
                variances=marginal_var * np.ones(dims),
                lengthscales=0.2 * np.ones(dims),
                budget=budget,
            )
            Path("results/equal_work").mkdir(parents=True, exist_ok=True)
            result = O.modified_bo_loop(
                init_X, init_y, likelihood, kernel, noisy, budget * 0.6, budget, None, *common, eps,
                file_path="results/equal_work/raw_proposed.pkl",
            )  # fmt: skip
        else:
            result = O.bo_loop(init_X, init_y, likelihood, kernel, noisy, 0, budget, acquisition, *common, None)
    except StepCap:
        capped = True
    loop_s = time.perf_counter() - t_loop
    summary = dict(steps=len(played), played=played, stopped_at_steps=capped)
    if not capped:
        X, y, idxs, queries, T, spent = result
        simple, cumu, cs_cumu, cost_per_iter = get_regret(
            idxs, queries, obj, control_sets, random_sets, samples, bounds, spent, opt_val
        )
        figs = f"results/equal_work/{acq_name}_seed{seed}/"
        for reg, axis, suffix in ((cumu, "T", "_T"), (cs_cumu, "C", "_C"), (simple, "C", "_Csimple")):
            plot_regret(reg, cost_per_iter, axis, T, save=True, save_dir=figs, filename=acq_name + suffix)
        summary.update(steps=int(T), spent=float(np.sum(spent)), final_simple_regret=float(simple[-1]))
    run_s, run_cpu_s = time.perf_counter() - t0, time.process_time() - c0
    nit = np.array([a for a, _ in lbfgs])
    nfev = np.array([b for _, b in lbfgs])
    summary.update(
        run_s=run_s,
        run_cpu_s=run_cpu_s,
        loop_s=loop_s,
        set_counts=np.bincount(np.asarray(played, int), minlength=len(control_sets)).tolist(),
        lbfgsb_calls=len(lbfgs),
        lbfgsb_iterations_mean=float(nit.mean()) if len(nit) else None,
        lbfgsb_function_evaluations_mean=float(nfev.mean()) if len(nfev) else None,
        torch_threads=torch.get_num_threads(),
        torch=torch.__version__,
    )
    Path(out).write_text(json.dumps(summary))


def run_authors(path: Path, acq_name: str, budget: float, steps: int, log: Path) -> dict:
    """The authors' run in a child process (its own log); the child's summary, or the error."""
    out = log.with_suffix(".json")
    out.unlink(missing_ok=True)
    cmd = [sys.executable, str(Path(__file__).resolve()), "--child", str(path), acq_name, str(SEED)]
    cmd += [str(budget), str(steps or 0), str(out)]
    t0 = time.perf_counter()
    with open(log, "w") as fh:
        code = subprocess.run(cmd, stdout=fh, stderr=subprocess.STDOUT).returncode
    wall = time.perf_counter() - t0
    if code != 0:
        return dict(complete=False, error=f"exit {code}; see {log.name}", process_wall_s=wall)
    res = json.loads(out.read_text())
    out.unlink()
    res["complete"] = True
    res["process_wall_s"] = wall  # includes starting Python and importing torch / botorch
    return res


# ---------------------------------------------------------------- jbo
def compile_jbo(method: str, sizes: dict, tmax: int, budget: float):
    """(run, (compile s, compile CPU s), environment): run() times the compiled program once and returns
    (run s, run CPU s, trace)."""
    import fig1 as F
    import jax

    from jbo.problems import ucvs as P

    env = P.CVSProblem("hartmann12", "cheap", 0.02, preset="official")
    kw = dict(method=method, **sizes)
    if method == "etc":
        kw["groups"] = "official"  # the authors' groups (5, 1, 2, 3), (6, 4, 7)
    if method == "ucvs":
        kw["preset"] = "official"  # the released code's rules (exploration from set 2, Exploit_CVS)
    alg = F.cvs(**kw)
    params = alg.default_params()._replace(budget=budget)
    keys = jax.random.split(jax.random.key(2025), 1)  # fig1.run_program's keys
    t0, c0 = time.perf_counter(), time.process_time()
    compiled = F.program(alg, [env], keys, tmax, params, budget)
    tc, tc_cpu = time.perf_counter() - t0, time.process_time() - c0

    def run():
        t0, c0 = time.perf_counter(), time.process_time()
        trace = jax.block_until_ready(compiled(keys, params))
        return time.perf_counter() - t0, time.process_time() - c0, trace

    return run, (tc, tc_cpu), env


def summarize_jbo(trace, env, budget: float) -> dict:
    """Steps, cost, sets played and final simple regret (8192 fresh rows) of a one-seed trace."""
    import jax
    import numpy as np

    from jbo.problems import ucvs as P

    m = trace.metrics
    active = np.asarray(m["active"][0, 0]) & ~np.asarray(m["initial"][0, 0])
    sets = np.asarray(trace.actions.set[0, 0])[active]
    xs = np.asarray(trace.actions.x[0, 0])[active]
    f_eval = np.asarray(P.expected_values(env, sets, xs, jax.random.key(7), 8192))
    spent = float(np.asarray(m["cost"][0, 0])[active].sum())
    return dict(
        steps=int(active.sum()),
        spent=spent,
        final_simple_regret=float(env.f_plus) - float(f_eval.max()),
        played=sets.tolist(),
        set_counts=np.bincount(sets, minlength=7).tolist(),
        budget_spent=bool(spent >= budget),
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


def spread_text(values) -> dict:
    """Mean, standard deviation (n - 1), range, and the mean printed to the precision the spread supports
    (rounded at the standard deviation's leading digit; two significant digits when the spread is 0)."""
    import math

    import numpy as np

    v = np.asarray(values, float)
    mean = float(v.mean())
    sd = float(v.std(ddof=1)) if len(v) > 1 else float("nan")
    ref = sd if np.isfinite(sd) and sd > 0 else abs(mean) / 10
    digits = -int(math.floor(math.log10(ref))) if ref > 0 else 0
    fmt = (lambda x: f"{round(x, digits):.{max(digits, 0)}f}") if digits > 0 else (lambda x: f"{round(x, digits):.0f}")
    text = f"{fmt(mean)} ± {fmt(sd)}" if len(v) > 1 else fmt(mean)
    return dict(n=len(v), mean=mean, sd=sd if len(v) > 1 else None, min=float(v.min()), max=float(v.max()), text=text)


LABELS = ("jbo, released sizes", "jbo, released sizes, L-BFGS", "jbo, grid sizes")


def markdown(out: dict) -> str:
    """The comparison as a Markdown table (what the docs page includes): per method, the authors' run CPU
    seconds and jbo's per kind of run, each as mean ± standard deviation over the repeats, the ratio to the
    authors' code likewise (CPU seconds; wall seconds after it), jbo's compile CPU seconds and the ratio with
    compile, the steps and the 1-minute load average."""
    runs, rat = out["runs"], out["ratios"]
    head = "| method (budget C; steps) | repeats | 1-min load | the authors' code | " + " | ".join(LABELS) + " |"
    lines = [head, "|---|---:|---|---:|" + "---:|" * len(LABELS)]
    for name, budget in out["budgets"].items():
        mine = [e for e in runs if e["method"] == name]
        auth = [e for e in mine if e["code"] == "authors" and e.get("run_s")]
        if not auth:
            continue
        loads = [e["load_before"][0] for e in mine if e.get("kind") == "run"]
        steps = sorted({e["steps"] for e in mine if e.get("kind") == "run" and "steps" in e})
        cap = out["step_caps"].get(name)
        what = f"{name} (C = {budget:g}{f', stopped at {cap} steps' if cap else ''}; {'/'.join(map(str, steps))} steps)"
        run_cells, comp_cells = [], []
        for label in LABELS:
            jr = [e["run_cpu_s"] for e in mine if e["code"] == label and e.get("kind") == "run"]
            comp = [e["compile_cpu_s"] for e in mine if e["code"] == label and e.get("kind") == "compile"]
            ratio = rat.get(f"{name}: authors / {label}, run CPU s")
            if not jr or ratio is None:
                run_cells.append("—")
                comp_cells.append("—")
                continue
            wall = rat[f"{name}: authors / {label}, run s"]["text"]
            run_cells.append(f"{spread_text(jr)['text']} s ({ratio['text']}×; wall {wall}×)")
            with_c = rat[f"{name}: authors / {label}, compile + run CPU s"]["text"]
            comp_cells.append(f"{comp[0]:.0f} s ({with_c}×)")
        t = spread_text([e["run_cpu_s"] for e in auth])["text"]
        lines.append(
            f"| {what} | {len(auth)} | {min(loads):.1f}–{max(loads):.1f} | {t} s | " + " | ".join(run_cells) + " |"
        )
        lines.append(f"| {name}: jbo's compile (once), ratio with it | | | | " + " | ".join(comp_cells) + " |")
    return "\n".join(lines) + "\n"


def ratios(runs: list, name: str, labels) -> dict:
    """The authors' run time over jbo's, repeat by repeat, for wall and CPU seconds (mean, standard
    deviation and range over the repeats), also with jbo's compile time added."""
    out = {}
    auth = [e for e in runs if e["method"] == name and e["code"] == "authors" and e.get("run_s")]
    if not auth:
        return out
    for unit, key, comp_key in (("s", "run_s", "compile_s"), ("CPU s", "run_cpu_s", "compile_cpu_s")):
        for label in labels:
            mine = {e["repeat"]: e for e in runs if e["method"] == name and e["code"] == label and e["kind"] == "run"}
            pairs = [(e[key], mine[e["repeat"]][key]) for e in auth if e["repeat"] in mine]
            comp = next(
                e[comp_key] for e in runs if e["method"] == name and e["code"] == label and e["kind"] == "compile"
            )
            out[f"{name}: authors / {label}, run {unit}"] = spread_text([x / y for x, y in pairs])
            out[f"{name}: authors / {label}, compile + run {unit}"] = spread_text([x / (y + comp) for x, y in pairs])
        out[f"{name}: authors, run {unit}"] = spread_text([e[key] for e in auth])
    return out


def parse_overrides(items, cast):
    out = {}
    for item in items or []:
        name, value = item.rsplit("=", 1)
        out[name] = cast(value)
    return out


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument(
        "--authors",
        type=Path,
        default=os.environ.get("BO_UCVS_PATH") or None,
        help="a local copy of Fsoft-AIC/BO-uCVS (not part of jbo); default: $BO_UCVS_PATH; 'none': jbo's runs only",
    )
    ap.add_argument(
        "--pin",
        type=int,
        default=None,
        metavar="CPU",
        help="run on this one CPU with one thread and a cold compile (OMP_NUM_THREADS=1, JBO_CACHE=0), the "
        "authors' child too",
    )
    ap.add_argument("--methods", nargs="*", default=list(METHODS))
    ap.add_argument("--repeats", type=int, default=3, help="alternations per baseline (authors', jbo, ...)")
    ap.add_argument("--ucvs-repeats", type=int, default=1)
    ap.add_argument("--budget", nargs="*", default=None, help="NAME=C overrides of METHODS' reduced budgets")
    ap.add_argument("--steps", nargs="*", default=None, help="NAME=K overrides of METHODS' step caps (0: none)")
    ap.add_argument("--opt-steps", type=int, default=29, help="jbo's Adam steps per start at the released sizes")
    ap.add_argument("--lbfgs-steps", type=int, default=16, help="jbo's L-BFGS iterations per start (0: no run)")
    ap.add_argument("--tmax", type=int, default=40, help="jbo's scan length for an uncapped run (incl. 5 initial)")
    ap.add_argument("--max-load", type=float, default=0.8)
    ap.add_argument("--wait-until", default="00:55", help="UTC HH:MM: start then whatever the load")
    ap.add_argument(
        "--out",
        type=Path,
        default=None,
        help="the JSON (default: equal_work.json); a bare file name goes into the output folder",
    )
    ap.add_argument("--table-only", action="store_true", help="only write equal_work.md from the JSON")
    add_update_flag(ap)
    a = ap.parse_args()
    if a.authors is not None and str(a.authors) == "none":
        a.authors = None
    if a.pin is not None:  # before jax, torch and jbo are imported (here and in the authors' child)
        os.sched_setaffinity(0, {a.pin})
        os.environ.update(OMP_NUM_THREADS="1", JBO_CACHE="0")
    out_dir = output_dir("ucvs", "equal_work")
    if a.out is None or a.out.parent == Path("."):
        a.out = out_dir / (a.out or Path("equal_work.json")).name
    a.out = a.out.resolve()  # the authors' child runs in their folder
    if a.table_only:
        a.out.with_suffix(".md").write_text(markdown(json.loads(a.out.read_text())))
        return
    budgets = {n: m["budget"] for n, m in METHODS.items()} | parse_overrides(a.budget, float)
    caps = {n: m["steps"] for n, m in METHODS.items()} | parse_overrides(a.steps, int)

    import fig1 as F

    from jbo import studies

    sys.stdout.reconfigure(line_buffering=True)
    out = dict(
        machine=studies.machine_info(),
        jbo_cache=os.environ.get("JBO_CACHE", "(unset: on)"),
        omp_num_threads=os.environ.get("OMP_NUM_THREADS", "(unset)"),
        cpu_affinity=sorted(os.sched_getaffinity(0)),
        problem="hartmann12 (authors: Hartmann6, dims 12), cheap costs, unknown (std 0.01 on every set), "
        "v = 0.02, 5 free initial points, no observation noise; reduced budgets (the paper: C = 100)",
        budgets={n: budgets[n] for n in a.methods},
        step_caps={n: caps[n] for n in a.methods},
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
    out["ratios"] = {}
    released = {
        "ucb_psq": dict(num_mc=1500, num_raw=2000, num_starts=2, opt_steps=a.opt_steps),
        "etc": dict(num_mc=1500, num_raw=100, num_starts=2, opt_steps=a.opt_steps),
        "ucvs": dict(num_mc=1500, num_raw=100, num_starts=2, opt_steps=a.opt_steps),
    }

    def write():
        out["loadavg_at_end"] = os.getloadavg()
        out["ended_utc"] = dt.datetime.now(dt.timezone.utc).isoformat(timespec="seconds")
        a.out.write_text(json.dumps(out, indent=1))

    def record(entry):
        entry["load_after"] = os.getloadavg()
        runs.append(entry)
        print(json.dumps(entry), flush=True)
        write()

    for name in a.methods:
        jm, am, budget, cap = METHODS[name]["jbo"], METHODS[name]["authors"], budgets[name], caps[name]
        tmax = 5 + cap if cap else a.tmax
        plan = [("jbo, released sizes", dict(released[jm]))]
        if a.lbfgs_steps:
            plan.append(
                ("jbo, released sizes, L-BFGS", dict(released[jm], opt_steps=a.lbfgs_steps, opt_method="lbfgs"))
            )
        plan.append(("jbo, grid sizes", dict(F.GRID_ACQ)))
        programs = {}
        for label, sizes in plan:  # compile first, apart from the timed runs
            load = os.getloadavg()
            run, (tc, tc_cpu), env = compile_jbo(jm, sizes, tmax, budget)
            programs[label] = (run, env)
            sizes = dict({"opt_method": "adam", **sizes}, tmax=tmax)
            record(
                dict(code=label, method=name, kind="compile", sizes=sizes, load_before=load, compile_s=tc,
                     compile_cpu_s=tc_cpu)
            )  # fmt: skip
        repeats = a.ucvs_repeats if jm == "ucvs" else a.repeats
        for r in range(repeats):
            if a.authors:
                load = os.getloadavg()
                log = a.out.with_name(f"{a.out.stem}_authors_{am}_{r}.log")
                res = run_authors(a.authors.resolve(), am, budget, cap, log)
                record(dict(code="authors", method=name, kind="run", repeat=r, acq_name=am, sizes=AUTHORS_SIZES,
                            budget=budget, step_cap=cap, load_before=load, **res))  # fmt: skip
            for label, _ in plan:
                run, env = programs[label]
                load = os.getloadavg()
                secs, cpu, trace = run()
                entry = dict(code=label, method=name, kind="run", repeat=r, budget=budget, step_cap=cap)
                entry.update(load_before=load, run_s=secs, run_cpu_s=cpu)
                if r == 0:  # the same program and inputs every repeat: one summary
                    entry.update(summarize_jbo(trace, env, budget))
                record(entry)
        out["ratios"].update(ratios(runs, name, [label for label, _ in plan]))
        write()
    a.out.with_suffix(".md").write_text(markdown(out))
    print(json.dumps(out["ratios"], indent=1))


if __name__ == "__main__":
    if len(sys.argv) > 1 and sys.argv[1] == "--child":
        p, acq, seed, budget, steps, dest = sys.argv[2:8]
        authors_child(p, acq, int(seed), float(budget), int(steps), dest)
    else:
        main()
