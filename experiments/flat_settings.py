"""The experiments' flat GP settings as jbo's parts.

Result files and command lines here name settings flatly (fit_steps, num_raw, refit_all, bucket,
batch_size, ...), as the scripts that produced them did; :func:`gp_options` turns them into the options
of a GP algorithm (jbo.algorithms.GPBO and the registered GP methods): the hyper-parameter rule, the
inner maximiser, batching, the design, the growth of the buffer and the model.

    jbo.algorithms.get("gp_ucb", **gp_options(num_initial=4, fit_steps=20, num_raw=128, refit_all=128))

`refit` and `maximiser` are the parts the flat settings change (default: GP-BO's, jbo.parts.GP_REFIT and
jbo.parts.GP_MAXIMISER; pass a paper's,
e.g. jbo.algorithms.sbo_kde.PAPER_REFIT, to change its settings only).
"""

from __future__ import annotations

import dataclasses

from jbo import acquisitions, data, gp, parts

FIT = {
    "num_restarts": "restarts",
    "fit_restarts": "restarts",
    "fit_steps": "steps",
    "fit_learning_rate": "learning_rate",
}
FIT.update(fit_method="method")
MAXIMISER = {"num_raw": "num_raw", "num_raw_per_dim": "num_raw_per_dim", "num_starts": "num_starts"}
MAXIMISER.update(opt_steps="steps", opt_method="method", screen_data="screen_data")
MAXIMISER.update(far_capacity="far_capacity", far_num_raw="far_num_raw", screen_block="screen_block")
MAXIMISER.update(line_search="line_search")
# Flat maximiser settings replace fields of GP-BO's default search (jbo.parts.GP_MAXIMISER: 256 raw points,
# 5 L-BFGS starts, quadratic backtracking), flat refit settings fields of its default rule (jbo.parts.GP_REFIT:
# refits at growth 1 + 1/16). WIDE_SEARCH: the classes' 512 raw points, 10 starts, halving line search and
# refits at growth 1 + 1/32, with GP-BO's L-BFGS search; ADAM_SEARCH: the classes' search and schedule
# throughout (jbo.parts.Maximiser(): 30 projected Adam steps per start; jbo.parts.Refit()). The engine
# experiments whose committed results were measured with those settings pass them.
WIDE_SEARCH = {
    "num_raw": parts.Maximiser().num_raw,
    "num_starts": parts.Maximiser().num_starts,
    "line_search": parts.Maximiser().line_search,
    "refit_growth": parts.Refit().schedule.growth,
}
ADAM_SEARCH = {"opt_method": parts.Maximiser().method, "opt_steps": parts.Maximiser().steps, **WIDE_SEARCH}


