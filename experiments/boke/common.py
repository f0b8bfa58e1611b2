"""Shared set-up of the BOKE experiments: methods with the spec's defaults, params, output folders.

The figures these scripts make are declared in experiments/boke/figures.py and run by
`jbo reproduce boke <figure>`. Each script writes PNG + CSV into its figure's folder,
experiments/results/boke/<figure>/ with --update, else its scratch mirror (experiments/outdir.py;
quick runs write *_quick files).
"""

from __future__ import annotations

import sys
from pathlib import Path

import jbo
from jbo.algorithms import boke
from jbo.studies import machine_info

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # experiments/: outdir
from flat_settings import gp_options  # noqa: E402, F401 (for the scripts)
from outdir import add_update_flag, committed_dir, output_dir  # noqa: E402, F401 (for the scripts)

METHODS = ("BOKE", "BOKE+", "KR-UCB", "GP-UCB")
# Ours, not the paper's: with alpha = 0.5 and n0 = 5d, KR-UCB cannot widen before t = n0^2 (> T for
# d >= 3), so it only re-samples the design. This variant (alpha = 0.8) widens after t = n0^1.25.
KRUCB_08 = "KR-UCB a=0.8"


def methods(num_initial: int, names=METHODS) -> dict:
    """The paper's four methods with our defaults (spec 7), sharing one initial-design size."""
    make = {
        "BOKE": lambda: boke.BOKE(num_initial=num_initial),
        "BOKE+": lambda: boke.BOKE(num_initial=num_initial, plus=True),
        "KR-UCB": lambda: boke.KRUCB(num_initial=num_initial),
        KRUCB_08: lambda: boke.KRUCB(num_initial=num_initial),
        "GP-UCB": lambda: boke.PaperGP(num_initial=num_initial),
        "Random": lambda: jbo.algorithms.RandomSearch(num_initial=num_initial),
    }
    return {n: make[n]() for n in names}


def params_for(method: str, varsigma: float, noise_std: float):
    """varsigma enters beta_t (BOKE, BOKE+) and C = sqrt(2) varsigma (KR-UCB); the GP gets sigma_eps."""
    if method == "GP-UCB":
        return jbo.replace_params(boke.PaperGP().default_params(), noise_std=noise_std)
    if method == "Random":
        return None
    if method == KRUCB_08:
        return boke.KRUCBParams(varsigma=varsigma, alpha=0.8)
    if method == "KR-UCB":
        return boke.KRUCBParams(varsigma=varsigma)
    return boke.BOKEPlusParams(varsigma=varsigma) if method == "BOKE+" else boke.BOKEParams(varsigma=varsigma)


def out_dir(figure: str) -> Path:
    """The folder of one figure (its name in experiments/boke/figures.py): experiments/results/boke/<figure>/
    with --update, else its scratch mirror; created."""
    return output_dir("boke", figure)


def out_path(figure: str, name: str, quick: bool, ext: str) -> Path:
    return out_dir(figure) / f"{name}{'_quick' if quick else ''}.{ext}"


def header(what: str) -> None:
    print(f"{what}\nmachine: {machine_info()}", file=sys.stderr, flush=True)
