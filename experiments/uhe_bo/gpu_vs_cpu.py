"""Fig 2 top's Hartmann3 programs run on one GPU against the same programs on this machine's CPU.

    python experiments/uhe_bo/gpu_vs_cpu.py --update

Reads (from the folder it writes to: experiments/results/uhe/ with --update, else its scratch mirror)
h100/fig2_h100*_hartmann3.csv (written on the lent H100 by
`synthetic.py --figure fig2 --problems hartmann3 --tag _h100` and `--methods mcmc --tag _h100_mcmc`,
which write into the output folder; the GPU's files were moved into h100/ with timing_h100.json)
and the CPU runs fig2_hartmann3.csv / fig2_mcmc_hartmann3.csv; writes h100/gpu_vs_cpu.csv: per
method the mean log10 final simple regret on each platform and the seeds whose final regret agrees
to a relative 1e-6 (the same keys and programs; XLA:GPU and XLA:CPU round differently, and a
trajectory that once picks another point goes its own way).
"""

from __future__ import annotations

import argparse

import common
import numpy as np
import pandas as pd


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    common.add_update_flag(ap).parse_args()
    out = common.OUT / "h100"
    # the figure reader every UHE script uses (last write kept); the GPU's files live in h100/
    gpu = common.read_figure("h100/fig2", ["hartmann3"], ["_h100", "_h100_mcmc"])
    cpu = common.read_figure("fig2", ["hartmann3"], common.with_mcmc(""))
    if gpu is None or cpu is None:
        raise common.missing(common.OUT, "h100/fig2_h100*_hartmann3.csv and fig2*_hartmann3.csv")
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
    df.to_csv(out / "gpu_vs_cpu.csv", index=False, float_format="%.4f")
    print(df.to_string(index=False))


if __name__ == "__main__":
    main()
