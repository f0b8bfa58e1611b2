"""q-batch BO against sequential BO on hartmann6: does a batch of q = 4 points per round reach the
sequential method's final regret in a quarter of the rounds?

Every method is jbo's default GP-UCB (registry defaults) with 10 LHS initial points and 100 BO
evaluations, on 16 seeds that share their initial designs (common random numbers):

* sequential: one point per round, 100 rounds;
* scan q=4 (kb / cl_min): GPBO(batching=Lies(size=4, lie=...)) inside the compiled run, 25 rounds of 4 points chosen
  with the round's earlier points carrying a kriging-believer or constant-liar value;
* scan q=4 q-UCB: GPBO(batching=JointMC(size=4)), the 4 points of a round chosen jointly by
  Monte-Carlo q-UCB (128 samples; the 4 d = 24 coordinates optimised together);
* scan q=4 q-UCB: GPBO(batching=JointMC(size=4)), the 4 points of a round chosen jointly by
  Monte-Carlo q-UCB (128 samples; the 4 d = 24 coordinates optimised together);
* asktell q=4 (kb / cl_min): the host loop, AskTell.ask_batch(4) per round (the pending points carry
  the kriging believer's or the constant liar's value), all four told after the round, 25 rounds.

Two readings of "within one standard error": the batch method's mean final log10 simple regret is at
most one s.e. of the sequential mean above it (unpaired), and the stricter paired one, at most one
s.e. of the per-seed difference above it (the seeds share designs, so the difference is less noisy).
Writes q_batch.json (experiments/results/engine/batch/ with --update, else its scratch mirror).

    python experiments/engine/batch/q_batch.py
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

import jax
import jax.numpy as jnp
import numpy as np

import jbo
from jbo.studies import machine_info

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))  # experiments/: outdir
from flat_settings import ADAM_SEARCH, gp_options  # noqa: E402
from outdir import add_update_flag, output_dir  # noqa: E402

OUT = output_dir("engine", "batch") / "q_batch.json"
SEEDS, N0, EVALS, Q = 16, 10, 100, 4
# refit_all=128 (the sequential runs refit every step while t < 128): the setting the committed results
# were computed with; jbo's default refits every step only while t < 64 (jbo.algorithms.gp_bo.REFIT_ALL)


def final_log_regret(trace):
    return np.log10(np.maximum(np.asarray(trace.metrics["simple_regret"])[:, -1], 1e-12))


def asktell_final(alg, prob, keys):
    """AskTell with ask_batch(Q) per round after the design; returns log10 final simple regrets."""
    f = lambda x: float(prob.objective(jnp.asarray(x)))  # noqa: E731
    out = []
    for k in keys:
        opt = jbo.AskTell(alg, prob.bounds, num_steps=N0 + EVALS, key=k)
        opt.optimize(f, num_evaluations=N0)
        while opt.t < N0 + EVALS:
            xs = opt.ask_batch(Q)
            for x in xs:
                opt.tell(x, f(x))
        out.append(np.log10(max(prob.optimal_value - opt.best()[1], 1e-12)))
    return np.asarray(out)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    add_update_flag(ap).parse_args()
    prob = jbo.problems.get("hartmann6")
    keys = jax.random.split(jax.random.key(2024), SEEDS)
    rows, finals = [], {}
    runs = {
        "sequential": jbo.algorithms.get("gp_ucb", **gp_options(**ADAM_SEARCH, num_initial=N0, refit_all=128)),
        "scan q=4 kb": jbo.algorithms.get(
            "gp_ucb", **gp_options(**ADAM_SEARCH, num_initial=N0, batch_size=Q, batch_lie="kb")
        ),
        "scan q=4 cl_min": jbo.algorithms.get(
            "gp_ucb", **gp_options(**ADAM_SEARCH, num_initial=N0, batch_size=Q, batch_lie="cl_min")
        ),
        "scan q=4 q-UCB": jbo.algorithms.get(
            "gp_ucb", **gp_options(**ADAM_SEARCH, num_initial=N0, batch_size=Q, batch_mode="mc")
        ),
    }
    for name, alg in runs.items():
        t0 = time.perf_counter()
        tr = jbo.run_seeds(alg, prob, key=jax.random.key(2024), num_steps=N0 + EVALS, num_seeds=SEEDS)
        finals[name] = final_log_regret(tr)
        rows.append(
            {
                "method": name,
                "rounds": EVALS if name == "sequential" else EVALS // Q,
                "seconds": time.perf_counter() - t0,
            }
        )
    for lie in ("kb", "cl_min"):
        t0 = time.perf_counter()
        alg = jbo.algorithms.get("gp_ucb", **gp_options(**ADAM_SEARCH, num_initial=N0, batch_lie=lie, refit_all=128))
        finals[f"asktell q=4 {lie}"] = asktell_final(alg, prob, keys)
        rows.append({"method": f"asktell q=4 {lie}", "rounds": EVALS // Q, "seconds": time.perf_counter() - t0})
    seq = finals["sequential"]
    for row in rows:
        v = finals[row["method"]]
        diff = v - seq
        se = float(np.std(diff, ddof=1) / np.sqrt(SEEDS)) if row["method"] != "sequential" else 0.0
        seq_se = float(seq.std(ddof=1) / np.sqrt(SEEDS))
        batch = row["method"] != "sequential"
        row.update(
            mean_log10_final=float(v.mean()),
            se_log10_final=float(v.std(ddof=1) / np.sqrt(SEEDS)),
            median_final_regret=float(np.median(10**v)),
            paired_diff=float(diff.mean()),
            paired_se=se,
            within_one_se=bool(diff.mean() <= seq_se) if batch else None,
            within_one_paired_se=bool(diff.mean() <= se) if batch else None,
            log10_final=v.tolist(),
        )
        print(json.dumps({k: row[k] for k in row if k != "log10_final"}))
    OUT.parent.mkdir(parents=True, exist_ok=True)
    OUT.write_text(
        json.dumps(
            {
                "command": "python experiments/engine/batch/q_batch.py",
                "machine": machine_info(),
                "problem": "hartmann6",
                "seeds": SEEDS,
                "num_initial": N0,
                "evaluations": EVALS,
                "q": Q,
                "rule": "mean log10 final simple regret <= sequential's + one s.e. (of the "
                "sequential mean: within_one_se; of the paired difference: within_one_paired_se)",
                "rows": rows,
            },
            indent=1,
        )
        + "\n"
    )


if __name__ == "__main__":
    main()
