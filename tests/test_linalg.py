"""jbo.linalg: the blocked inverses (truths: NumPy's and SciPy's inverses, the unblocked solve) and
batched Choleskys and triangular solves lowered to loops of unbatched LAPACK calls (the jaxlib 0.10.x
deadlock workaround; truths: the unbatched JAX call on each matrix, bit for bit, NumPy, and the lowered
program's text)."""

import jax
import jax.numpy as jnp
import jax.scipy.linalg as jsl
import numpy as np
import pytest
import scipy.linalg

import jbo  # noqa: F401  (installs the lowering)
from jbo import linalg


def _spd(key, shape, n):
    a = jax.random.normal(key, shape + (n, n))
    return a @ jnp.swapaxes(a, -1, -2) / n + jnp.eye(n)


def test_affected_versions():
    assert linalg.affected("0.10.0") and linalg.affected("0.10.2") and linalg.affected("0.11.0")
    assert not linalg.affected("0.9.2") and not linalg.affected("0.11.1") and not linalg.affected("0.12.0")
    assert linalg.affected("0.10.2.dev20260101")


def test_installed_here_and_loops_in_the_lowered_program():
    import jaxlib

    assert linalg.installed() == linalg.affected(jaxlib.__version__)
    if not linalg.installed():
        pytest.skip("jaxlib is not affected: the native lowering is kept")
    a = _spd(jax.random.key(0), (3, 2), 40)
    text = jax.jit(jnp.linalg.cholesky).lower(a).as_text()
    assert "while" in text and text.count("lapack_dpotrf_ffi") == 1
    assert "while" not in jax.jit(jnp.linalg.cholesky).lower(a[0, 0]).as_text()  # unbatched: untouched


@pytest.mark.parametrize("lower,trans", [(True, 0), (True, 1), (False, 0)])
def test_batched_equals_unbatched_bit_for_bit(lower, trans):
    """The loop's claim, on the CPU (the only platform it lowers): batched == unbatched bit for bit.
    Not a claim about other lowerings: cuSOLVER's batched Cholesky on an H100 differed from its
    unbatched one by 1 ulp in 12% of the entries (measured, jaxlib 0.11.2)."""
    if not linalg.installed():
        pytest.skip("jaxlib is not affected: the native lowering is kept")
    with jax.default_device(jax.devices("cpu")[0]):
        _batched_equals_unbatched(lower, trans)


def _batched_equals_unbatched(lower, trans):
    a = _spd(jax.random.key(1), (3, 2), 33)
    b = jax.random.normal(jax.random.key(2), (3, 2, 33, 4))
    chol = jax.jit(jnp.linalg.cholesky)
    L = chol(a)
    tri = L if lower else jnp.swapaxes(L, -1, -2)
    solve = jax.jit(lambda t, r: jsl.solve_triangular(t, r, lower=lower, trans=trans))
    x = solve(tri, b)
    for i in range(3):
        for j in range(2):
            np.testing.assert_array_equal(np.asarray(L[i, j]), np.asarray(chol(a[i, j])))
            np.testing.assert_array_equal(np.asarray(x[i, j]), np.asarray(solve(tri[i, j], b[i, j])))
    np.testing.assert_allclose(np.asarray(L), np.linalg.cholesky(np.asarray(a)), rtol=1e-12, atol=1e-12)
    op = np.swapaxes(np.asarray(tri), -1, -2) if trans else np.asarray(tri)
    np.testing.assert_allclose(op @ np.asarray(x), np.asarray(b), atol=1e-10)


def test_right_side_solve_and_vmapped_gradient():
    a = _spd(jax.random.key(3), (4,), 12)
    L = jnp.linalg.cholesky(a)
    b = jax.random.normal(jax.random.key(4), (4, 5, 12))
    x = jax.jit(lambda t, r: jax.lax.linalg.triangular_solve(t, r, left_side=False, lower=True))(L, b)
    np.testing.assert_allclose(np.asarray(x) @ np.asarray(L), np.asarray(b), atol=1e-10)

    def logdet(m):
        return 2.0 * jnp.sum(jnp.log(jnp.diag(jnp.linalg.cholesky(m))))

    g = jax.jit(jax.vmap(jax.grad(logdet)))(a)
    np.testing.assert_allclose(
        np.asarray(g), np.linalg.inv(np.asarray(a)), rtol=1e-9, atol=1e-10
    )  # d logdet / dA = A^-1


def test_failed_factorisation_is_nan_per_matrix():  # as JAX's own lowering: NaN lower triangle
    a = _spd(jax.random.key(5), (3,), 8)
    a = a.at[1].set(-jnp.eye(8))  # not positive definite
    L = np.asarray(jax.jit(jnp.linalg.cholesky)(a))
    assert np.all(np.isnan(L[1][np.tril_indices(8)])) and np.all(np.isfinite(L[0])) and np.all(np.isfinite(L[2]))


