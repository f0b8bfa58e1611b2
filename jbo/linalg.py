"""Dense linear algebra for the GP layer: the inverse of a Cholesky factor and the inverse of the
matrix it factors by 2 x 2 blocks, the thread count of the LAPACK under XLA:CPU, and a workaround for
a deadlock in jaxlib 0.10.x.

**Blocked inverses.** :func:`tril_inverse` computes L^{-1} of a lower-triangular L and :func:`tril_gram`
the product U^T U of a lower-triangular U (so K^{-1} = tril_gram(tril_inverse(L)) for K = L L^T). Each
halves the matrix, recurses on the two diagonal blocks and does the rest as dense matmuls:

    L = [[A, 0], [B, C]]  ->  L^{-1} = [[A^{-1}, 0], [-C^{-1} B A^{-1}, C^{-1}]],
    U = [[P, 0], [Q, R]]  ->  U^T U = [[P^T P + Q^T Q, Q^T R], [R^T Q, R^T R]],

down to blocks of at most `block` rows, where a triangular solve against the identity (LAPACK's trsm)
and one matmul finish. A triangular solve against the identity costs N^3 flops and L^{-T} L^{-1} as one
matmul 2 N^3; one level of blocks makes them 3/4 N^3 and N^3 (the recursion's limit is N^3 / 3 each),
and most of it runs as matmuls, XLA's fastest kernel. BLOCK = 256 rows was chosen by measurement
(`experiments/engine/block_size.py` -> `experiments/results/engine/block_size.json`). With
them (and the product form of :func:`jbo.gp.lml_and_grad`) the LML gradient at N = 400 and 1000 takes
about half the time in the fit's loop on XLA:CPU here (`experiments/results/engine/lml_grad_blocked.json`).
The results equal the whole-matrix ones to rounding (tested against NumPy and SciPy), not bit for bit.

**LAPACK's threads.** On CPU, JAX's Choleskys and triangular solves call the LAPACK that SciPy ships
(jaxlib loads ``scipy.linalg.cython_lapack``), and that library's BLAS (OpenBLAS in SciPy's wheels)
keeps its own threads, one per core, beside XLA:CPU's pool of one thread per core. After each call
they keep spinning, taking the cores from XLA's threads while the rest of a step runs. With one BLAS
thread the fit's step took 0.65x of its time at N = 400 and 0.87x at N = 1000, its results moving at
rounding only (`experiments/engine/fit_before_after.py` ->
`experiments/results/engine/fit_before_after_lapack_threads.json`). So
importing jbo calls :func:`limit_threads`: SciPy's BLAS library runs :data:`LAPACK_THREADS` = 1
thread. Where SciPy links a shared BLAS (a conda environment), that library is also NumPy's, so
NumPy's matrix products then run on one thread too. ``JBO_LAPACK_THREADS=n`` sets n threads, ``=0`` leaves the
library as it is; :func:`threads` reports the setting.

**The LAPACK loop.** A workaround for a deadlock in jaxlib 0.10.x: batched LAPACK calls on XLA:CPU
are lowered to a loop of unbatched calls.

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
from pathlib import Path

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


LAPACK_THREADS = 1  # threads of the BLAS under JAX's CPU LAPACK calls (chosen by measurement; see the module docstring)


def _scipy_blas():
    """threadpoolctl's controller of the BLAS libraries under SciPy's LAPACK: those SciPy ships (its
    wheels' scipy.libs, or scipy/.dylibs), else every BLAS library loaded (SciPy then links a shared one)."""
    import scipy
    import scipy.linalg.cython_lapack  # noqa: F401  (loads the library jaxlib calls, as jaxlib would at its first call)
    from threadpoolctl import ThreadpoolController

    blas = ThreadpoolController().select(user_api="blas")
    home = Path(scipy.__file__).resolve().parent
    own = [home, home.with_name("scipy.libs")]
    paths = [c.filepath for c in blas.lib_controllers if any(Path(c.filepath).resolve().is_relative_to(d) for d in own)]
    return blas.select(filepath=paths) if paths else blas


def limit_threads(num_threads: int | None = None) -> list[dict]:
    """Set the threads of the BLAS library under JAX's CPU LAPACK calls (see the module docstring):
    `num_threads`, else ``JBO_LAPACK_THREADS``, else :data:`LAPACK_THREADS`; 0 leaves the library as
    it is. Returns threadpoolctl's description of the libraries set (empty when nothing was set).
    A value that is not a whole number >= 0 is a ValueError naming it."""
    if num_threads is None:
        raw = os.environ.get("JBO_LAPACK_THREADS", "").strip()
        if raw and not raw.isdigit():
            raise ValueError(
                f"JBO_LAPACK_THREADS must be a whole number >= 0 (0: leave the BLAS as it is), got {raw!r}"
            )
        num_threads = int(raw) if raw else LAPACK_THREADS
    if isinstance(num_threads, bool) or not isinstance(num_threads, int) or num_threads < 0:
        raise ValueError(f"limit_threads: num_threads must be a whole number >= 0, got {num_threads!r}")
    if num_threads == 0:
        return []
    blas = _scipy_blas()
    blas.limit(limits=num_threads)
    return blas.info()


def threads() -> list[dict]:
    """threadpoolctl's description (filepath, internal_api, num_threads, ...) of the BLAS libraries
    under JAX's CPU LAPACK calls."""
    return _scipy_blas().info()


BLOCK = 256  # tril_inverse / tril_gram halve a matrix until its blocks have at most this many rows (read when traced)


def _check_square(a, where: str):
    if a.ndim < 2 or a.shape[-1] != a.shape[-2]:
        raise ValueError(f"{where}: expected a square matrix (..., N, N), got shape {a.shape}")
    return a.shape[-1]


def tril_inverse(L: jax.Array, block: int | None = None) -> jax.Array:
    """L^{-1} of a lower-triangular L (..., N, N) by 2 x 2 blocks (see the module docstring) of at most
    `block` rows (default :data:`BLOCK`): lower triangular, zeros above the diagonal; NaN where L has NaN
    (a failed factorisation)."""
    n = _check_square(L, "tril_inverse(L)")
    block = BLOCK if block is None else block
    if n <= max(int(block), 1):
        eye = jnp.broadcast_to(jnp.eye(n, dtype=L.dtype), L.shape)
        return jax.lax.linalg.triangular_solve(L, eye, left_side=True, lower=True)
    m = n // 2
    inv_a = tril_inverse(L[..., :m, :m], block)
    inv_c = tril_inverse(L[..., m:, m:], block)
    return _block_lower(inv_a, -(inv_c @ (L[..., m:, :m] @ inv_a)), inv_c)


def _block_lower(a, b, c):
    """[[a, 0], [b, c]] for blocks with any leading batch axes."""
    zeros = jnp.zeros(a.shape[:-1] + (c.shape[-1],), a.dtype)
    return jnp.concatenate([jnp.concatenate([a, zeros], axis=-1), jnp.concatenate([b, c], axis=-1)], axis=-2)


def tril_gram(U: jax.Array, block: int | None = None) -> jax.Array:
    """U^T U for a lower-triangular U (..., N, N) by 2 x 2 blocks (see the module docstring) of at most
    `block` rows (default :data:`BLOCK`): with U = L^{-1} from :func:`tril_inverse`, the inverse
    (L L^T)^{-1}. Symmetric to rounding."""
    n = _check_square(U, "tril_gram(U)")
    block = BLOCK if block is None else block
    t = lambda a: jnp.swapaxes(a, -1, -2)  # noqa: E731
    if n <= max(int(block), 1):
        return t(U) @ U
    m = n // 2
    p, q, r = U[..., :m, :m], U[..., m:, :m], U[..., m:, m:]
    off = t(r) @ q
    top = jnp.concatenate([tril_gram(p, block) + t(q) @ q, t(off)], axis=-1)
    return jnp.concatenate([top, jnp.concatenate([off, tril_gram(r, block)], axis=-1)], axis=-2)


__all__ = [
    "BLOCK",
    "LAPACK_THREADS",
    "affected",
    "install",
    "installed",
    "limit_threads",
    "threads",
    "tril_gram",
    "tril_inverse",
]
