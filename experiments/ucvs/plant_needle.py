"""How hard is the plant simulator for 100 evaluations? f at 200 000 uniform points of the unit cube:
quantiles, the maximum, and the mean best of 100 uniform points (2000 disjoint groups); the known
maximum is 2.1941. Writes plant_needle.json (experiments/results/ucvs/plant_needle/ with --update, else its
scratch mirror)."""

from __future__ import annotations

import argparse
import json

import fig1
import jax
import numpy as np

from jbo.problems import ucvs as P

fig1.add_update_flag(argparse.ArgumentParser(description=__doc__)).parse_args()
U = jax.random.uniform(jax.random.key(0), (200_000, 5))
v = np.asarray(jax.jit(jax.vmap(P.plant))(U))
out = {
    "points": len(v),
    "max": float(v.max()),
    "quantiles": {str(q): float(np.quantile(v, q)) for q in (0.5, 0.9, 0.99, 0.999)},
    "mean_best_of_100": float(v.reshape(2000, 100).max(1).mean()),
    "known_max": 2.1941161756530816,
}
(fig1.out_dir("plant_needle") / "plant_needle.json").write_text(json.dumps(out, indent=1))
print(out)
