"""Checks at the boundary: non-finite values met inside a compiled run, and the domains of Params.

**Non-finite values.** A compiled run cannot raise, so it records: every step's ``Trace.flags`` (the runner's) and ``Trace.info`` (an algorithm's) hold
``nonfinite_<source>`` booleans, and the entry points (``jbo.run``, ``run_seeds``, ``run_sweep``,
``run_environments``, ``run_study``) look at them after the run. By default a run that met NaN or
inf raises :class:`NonFiniteError`, naming the source, the first step and the seed (the trace is
attached as ``error.trace``); ``on_nonfinite="warn"`` returns the trace with a warning, ``"ignore"``
skips the check. A post-run check of flags recorded in the trace was chosen over
``jax.experimental.checkify``: checkify stops at the first error of the whole batch and wraps every
program (recompiling it), while the flags cost one comparison per step, survive vmap, sharding and
chunking unchanged, and say which seeds and steps were hit.

The sources: ``objective`` and ``action`` (recorded by the engine for every algorithm), ``model``
and ``acquisition`` (recorded by GP-based algorithms; any algorithm may add its own
``nonfinite_<name>`` info entry, described in :data:`SOURCES` or by its name).

**Failed evaluations.** An observation with a NaN or inf in it (y, a context, a cost) is a *failed
evaluation*: the step is spent, the algorithm is not told (its state stays as it was, so the model
never sees the value), the value is left out of ``best_value``, ``simple_regret`` and
``cumulative_regret`` (its ``regret`` is NaN), and ``nonfinite_objective`` marks it. AskTell applies
the same rule to a non-finite value given to ``tell``.

**Params domains.** Each Params NamedTuple may declare ``DOMAIN = {field: "[0, inf)", ...}`` next to its
fields; a field without one must be a finite real number. :func:`check_params` checks type,
finiteness and domain of every field, in nested Params too, and is called by ``replace_params`` and
by every entry point before a run.
"""

from __future__ import annotations

import math
import re
import warnings

import jax
import jax.numpy as jnp
import numpy as np

NONFINITE = "nonfinite_"  # prefix of the per-step info entries checked after a run
SOURCES = {
    "objective": "the objective returned a non-finite observation (a failed evaluation: spent, not told "
    "to the algorithm, left out of the regrets)",
    "action": "the algorithm's ask proposed a non-finite action",
    "model": "the model was not finite: the GP fit failed (its loss or a gradient was NaN or inf, e.g. a "
    "kernel that is not positive definite or a profile with a NaN derivative; the method kept its previous "
    "hyper-parameters) or the posterior was (the kernel or the mean gave NaN or inf)",
    "acquisition": "the acquisition had no finite value at the chosen point",
}
ON_NONFINITE = ("raise", "warn", "ignore")


class NonFiniteError(FloatingPointError):
    """A compiled run met NaN or inf. Attributes: trace (the run's trace), problems (a list of
    (source, first step, run index) tuples)."""

    def __init__(self, message: str, trace, problems):
        super().__init__(message)
        self.trace, self.problems = trace, problems


def all_finite(tree) -> jax.Array:
    """True when every floating-point leaf of tree is finite (integer and bool leaves are ignored)."""
    oks = [jnp.all(jnp.isfinite(a)) for a in jax.tree.leaves(tree) if jnp.issubdtype(jnp.result_type(a), jnp.inexact)]
    return jnp.all(jnp.stack(oks)) if oks else jnp.asarray(True)


def check_on_nonfinite(on_nonfinite) -> str:
    if on_nonfinite not in ON_NONFINITE:
        raise ValueError(f"on_nonfinite must be one of {ON_NONFINITE}, got {on_nonfinite!r}")
    return on_nonfinite


def model_note(algorithm) -> str:
    """' (kernel NAME)' for an algorithm with a GP model (its `model.kernel`: a built-in name, a
    profile's function name or a kernel object's short repr such as ``Matern52() + Periodic()``), else
    '': the post-run messages name the kernel a model failure came from."""
    from jbo import kernels

    kernel = getattr(getattr(algorithm, "model", None), "kernel", None)
    if kernel is None:
        return ""
    return f" (kernel {kernels.describe(kernel)})"


