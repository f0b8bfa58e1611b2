"""What Adam's eps in jbo.optimize.local_search (jbo's 0 against optax's default 1e-8) changes at an
ordinary scale: GP-UCB / EI / TS / mean and BOKE on Branin (4 seeds x 12 steps, small inner optimiser),
run once with jbo as it is and once with optax's default eps = 1e-8 patched in (a separate process each, so
no compiled program is shared). Writes the largest action change per step and the final regrets.

    python experiments/engine/scale/adam_eps_branin.py [--update]  ->  adam_eps_branin.json (experiments/results/engine/scale/)
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import types
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))  # experiments/: outdir
from outdir import add_update_flag, output_dir  # noqa: E402


def one(path: str, old: bool):
    os.environ["JBO_CACHE"] = "0"
    import jax
    import numpy as np
    import optax

    import jbo

    if old:  # optax's default eps = 1e-8 instead of jbo's 0
        proxy = types.SimpleNamespace(**{k: getattr(optax, k) for k in dir(optax) if not k.startswith("__")})
        proxy.adam = lambda lr, eps=1e-8: optax.adam(lr)
        jbo.optimize.optax = proxy
    prob = jbo.problems.get("branin")
    small = dict(
        num_initial=3,
        hypers=jbo.parts.Refit(steps=3),
        maximiser=jbo.parts.Maximiser(num_raw=64, num_starts=4, steps=10),
    )
    algs = {n: jbo.algorithms.get(n, **small) for n in ("gp_ucb", "gp_ei", "gp_ts", "gp_mean")}
    algs["boke"] = jbo.algorithms.get(
        "boke",
        num_initial=3,
        maximiser=jbo.parts.Maximiser(num_raw_per_dim=64, num_starts=4, steps=10, screen_data=True),
    )
    out = {}
    for n, a in algs.items():
        tr = jbo.run_seeds(a, prob, key=jax.random.key(1), num_steps=12, num_seeds=4)
        out[n] = np.asarray(tr.actions)
        out[n + "_regret"] = np.asarray(tr.metrics["simple_regret"][:, -1])
    np.savez(path, **out)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    add_update_flag(ap).parse_args()
    out = output_dir("engine", "scale") / "adam_eps_branin.json"
    import numpy as np

    from jbo.studies import code_version, machine_info

    with tempfile.TemporaryDirectory() as d:
        for tag in ("old", "new"):
            subprocess.run([sys.executable, __file__, f"{d}/{tag}.npz", tag], check=True)
        o, n = np.load(f"{d}/old.npz"), np.load(f"{d}/new.npz")
        rows = {
            k: dict(
                max_abs_action_change_per_step=np.abs(o[k] - n[k]).max(axis=(0, 2)).tolist(),
                final_simple_regret_old_eps=o[k + "_regret"].tolist(),
                final_simple_regret_eps_0=n[k + "_regret"].tolist(),
            )
            for k in o.files
            if not k.endswith("_regret")
        }
    out.write_text(
        json.dumps(
            dict(
                what=__doc__.split("\n\n")[0],
                machine=machine_info(),
                code_version=code_version(),
                load=list(os.getloadavg()),
                methods=rows,
            ),
            indent=1,
        )
        + "\n"
    )
    print(json.dumps({k: max(v["max_abs_action_change_per_step"]) for k, v in rows.items()}))


if __name__ == "__main__":
    if len(sys.argv) == 3:
        one(sys.argv[1], sys.argv[2] == "old")
    else:
        main()
