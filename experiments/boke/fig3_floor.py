"""Why GP-variance exploration stops filling the line in BOKE Fig 3 (d = 1): with the paper's fixed
SE lengthscale 0.5 sqrt(d/6) = 0.204 and the model's noise-variance floor of 1e-6, the posterior
variance between evenly spaced design points falls to the noise floor once the spacing is about
0.05, i.e. a fill distance of about 0.027. From there on sigma_t(x) differs across the line by less
than a factor of two of the floor, wherever the gaps are, so argmax sigma_t no longer targets the
largest gap and the fill distance stops falling (Fig 3 measures 0.027 at t = 200 for GP-variance
exploration against 0.005 for LHS).

Closed-form posterior variance (NumPy, float64) of n evenly spaced points on [0, 1], on a grid of
4001 points. Writes fig3_floor.csv (experiments/results/boke/fig3_floor/ with --update, else its scratch
mirror).

    jbo reproduce boke fig3_floor
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import numpy as np
import pandas as pd

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # experiments/: outdir
from outdir import add_update_flag, output_dir  # noqa: E402

OUT = output_dir("boke", "fig3_floor") / "fig3_floor.csv"
LENGTHSCALE = 0.5 * np.sqrt(1 / 6)  # the paper's fixed lengthscale at d = 1
NOISE = 1e-6  # the GP model's noise-variance floor (noise-free runs)


def posterior_variance(x: np.ndarray, grid: np.ndarray) -> np.ndarray:
    k = lambda a, b: np.exp(-0.5 * (a[:, None] - b[None, :]) ** 2 / LENGTHSCALE**2)  # noqa: E731
    chol = np.linalg.cholesky(k(x, x) + NOISE * np.eye(x.size))
    v = np.linalg.solve(chol, k(grid, x).T)
    return 1.0 - np.sum(v**2, axis=0)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    add_update_flag(ap).parse_args()
    grid = np.linspace(0, 1, 4001)
    rows = []
    for n in (5, 8, 10, 12, 15, 20, 25, 30, 40, 60, 100, 200):
        x = np.linspace(0, 1, n)
        var = posterior_variance(x, grid)
        rows.append(
            {
                "points": n,
                "fill_distance": 0.5 / (n - 1),
                "max_variance": var.max(),
                "min_variance": var.min(),
                "max_over_noise": var.max() / NOISE,
            }
        )
    table = pd.DataFrame(rows)
    table.to_csv(OUT, index=False)
    print(table.to_string(index=False, float_format=lambda v: f"{v:.3g}"))


if __name__ == "__main__":
    main()