def gp_options(refit: parts.Refit | None = None, maximiser: parts.Maximiser | None = None, **flat) -> dict:
    """GPBO options (parts) from flat settings; settings that are no flat GP flag pass through."""
    given_refit, given_maximiser = refit is not None, maximiser is not None
    refit, maximiser = refit or parts.GP_REFIT, maximiser or parts.GP_MAXIMISER
    out, fit_kw, max_kw, schedule = {}, {}, {}, {}
    batch = {k: flat.pop(k) for k in ("batch_size", "batch_lie", "batch_mode", "batch_samples") if k in flat}
    bucket = {k: flat.pop(k) for k in ("bucket", "bucket_step") if k in flat}
    fit = flat.pop("fit", None)
    for k, v in flat.items():
        if k in FIT:
            fit_kw[FIT[k]] = v
        elif k in MAXIMISER:
            max_kw[MAXIMISER[k]] = v
        elif k == "refit_growth":
            schedule["growth"] = v
        elif k == "refit_all":
            schedule["all_below"] = v
        elif k in ("refit_far_from", "refit_far_growth"):
            schedule[k[len("refit_") :]] = v
        elif k == "kernel":
            out["model"] = gp.GPModel(kernel=v)
        elif k == "beta_schedule":
            out["acquisition"] = acquisitions.UCB(schedule=v)
        elif k == "num_features":
            out["acquisition"] = acquisitions.Thompson(num_features=v)
        else:
            out[k] = v
    if schedule:
        fit_kw["schedule"] = dataclasses.replace(refit.schedule, **schedule)
    if fit == "fixed":
        out["hypers"] = refit.start
    elif fit_kw or given_refit:
        out["hypers"] = dataclasses.replace(refit, **fit_kw)
    if fit == "map":
        out["model"] = dataclasses.replace(out.get("model", gp.GPModel()), prior=gp.HyperPrior())
    if max_kw or given_maximiser:
        out["maximiser"] = dataclasses.replace(maximiser, **max_kw)
    if batch.get("batch_size", 1) > 1:
        if batch.get("batch_mode", "lie") == "mc":
            out["batching"] = parts.JointMC(size=batch["batch_size"], samples=batch.get("batch_samples", 128))
        else:
            out["batching"] = parts.Lies(size=batch["batch_size"], lie=batch.get("batch_lie", parts.BATCH_LIE))
    elif "batch_lie" in batch:
        out["batching"] = parts.Lies(size=1, lie=batch["batch_lie"])  # AskTell's pending points carry this lie
    if bucket:
        enabled = bucket.get("bucket", True)
        if isinstance(enabled, tuple):
            out["growth"] = data.Growth(sizes=enabled)
        elif not enabled:
            out["growth"] = data.WHOLE
        else:
            out["growth"] = data.Growth(step=bucket.get("bucket_step", data.BUCKET_STEP))
    return out


UHE_HMC = ("num_warmup", "num_samples", "step_size", "num_leapfrog")  # jbo.algorithms.uhe_bo.HMC's fields


def uhe_options(method: str, **flat) -> dict:
    """Options of the UHE paper's `method` (jbo.algorithms.uhe_bo.make: refit, maximiser, growth) from flat
    settings, on the paper's parts. Flat settings of the method's own parts replace those parts: HMC's
    (UHE_HMC) its HMC estimate, grid_candidates its lengthscale rule, noise_refit its pseudo-data estimate;
    a method without such a part ignores them (noise_refit=True is refused there: it would change nothing)."""
    from jbo.algorithms import uhe_bo

    configured = uhe_bo.make(method)
    hmc = {k: flat.pop(k) for k in UHE_HMC if k in flat}
    grid_candidates, noise_refit = flat.pop("grid_candidates", None), flat.pop("noise_refit", None)
    parts_out = {}
    if hmc and isinstance(configured.estimate, uhe_bo.HMC):
        parts_out["estimate"] = dataclasses.replace(configured.estimate, **hmc)
    if grid_candidates is not None and configured.lengthscales is not None:
        parts_out["lengthscales"] = dataclasses.replace(configured.lengthscales, grid_candidates=grid_candidates)
    if noise_refit is not None:
        if not isinstance(configured.estimate, uhe_bo.PseudoData):
            if noise_refit:
                raise ValueError(f"noise_refit applies to the pseudo-data methods: {method!r} fits on the real data")
        else:
            parts_out["estimate"] = dataclasses.replace(configured.estimate, noise_refit=noise_refit)
    bucket = {k: flat.pop(k) for k in ("bucket", "bucket_step") if k in flat}
    out = gp_options(refit=uhe_bo.PAPER_REFIT, maximiser=uhe_bo.PAPER_MAXIMISER, **flat)
    out.update(parts_out)
    out["refit"] = out.pop("hypers")
    if bucket:
        enabled = bucket.get("bucket", True)
        out["growth"] = dataclasses.replace(uhe_bo.GROWTH, step=bucket.get("bucket_step")) if enabled else data.WHOLE
    return out


__all__ = ["ADAM_SEARCH", "UHE_HMC", "WIDE_SEARCH", "gp_options", "uhe_options"]
