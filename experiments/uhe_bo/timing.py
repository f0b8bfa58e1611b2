"""Fig 4 right / the running-time target: seconds per BO step of UHE-BO, MAP and MCMC, side by side
in one process, on Hartmann3 (T = 100 BO evaluations after n0 = 9) and Deceptive (n = 2).

    python experiments/uhe_bo/timing.py [--quick] [--problems hartmann3,deceptive2] [--tag _x] [--no-components]
        [--folder gpu_vs_cpu]

One seed per method, each run as one compiled program (`jbo.run`); compile time (lowering +
compilation) is measured apart from the run; the run time covers the algorithm and the (cheap,
in-program) objective. The load average is recorded next to every number: others share the CPU.
Also measures the step's parts apart (`components`: the MAP fit on n points, the pseudo-data fit on
2n, the acquisition) at each bucket size, which is where the UHE-BO / MAP ratio comes from.
Writes timing<tag>.json into experiments/results/uhe_bo/fig4_runtime/ with --update (else its scratch
mirror), or into the figure folder --folder names (gpu_vs_cpu: the run on one GPU).
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time

import common  # first: sets XLA_FLAGS and the BLAS threads before jax
import jax

import jbo


def main(argv=None):
    ap = argparse.ArgumentParser()
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--problems", default="hartmann3")
    ap.add_argument("--methods", default="uhe_bo,map,mcmc")
    ap.add_argument("--budget", type=int, default=None)
    ap.add_argument("--tag", default="", help="suffix of the output name (timing<tag>.json)")
    ap.add_argument("--no-components", action="store_true", help="skip the per-part Hartmann3 timings")
    ap.add_argument("--folder", default="fig4_runtime", help="the figure folder written to")
    common.add_update_flag(ap)
    a = ap.parse_args(argv)
    budget = a.budget or (6 if a.quick else 100)
    common.header(f"UHE timing, T = {budget}")
    out = {
        "machine": jbo.studies.machine_info(),
        "budget": budget,
        "runs": [],
        "env": {v: os.environ.get(v) for v in ("XLA_FLAGS", "OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS")},
    }
    for p in a.problems.split(","):
        prob = common.problem(p)
        for m in a.methods.split(","):
            alg = common.method(m, prob.dim, a.quick)
            T = alg.num_initial + budget
            fn = jax.jit(lambda k: jbo.scan.one_run(alg, prob, key=k, num_steps=T, params=alg.default_params()))
            load0 = os.getloadavg()
            t0 = time.perf_counter()
            c = fn.lower(jax.random.key(0)).compile()
            t1 = time.perf_counter()
            tr = jax.block_until_ready(c(jax.random.key(0)))
            t2 = time.perf_counter()
            r = dict(
                method=m,
                problem=p,
                steps=T,
                bo_steps=budget,
                compile_s=t1 - t0,
                run_s=t2 - t1,
                s_per_bo_step=(t2 - t1) / budget,
                final_simple_regret=float(tr.metrics["simple_regret"][-1]),
                loadavg_before=load0,
                loadavg_after=os.getloadavg(),
            )
            out["runs"].append(r)
            print(json.dumps(r), file=sys.stderr, flush=True)
    if not a.no_components:
        out["components"] = components(a.quick)
    for p in a.problems.split(","):
        per = {r["method"]: r["s_per_bo_step"] for r in out["runs"] if r["problem"] == p}
        if "map" in per:
            out.setdefault("ratios", {})[p] = {f"{m}_over_map": v / per["map"] for m, v in per.items()}
    path = common.out_path(
        a.folder, "timing" + ("" if budget == 100 or a.quick else f"_T{budget}") + a.tag, a.quick, "json"
    )
    path.write_text(json.dumps(out, indent=1))
    print(json.dumps(out.get("ratios"), indent=1), file=sys.stderr)


def components(quick: bool, dim: int = 3, reps: int = 10) -> list[dict]:
    """Where a BO step's time goes (one seed, jitted apart, ms per call): the MAP fit on n real points
    (buffer of `size` rows), the pseudo-data fit on 2n pseudo points (2 * size rows), and the
    acquisition maximisation, at every bucket size a Hartmann3 run at T = 100 uses (quick: 16 and 32, 2 calls). UHE-BO runs the
    pseudo fit on 3/4 of its evaluations (arm 0's random step has none), MAP its fit on all of them."""
    import jax.numpy as jnp

    from jbo import acquisitions, data, gp
    from jbo.algorithms import uhe_bo

    alg = common.method("uhe_bo", dim, quick)
    model, kw = alg.model, alg._fit_kw
    rows = []
    reps = 2 if quick else reps
    for size in (16, 32) if quick else (16, 32, 64, 128):
        n = size - 3
        key = jax.random.key(size)
        x = jax.random.uniform(key, (size, dim))
        buf = data.Buffer(x, jnp.sin(5.0 * x).sum(1), jnp.arange(size) < n, jnp.int32(n))
        warm = uhe_bo.start_params(buf)

        def acq(k, b):
            post = gp.condition(b, warm, model)
            return alg.maximiser.box(lambda z: acquisitions.ucb(post, z, 1.96), k, b.x.shape[1], b)[0]

        row = dict(size=size, n=n)
        for name, f in (
            ("fit_map_ms", lambda k, b: uhe_bo.fit_map(k, b, model, warm, kw)),
            ("fit_pseudo_ms", lambda k, b: uhe_bo.fit_pseudo(k, b, model, warm, kw, 2, 2 * size)),
            ("maximise_ms", acq),
        ):
            f = jax.jit(f)
            jax.block_until_ready(f(key, buf))
            t0 = time.perf_counter()
            for _ in range(reps):
                jax.block_until_ready(f(key, buf))
            row[name] = (time.perf_counter() - t0) / reps * 1e3
        row["pseudo_over_map_fit"] = row["fit_pseudo_ms"] / row["fit_map_ms"]
        print(json.dumps(row), file=sys.stderr, flush=True)
        rows.append(row)
    return rows


if __name__ == "__main__":
    main()