def _where(index, axes) -> str:
    """'seed 3, setting 0' for named axes; an unnamed one as 'index 1 of axis 2'."""
    if not index:
        return "the run"
    parts = [f"{axes[k]} {i}" if k < len(axes) else f"index {i} of axis {k}" for k, i in enumerate(index)]
    return ", ".join(parts)


def nonfinite_flags(info) -> dict:
    """The ``nonfinite_<source>`` entries of an algorithm's info (a dict, or an Info NamedTuple's fields)."""
    items = info._asdict().items() if hasattr(info, "_asdict") else info.items() if isinstance(info, dict) else ()
    return {k: v for k, v in items if isinstance(k, str) and k.startswith(NONFINITE)}


def check_trace(trace, on_nonfinite: str = "raise", axes: tuple = (), label: str = "the run", environment=None):
    """Look at a trace's nonfinite_* flags (leading axes named by `axes`, then the step axis) and raise
    NonFiniteError, warn, or do nothing, as on_nonfinite says. Returns the trace.

    environment: the run's environment; where it has `host_failures()` (a host objective, see
    jbo.problems.from_callback) the failed calls it reports are named in the message, and warned
    about even with on_nonfinite="ignore" (an exception is not a value to ignore)."""
    failures = getattr(environment, "host_failures", lambda: [])()
    details = "".join(f"\n    {line}" for line in failures)
    if failures and on_nonfinite == "ignore":
        warnings.warn(
            f"{label}: the host objective failed (failed evaluations):{details}", RuntimeWarning, stacklevel=3
        )
    if check_on_nonfinite(on_nonfinite) == "ignore":
        return trace
    recorded = {**nonfinite_flags(trace.info), **nonfinite_flags(getattr(trace, "flags", None) or {})}
    problems, lines = [], []
    for key in sorted(recorded):
        flags = np.asarray(recorded[key])
        if flags.ndim == 0 or not flags.any():
            continue
        source = key[len(NONFINITE) :]
        runs = flags.reshape(-1, flags.shape[-1])
        first = np.where(runs.any(1), runs.argmax(1), flags.shape[-1])
        r = int(np.argmin(first))
        index = tuple(int(i) for i in np.unravel_index(r, flags.shape[:-1])) if flags.ndim > 1 else ()
        step = int(first[r])
        problems.append((source, step, index))
        hit = int(runs.any(1).sum())
        lines.append(
            f"  {source}: {SOURCES.get(source, 'non-finite values')}; first at step {step} of "
            f"{_where(index, axes)} ({int(runs.sum())} step(s) in {hit} of {runs.shape[0]} run(s))"
            + (f"; the host objective failed at:{details}" if source == "objective" and failures else "")
        )
    if not problems:
        return trace
    message = (
        f"{label} met NaN or inf:\n"
        + "\n".join(lines)
        + "\n(on_nonfinite='warn' returns the trace with a warning; error.trace holds it)"
    )
    if on_nonfinite == "warn":
        warnings.warn(message, RuntimeWarning, stacklevel=3)
        return trace
    raise NonFiniteError(message, trace, problems)


def _numbers(value, message: str) -> np.ndarray:
    """value as a NumPy array of numbers; None, strings, bools and other objects: TypeError(message + got ...)."""
    if value is None or isinstance(value, (str, bytes, bool, np.bool_)):
        raise TypeError(f"{message}, got {value!r}")
    try:
        a = np.asarray(value)
    except Exception:
        raise TypeError(f"{message}, got {type(value).__name__}") from None
    if a.dtype.kind not in "fiu":
        raise TypeError(f"{message}, got {value!r}")
    return a


def host_number(value, what: str = "the objective") -> float:
    """A host function's result as one float: None, strings, bools and anything but one number are
    a TypeError or ValueError naming `what` (the value may be NaN or inf: see the failed-evaluation rule)."""
    a = _numbers(value, f"{what} must return a number")
    if a.size != 1:
        raise ValueError(f"{what} must return one number, got shape {a.shape}")
    return float(a.reshape(()))


