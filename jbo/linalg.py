"""A workaround for a deadlock in jaxlib 0.10.x: batched LAPACK calls on XLA:CPU are lowered to a
loop of unbatched calls.

The bug: jaxlib 0.10.0 - 0.11.0 runs a batched LAPACK custom call (``lapack_dpotrf_ffi`` for a
Cholesky, ``lapack_dtrsm_ffi`` for a triangular solve: one call with a leading batch of matrices,
which is what ``jax.vmap`` over seeds or restarts makes of them) through ``ParallelBatchMap``: the
call, itself running on a thread of XLA:CPU's intra-op pool, splits its batch into tasks on the
same pool and blocks until they finish. When the thunk executor runs as many independent batched
calls at once as the pool has threads (2 on a 2-core machine), every thread waits for tasks that no
thread is left to run, and the program hangs at 0% CPU. Here it hung every 10-seed UHE-BO run
(all threads in ``CholeskyFactorization::Kernel -> ParallelBatchMap -> BlockingCounter::Wait``),
earlier a batched ``eigvalsh`` (see ``sbo_kde.largest_eigenvalue``) and triangular solves on several CPU
devices (``jbo.parallel``). Open-source jaxlib builds drop that parallel path from 0.11.1 on; 0.10.2
is the newest jaxlib this project can install.

The workaround: for the affected jaxlib versions, importing jbo re-registers the CPU lowering of
``cholesky_p`` and ``triangular_solve_p`` so that an operand with batch dimensions lowers to a
``while`` loop over the (flattened) batch whose body is the unbatched LAPACK call, the one JAX emits
for a single matrix. No call then has a batch for ParallelBatchMap to split. Tracing, vmap and
autodiff are untouched (this happens only when a program is lowered), and LAPACK factors or solves
each matrix with the same routine it applied to each matrix of the batch, so results are bit for
bit the same (tested); the loop gives up the pool's parallelism over the batch. Unbatched calls,
other platforms and other jaxlib versions are left alone. ``JBO_LAPACK_LOOP=0`` turns it off,
``=1`` forces it on; :func:`installed` says whether it is active.
"""

from __future__ import annotations

import os

import jax
import jax.numpy as jnp

_AFFECTED = ((0, 10, 0), (0, 11, 1))  # [first, fixed) jaxlib versions with the parallel batch path
_state = {"installed": False}


def _version(v: str) -> tuple[int, ...]:
    out = []
    for part in v.split(".")[:3]:
        digits = "".join(ch for ch in part if ch.isdigit())
        out.append(int(digits) if digits else 0)
    return tuple(out)


def affected(version: str | None = None) -> bool:
    """True for the jaxlib versions whose batched LAPACK calls can deadlock XLA:CPU's pool."""
    if version is None:
        import jaxlib

        version = jaxlib.__version__
    return _AFFECTED[0] <= _version(version) < _AFFECTED[1]


def installed() -> bool:
    """Whether the looped lowering is registered in this process."""
    return _state["installed"]


def _looped(prim, original, num_matrix_operands: int):
    """A CPU lowering rule: `original` for unbatched operands, else a lax.map over the flattened batch
    of the first `num_matrix_operands` operands whose body binds `prim` on single matrices (and so
    lowers through `original`)."""
    from jax._src.interpreters import mlir

    def rule(ctx, *operands, **params):
        avals = ctx.avals_in
        if all(a.ndim <= 2 for a in avals[:num_matrix_operands]):
            return original(ctx, *operands, **params)

        def loop(*xs):
            batch = xs[0].shape[:-2]
            flat = [x.reshape((-1,) + x.shape[-2:]) for x in xs]
            out = jax.lax.map(lambda ms: prim.bind(*ms, **params), tuple(flat))
            return [jnp.reshape(o, batch + o.shape[1:]) for o in (out if prim.multiple_results else [out])]

        return mlir.lower_fun(loop, multiple_results=True)(ctx, *operands)

    return rule


def install(force: bool = False) -> bool:
    """Register the looped CPU lowerings (once) when jaxlib is affected, or always with force.
    Returns whether they are registered."""
    if _state["installed"]:
        return True
    flag = os.environ.get("JBO_LAPACK_LOOP", "")
    if flag == "0" or not (force or flag == "1" or affected()):
        return False
    from jax._src.interpreters import mlir
    from jax._src.lax import linalg as lax_linalg

    for prim, operands in ((lax_linalg.cholesky_p, 1), (lax_linalg.triangular_solve_p, 2)):
        original = mlir._platform_specific_lowerings["cpu"][prim].rule
        mlir.register_lowering(prim, _looped(prim, original, operands), platform="cpu")
    _state["installed"] = True
    return True


__all__ = ["affected", "install", "installed"]
