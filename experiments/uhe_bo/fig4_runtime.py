"""Fig 4's running-time panel: seconds per BO evaluation of UHE-BO, MAP and MCMC on Deceptive (n = 2),
Hartmann3 and the boosting replacement, one seed each at T = 100, from the measurements in the folder it
writes to (experiments/results/uhe_bo/fig4_runtime/ with --update, else its scratch mirror), which the
earlier steps of the figure `fig4_runtime` (experiments/uhe_bo/figures.py) write:

* Hartmann3: `timing.json` (`python experiments/uhe_bo/timing.py`; the run's seconds / 100 evaluations);
* Deceptive: `timing_deceptive2.json` (`python experiments/uhe_bo/timing.py --problems deceptive2
  --no-components --tag _deceptive2`);
* boosting (`gb`, evaluated on the host through jbo.AskTell): `fig2_realworld_timing_s1.log`
  (`python experiments/uhe_bo/realworld.py --problems gb --methods uhe_bo,map,mcmc --seeds 1 --tag _timing_s1
  --folder fig4_runtime`):
  the algorithm's ask + tell seconds over the 111 steps after the first BO step (which compiles; the 11
  initial-design steps cost milliseconds), divided by the 99 BO evaluations, and the objective's seconds
  (100 boosting fits and the 12 of the initial design) apart.

Compile time is not in these numbers. Writes fig4_runtime.csv and fig4_runtime.png (with --quick: reads
and writes the *_quick files of the smoke runs).

    python experiments/uhe_bo/fig4_runtime.py [--quick] [--update]
"""

from __future__ import annotations

import argparse
import json

import common
import pandas as pd

METHODS = ("uhe_bo", "map", "mcmc")
FOLDER = "fig4_runtime"


def rows(quick: bool = False):
    path = {n: common.out_path(FOLDER, n, quick, e) for n, e in (("timing_deceptive2", "json"), ("timing", "json"))}
    log = common.out_path(FOLDER, "fig2_realworld_timing_s1", quick, "log")
    common.require(*path.values(), log)
    out = []
    for problem, name in (("deceptive2", "timing_deceptive2"), ("hartmann3", "timing")):
        d = json.loads(path[name].read_text())
        for r in d["runs"]:
            if r["problem"] == problem and r["method"] in METHODS:
                out.append(
                    dict(
                        problem=problem,
                        method=r["method"],
                        s_per_bo_evaluation=r["s_per_bo_step"],
                        compile_s=r["compile_s"],
                        objective_s=None,
                        source=path[name].name,
                    )
                )
    for line in log.read_text().splitlines():
        if not line.startswith("{"):
            continue
        r = json.loads(line)
        if r.get("problem") == "gb" and r["method"] in METHODS and r["seeds"] == 1:
            bo = r["steps"] - 3 * common.problem("gb").dim  # n0 = 3d (D1)
            out.append(
                dict(
                    problem="gb",
                    method=r["method"],
                    s_per_bo_evaluation=r["algorithm_s"] / (bo - 1),
                    compile_s=r["first_bo_step_s"],
                    objective_s=r["evaluation_s"],
                    source=log.name,
                )
            )
    df = pd.DataFrame(out).drop_duplicates(["problem", "method"], keep="last")
    base = df[df.method == "map"].set_index("problem").s_per_bo_evaluation
    df["over_map"] = df.s_per_bo_evaluation / df.problem.map(base)
    return df


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--quick", action="store_true", help="the smoke runs' *_quick files")
    a = common.add_update_flag(ap).parse_args()
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    import numpy as np

    df = rows(a.quick)
    df.to_csv(common.out_path(FOLDER, "fig4_runtime", a.quick, "csv"), index=False)
    print(df.to_string(index=False))
    problems = ["deceptive2", "hartmann3", "gb"]
    fig, ax = plt.subplots(figsize=(6.5, 3.6))
    w = 0.27
    for i, m in enumerate(METHODS):
        cell = [df[(df.problem == p) & (df.method == m)].s_per_bo_evaluation for p in problems]
        v = [c.iloc[0] if len(c) else np.nan for c in cell]  # a smoke run may time only some methods
        ax.bar(np.arange(3) + (i - 1) * w, v, w, label=common.LABELS[m])
    ax.set_yscale("log")
    ax.set_xticks(range(3), ["Deceptive (n = 2)", "Hartmann3", "boosting (replacement)"])
    ax.set_ylabel("seconds per BO evaluation")
    ax.set_title("UHE-BO Fig 4 (right): running time, one seed, T = 100, compile apart", fontsize=9)
    ax.legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(common.out_path(FOLDER, "fig4_runtime", a.quick, "png"), dpi=130)


if __name__ == "__main__":
    main()