def check_optimum(trace, label: str = "the run") -> None:
    """Warn when a run beats the stated optimum (a simple regret below zero beyond rounding): the
    problem's optimal_value is wrong, and every regret of the run is off by as much."""
    regret = trace.metrics.get("simple_regret") if isinstance(trace.metrics, dict) else None
    if regret is None:
        return
    r = np.asarray(regret, dtype=np.float64)
    finite = r[np.isfinite(r)]
    best = np.asarray(trace.metrics.get("best_value", 0.0), dtype=np.float64)
    scale = max(1.0, float(np.max(np.abs(best[np.isfinite(best)]), initial=0.0)))
    if finite.size and finite.min() < -1e-9 * scale:
        warnings.warn(
            f"{label}: the run beat the stated optimal value by {-finite.min():.6g} (simple regret "
            f"below zero); the problem's optimal_value is too low, so its regrets are off",
            RuntimeWarning,
            stacklevel=3,
        )


# ---------------------------------------------------------------- Params domains
_NUMBER = r"[-+]?(?:inf|(?:\d+\.?\d*|\.\d+)(?:e[-+]?\d+)?)"
_INTERVAL = re.compile(rf"^\s*([\[(])\s*({_NUMBER})\s*,\s*({_NUMBER})\s*([\])])\s*$")


def parse_domain(text: str):
    """'[0, inf)' -> (0.0, inf, open low False, open high True); 'real' -> (-inf, inf): any finite
    number. Ends are numbers or [+-]inf; an empty interval is refused."""
    if text == "real":
        return -math.inf, math.inf, True, True
    m = _INTERVAL.match(text) if isinstance(text, str) else None
    if not m:
        raise ValueError(f"a domain is 'real' or an interval such as '[0, inf)', got {text!r}")
    lo, hi, lo_open, hi_open = float(m.group(2)), float(m.group(3)), m.group(1) == "(", m.group(4) == ")"
    if lo > hi or (lo == hi and (lo_open or hi_open)):
        raise ValueError(f"the domain {text!r} is empty")
    return lo, hi, lo_open, hi_open


def _is_params(p) -> bool:
    return isinstance(p, tuple) and hasattr(p, "_fields")


def _is_params_group(p) -> bool:
    return isinstance(p, tuple) and not hasattr(p, "_fields") and bool(p) and all(_is_params(v) or v == () for v in p)


def param_fields(params, prefix: str = "") -> list[str]:
    """The sweepable fields of a Params NamedTuple, nested ones as parent.field."""
    if not _is_params(params):
        return []
    out = []
    for field in params._fields:
        value = getattr(params, field)
        if _is_params(value):
            out += param_fields(value, f"{prefix}{field}.")
        elif _is_params_group(value):  # a tuple of Params (jbo.acquisitions.ChoiceParams.options)
            for i, v in enumerate(value):
                out += param_fields(v, f"{prefix}{field}.{i}.")
        elif not (isinstance(value, tuple) and not value):
            out.append(prefix + field)
    return out


def check_params(params, owner: str = "") -> None:
    """Type, finiteness and declared domain of every field of a Params NamedTuple (nested ones too):
    None, strings, bools and anything that is not a real number (or array of them) is a TypeError,
    NaN or a value outside the domain a ValueError, each naming the field. A tuple of Params is
    checked element by element, and a Params class's own ``check(where)`` (a rule across fields) runs
    last. Traced values (inside jit) are not checked."""
    if not _is_params(params):
        return
    name = type(params).__name__
    domains = getattr(type(params), "DOMAIN", {})
    for field in params._fields:
        value = getattr(params, field)
        where = f"{owner}{name}.{field}"
        if _is_params(value):
            check_params(value, f"{where} -> ")
            continue
        if _is_params_group(value):
            for i, v in enumerate(value):
                check_params(v, f"{where}[{i}] -> ")
            continue
        if isinstance(value, tuple) and not value or isinstance(value, jax.core.Tracer):
            continue  # an empty group (no Params), or a value inside jit
        a = _numbers(value, f"{where} must be a number")
        lo, hi, lo_open, hi_open = parse_domain(domains.get(field, "real"))
        text = domains.get(field, "a finite real number")
        if np.any(np.isnan(a)):
            raise ValueError(f"{where} is NaN; it must lie in {text}")
        bad = (a < lo) | (a > hi) | (lo_open & (a == lo)) | (hi_open & (a == hi))
        if np.any(bad):
            shown = a if a.ndim == 0 else a[bad]
            raise ValueError(f"{where} = {shown.tolist()!r} is outside its domain {text}")
    rule = getattr(type(params), "check", None)
    if callable(rule) and not any(isinstance(v, jax.core.Tracer) for v in jax.tree.leaves(params)):
        rule(params, f"{owner}{name}.")