@pytest.mark.parametrize("n,block", [(1, 128), (7, 2), (33, 8), (130, 128), (301, 64)])
def test_blocked_inverses_match_scipy_and_numpy(n, block):
    """tril_inverse against SciPy's triangular inverse and tril_gram(tril_inverse(L)) against NumPy's
    inverse of L L^T, for odd sizes and several depths of blocking, batched over a leading axis; the
    inverse is exactly lower triangular."""
    a = _spd(jax.random.key(6), (2,), n)
    L = jnp.linalg.cholesky(a)
    inv = jax.jit(lambda m: linalg.tril_inverse(m, block))(L)
    for i in range(2):
        want = scipy.linalg.solve_triangular(np.asarray(L[i]), np.eye(n), lower=True)
        np.testing.assert_allclose(np.asarray(inv[i]), want, rtol=1e-10, atol=1e-11)
    assert np.all(np.asarray(inv)[:, ~np.tril(np.ones((n, n), bool))] == 0.0)
    k_inv = jax.jit(lambda u: linalg.tril_gram(u, block))(inv)
    np.testing.assert_allclose(np.asarray(k_inv), np.linalg.inv(np.asarray(a)), rtol=1e-9, atol=1e-10)
    np.testing.assert_allclose(np.asarray(k_inv), np.swapaxes(np.asarray(k_inv), -1, -2), rtol=1e-12, atol=1e-13)


def test_blocked_inverse_keeps_a_failed_factorisation_nan_and_refuses_a_non_square():
    L = jnp.linalg.cholesky(-jnp.eye(200))  # not positive definite: NaN factor
    assert np.isnan(np.asarray(linalg.tril_gram(linalg.tril_inverse(L)))).any()
    with pytest.raises(ValueError, match=r"tril_inverse\(L\).*\(3, 4\)"):
        linalg.tril_inverse(jnp.zeros((3, 4)))
    with pytest.raises(ValueError, match=r"tril_gram\(U\)"):
        linalg.tril_gram(jnp.zeros((5,)))


# ---------------------------------------------------------------- LAPACK's threads
# threadpoolctl's own list of the BLAS libraries shipped inside SciPy's installation (run here and,
# as text, in child processes that must not import this module, which imports jbo)
_SCIPY_BLAS = """
from pathlib import Path
import scipy, scipy.linalg.cython_lapack, threadpoolctl
home = Path(scipy.__file__).resolve().parent
own = [b for b in threadpoolctl.threadpool_info() if b["user_api"] == "blas"
       and any(Path(b["filepath"]).resolve().is_relative_to(d) for d in (home, home.with_name("scipy.libs")))]
"""


def _blas_under_scipy():
    names = {}
    exec(_SCIPY_BLAS, names)
    return names["own"]


def test_import_leaves_scipys_blas_one_thread_and_limit_threads_sets_it():
    import os

    if os.environ.get("JBO_LAPACK_THREADS", "").strip():
        pytest.skip("JBO_LAPACK_THREADS is set in this environment")
    own = _blas_under_scipy()
    if not own:
        pytest.skip("SciPy links a shared BLAS here (no library inside its installation)")
    assert [lib["num_threads"] for lib in own] == [linalg.LAPACK_THREADS] * len(own)
    try:
        described = linalg.limit_threads(2)
        assert {lib["filepath"] for lib in described} == {lib["filepath"] for lib in own}
        assert [lib["num_threads"] for lib in _blas_under_scipy()] == [2] * len(own)
        assert linalg.limit_threads(0) == []  # 0 leaves it as it is
        assert [lib["num_threads"] for lib in _blas_under_scipy()] == [2] * len(own)
    finally:
        linalg.limit_threads(linalg.LAPACK_THREADS)
    assert [lib["num_threads"] for lib in linalg.threads()] == [linalg.LAPACK_THREADS] * len(own)


@pytest.mark.parametrize("bad", [-1, 1.5, "2", True])
def test_limit_threads_names_a_bad_count(bad):
    with pytest.raises(ValueError, match="limit_threads: num_threads"):
        linalg.limit_threads(bad)


def test_jbo_lapack_threads_in_the_environment():
    """JBO_LAPACK_THREADS=0 keeps the library's own count (that of a process without jbo), =3 sets 3,
    and a value that is not a count stops the import with an error naming the variable."""
    import os
    import subprocess
    import sys

    if not _blas_under_scipy():
        pytest.skip("SciPy links a shared BLAS here (no library inside its installation)")

    def run(value, pre):
        env = {k: v for k, v in os.environ.items() if k != "JBO_LAPACK_THREADS"}
        if value is not None:
            env["JBO_LAPACK_THREADS"] = value
        code = f"{pre}\n{_SCIPY_BLAS}\nprint([b['num_threads'] for b in own])"
        return subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True)

    plain, kept, three = run(None, "pass"), run("0", "import jbo"), run("3", "import jbo")
    assert plain.returncode == kept.returncode == three.returncode == 0, plain.stderr + kept.stderr + three.stderr
    assert kept.stdout == plain.stdout
    assert set(eval(three.stdout)) == {3}
    for value in ("one", "-1"):
        bad = run(value, "import jbo")
        assert bad.returncode != 0 and "JBO_LAPACK_THREADS must be a whole number" in bad.stderr, value
