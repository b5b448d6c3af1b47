"""Drop-in mirror of :mod:`jax.scipy.linalg` backed by jax_batchla's batched kernels.

Every public name of ``jax.scipy.linalg`` exists here; the ones not accelerated yet forward to jax
and say so in their docstrings.
"""

from __future__ import annotations

from functools import partial

import jax.scipy.linalg as jsl

from .. import _api
from .._ops import posv, potrf, potrs, trsm

_TRANS = {0: False, "N": False, 1: True, "T": True, 2: True, "C": True}


def _factor(a, lower: bool):
    """Cholesky factor of `a` reading only its lower (or upper) triangle, in that triangle."""
    l, _ = potrf(a if lower else _api.mT(a))
    return l if lower else _api.mT(l)


def cholesky(a, lower: bool = False, overwrite_a: bool = False, check_finite: bool = True):
    """Compute the Cholesky decomposition of a matrix.

    Mirrors :func:`jax.scipy.linalg.cholesky`: only the ``lower`` (or upper) triangle of ``a`` is
    read. float32/float64 run jax_batchla's kernels; other dtypes forward to jax.

    Args:
      a: array of shape ``(..., N, N)``, symmetric positive definite.
      lower: return the lower factor ``L`` (``a = L L^H``) if True, else the upper ``U``.
      overwrite_a, check_finite: unused, as in JAX.

    Returns:
      array of shape ``(..., N, N)``; NaN in the factor's triangle for a matrix that is not
      positive definite, the rest of the batch unaffected.
    """
    del overwrite_a, check_finite
    fname = "jax_batchla.scipy.linalg.cholesky"
    (a,) = _api.as_inexact_arrays(fname, a=a)
    _api.check_square(fname, "a", a)
    if not _api.accelerated(a):
        return jsl.cholesky(a, lower=lower)
    return _factor(a, lower)


def cho_factor(a, lower: bool = False, overwrite_a: bool = False, check_finite: bool = True):
    """Factorization for Cholesky-based linear solves; mirrors :func:`jax.scipy.linalg.cho_factor`.

    Returns:
      ``(c, lower)``: ``c`` of shape ``(..., N, N)`` holds the factor in the ``lower`` (or upper)
      triangle and zeros in the other; pass the tuple to :func:`cho_solve`.
    """
    del overwrite_a, check_finite
    return cholesky(a, lower=lower), lower


def cho_solve(c_and_lower, b, overwrite_b: bool = False, check_finite: bool = True):
    """Solve ``a x = b`` given the Cholesky factor of ``a``; mirrors
    :func:`jax.scipy.linalg.cho_solve`.

    Args:
      c_and_lower: ``(c, lower)`` as returned by :func:`cho_factor`; only the ``lower`` (or upper)
        triangle of ``c`` (shape ``(..., N, N)``) is read.
      b: right-hand side of shape ``(N,)`` or ``(..., N, K)`` (batch dims broadcast with ``c``).

    Returns:
      the solution, shaped like ``b`` (with broadcast batch dims).
    """
    del overwrite_b, check_finite
    fname = "jax_batchla.scipy.linalg.cho_solve"
    c, lower = c_and_lower
    c, b = _api.as_inexact_arrays(fname, c=c, b=b)
    if not _api.accelerated(c, b):
        return jsl.cho_solve((c, lower), b)
    vector = _api.rhs_signature(fname, c, b)
    return _api.vectorized_solve(partial(potrs, lower=bool(lower)), c, b, vector)


def solve_triangular(a, b, trans=0, lower: bool = False, unit_diagonal: bool = False,
                     overwrite_b: bool = False, debug=None, check_finite: bool = True):
    """Solve ``op(a) x = b`` for triangular ``a``; mirrors :func:`jax.scipy.linalg.solve_triangular`.

    Args:
      a: array of shape ``(..., N, N)``; only its ``lower`` (or upper) triangle is read.
      b: array of shape ``(N,)`` or ``(..., N, K)``.
      trans: 0 or ``'N'`` solves ``a x = b``; 1/``'T'`` solves ``a^T x = b``; 2/``'C'`` solves
        ``a^H x = b``.
      lower: use the lower triangle of ``a`` if True, else the upper.
      unit_diagonal: treat the diagonal of ``a`` as ones (it is not read).

    Returns:
      the solution, shaped like ``b``. A zero on the diagonal gives inf/NaN in that matrix's
      solution only.
    """
    del overwrite_b, debug, check_finite
    fname = "jax_batchla.scipy.linalg.solve_triangular"
    if trans not in _TRANS:
        raise ValueError(f"{fname}: invalid 'trans' value {trans!r}")
    a, b = _api.as_inexact_arrays(fname, a=a, b=b)
    if not _api.accelerated(a, b):
        return jsl.solve_triangular(a, b, trans=trans, lower=lower, unit_diagonal=unit_diagonal)
    vector = _api.rhs_signature(fname, a, b)
    core = partial(trsm, lower=bool(lower), trans=_TRANS[trans], unit_diag=bool(unit_diagonal))
    return _api.vectorized_solve(core, a, b, vector)


_ASSUME_A = ("gen", "sym", "her", "pos")


def solve(a, b, lower: bool = False, overwrite_a: bool = False, overwrite_b: bool = False,
          debug: bool = False, check_finite: bool = True, assume_a: str = "gen"):
    """Solve ``a x = b``; mirrors :func:`jax.scipy.linalg.solve`.

    ``assume_a='pos'`` runs jax_batchla's fused Cholesky factor + solve (one kernel reading ``a``
    and ``b`` once); its gradient factors once and reuses the factor. Other ``assume_a`` values
    forward to jax until the LU kernels land.

    Args:
      a: array of shape ``(..., N, N)``. With ``assume_a='pos'`` only its ``lower`` (or upper)
        triangle is read.
      b: array of shape ``(..., N)`` or ``(..., N, K)``.
      lower: which triangle of ``a`` to read when ``assume_a != 'gen'``.
      assume_a: ``'gen'``, ``'sym'``, ``'her'`` or ``'pos'``.

    Returns:
      the solution, shaped like ``b``; NaN for a matrix that is not positive definite
      (``assume_a='pos'``), the other matrices of the batch unaffected.
    """
    del overwrite_a, overwrite_b, debug, check_finite
    fname = "jax_batchla.scipy.linalg.solve"
    if assume_a not in _ASSUME_A:
        raise ValueError(f"{fname}: expected assume_a to be one of {list(_ASSUME_A)}; got {assume_a!r}")
    a, b = _api.as_inexact_arrays(fname, a=a, b=b)
    if assume_a != "pos" or not _api.accelerated(a, b):
        return jsl.solve(a, b, lower=lower, assume_a=assume_a)
    _api.check_square(fname, "a", a)
    if not (b.ndim in (a.ndim, a.ndim - 1) and b.ndim >= 1 and b.shape[a.ndim - 2] == a.shape[-1]):
        raise ValueError(f"{fname}: arguments must have shapes a=(..., N, N) and b=(..., N) or "
                         f"(..., N, K); got a={a.shape} and b={b.shape}")
    vector = a.ndim == b.ndim + 1
    return _api.vectorized_solve(lambda a_, b_: posv(a_, b_, lower=bool(lower))[0], a, b, vector)


__all__ = ["cholesky", "cho_factor", "cho_solve", "solve_triangular", "solve"]
__all__ += _api.forward_missing(globals(), jsl, __name__)
