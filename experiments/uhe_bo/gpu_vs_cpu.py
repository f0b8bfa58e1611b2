"""Fig 2 top's Hartmann3 programs run on one GPU against the same programs on this machine's CPU.

    python experiments/uhe_bo/gpu_vs_cpu.py [--quick] [--update]

Reads the GPU runs fig2_h100*_hartmann3.csv from the folder it writes to (experiments/results/uhe_bo/gpu_vs_cpu/
with --update, else its scratch mirror), written there on the GPU by the earlier steps of the figure
`gpu_vs_cpu` (experiments/uhe_bo/figures.py: `synthetic.py --figure fig2 --problems hartmann3 --tag _h100
--folder gpu_vs_cpu`, and `--methods mcmc --tag _h100_mcmc`), and the CPU runs fig2_hartmann3.csv /
fig2_mcmc_hartmann3.csv of the figure fig2 (its output folder where a run wrote them there, else the
committed ones); writes gpu_vs_cpu.csv: per method the mean log10 final simple regret on each platform and
the seeds whose final regret agrees to a relative 1e-6 (the same keys and programs; XLA:GPU and XLA:CPU
round differently, and a trajectory that once picks another point goes its own way). --quick compares the
smoke runs' GPU files (*_quick) with the committed CPU runs on the same seeds and writes gpu_vs_cpu_quick.csv.
"""

from __future__ import annotations

import argparse

import common
import numpy as np
import pandas as pd

FOLDER = "gpu_vs_cpu"


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--quick", action="store_true", help="the smoke runs' GPU files (*_quick)")
    a = common.add_update_flag(ap).parse_args()
    # the figure reader every UHE script uses (last write kept)
    gpu = common.read_figure("fig2", ["hartmann3"], ["_h100", "_h100_mcmc"], a.quick, FOLDER)
    cpu = common.read_figure("fig2", ["hartmann3"], common.with_mcmc(""), joined=True)
    if gpu is None or cpu is None:
        raise common.missing(common.out_dir(FOLDER), "fig2_h100*_hartmann3.csv (and fig2's fig2*_hartmann3.csv)")
    rows = []
    for m in dict.fromkeys(gpu.method):
        g = gpu[gpu.method == m].groupby("seed").simple_regret.last()
        c = cpu[cpu.method == m].groupby("seed").simple_regret.last().reindex(g.index)
        if c.isna().any():
            raise ValueError(f"{m}: the CPU runs lack seeds {list(g.index[c.isna()])} of the GPU runs")
        rows.append(
            dict(
                method=m,
                seeds=len(g),
                gpu_log10_mean=np.log10(g).mean(),
                cpu_log10_mean=np.log10(c).mean(),
                seeds_agreeing=int(np.isclose(g, c, rtol=1e-6, atol=0).sum()),
            )
        )
    df = pd.DataFrame(rows)
    df.to_csv(common.out_path(FOLDER, "gpu_vs_cpu", a.quick, "csv"), index=False, float_format="%.4f")
    print(df.to_string(index=False))


if __name__ == "__main__":
    main()
