"""Drop-in mirror of :mod:`jax.numpy.linalg` backed by jax_batchla's batched kernels.

Every public name of ``jax.numpy.linalg`` exists here. Functions we accelerate run our own
primitives (CUDA kernels on GPU, C++ handlers on CPU); the others forward to jax and say so in
their docstrings, so swapping ``import jax.numpy.linalg`` for this module never breaks a program.
"""

from __future__ import annotations

import jax.numpy as jnp

from . import _api, _compat
from ._ops import det as _det
from ._ops import det_closed as _det_closed
from ._ops import gesv, inverse, potrf
from ._ops import slogdet as _slogdet
from ._ops.qr import geqrf, qr_complete, qr_r
from ._ops.qr import qr as _qr
from ._lstsq import lstsq


def cholesky(a, *, upper: bool = False, symmetrize_input: bool = True):
    """Compute the Cholesky decomposition of a positive-definite matrix.

    Mirrors :func:`jax.numpy.linalg.cholesky`; float32 and float64 inputs run jax_batchla's
    batched kernels, other dtypes forward to jax.

    Args:
      a: array of shape ``(..., N, N)`` holding symmetric positive-definite matrices.
      upper: if True return the upper factor ``U`` with ``a = U^H U``, else the lower factor
        ``L`` with ``a = L L^H``.
      symmetrize_input: if True (default) factor ``(a + a^H) / 2``; if False only the lower
        triangle of ``a`` is read.

    Returns:
      array of shape ``(..., N, N)``: the triangular factor, zeros in the other triangle.
      A matrix that is not positive definite (or holds NaN/Inf) gives NaN in its factor's
      triangle, exactly like jnp; the other matrices of the batch are unaffected.
    """
    fname = "jax_batchla.linalg.cholesky"
    (a,) = _api.as_inexact_arrays(fname, a=a)
    _api.check_square(fname, "a", a)
    if not _api.accelerated(a):
        return jnp.linalg.cholesky(a, upper=upper, symmetrize_input=symmetrize_input)
    l, _ = potrf(a, symmetrize=symmetrize_input)  # (a + a^T) / 2 fused into the kernel's load
    return _api.mT(l) if upper else l


def solve(a, b):
    """Solve a linear system of equations.

    Mirrors :func:`jax.numpy.linalg.solve`: one fused LU factor + solve kernel per batch (the
    factors never reach memory while the matrix fits on chip). Its gradient with respect to ``a``
    and ``b`` factors once and costs one extra solve.

    Args:
      a: array of shape ``(..., N, N)``.
      b: array of shape ``(N,)`` or ``(..., N, M)``; batch dims broadcast with ``a``'s.

    Returns:
      ``x`` with ``a @ x == b``, shaped like ``b`` with the broadcast batch dims. A singular
      matrix gives inf/NaN in its own solution only, as in jnp.
    """
    fname = "jax_batchla.linalg.solve"
    a, b = _api.as_inexact_arrays(fname, a=a, b=b)
    if a.ndim < 2:
        raise ValueError(f"{fname}: argument a must be at least two dimensional; got shape {a.shape}")
    n = _api.check_square(fname, "a", a)
    if b.ndim == 0 or b.shape[-1 if b.ndim == 1 else -2] != n:
        raise ValueError(f"{fname}: argument b must have shape (N,) or (..., N, M) with N = {n} "
                         f"to match a of shape {a.shape}; got {b.shape}")
    _api.check_rhs_batch(fname, a, b, vector=b.ndim == 1)
    if not _api.accelerated(a, b):
        return jnp.linalg.solve(a, b)
    return _api.vectorized_solve(lambda a_, b_: gesv(a_, b_)[0], a, b, vector=b.ndim == 1)


def inv(a):
    """Return the inverse of a square matrix.

    Mirrors :func:`jax.numpy.linalg.inv`: one fused LU + inversion kernel per batch.

    Args:
      a: array of shape ``(..., N, N)``.

    Returns:
      array of shape ``(..., N, N)``; a singular matrix gives inf/NaN in its own inverse only.
    """
    fname = "jax_batchla.linalg.inv"
    (a,) = _api.as_inexact_arrays(fname, a=a)
    _api.check_square(fname, "a", a)
    if not _api.accelerated(a):
        return jnp.linalg.inv(a)
    return inverse(a)[0]


def slogdet(a, *, method: str | None = None):
    """Compute the sign and natural log of the absolute value of the determinant.

    Mirrors :func:`jax.numpy.linalg.slogdet`. ``method=None`` or ``'lu'`` runs one kernel that
    factors each matrix on chip and writes only the two results; ``'qr'`` forwards to jax.

    Args:
      a: array of shape ``(..., N, N)``.
      method: ``None``/``'lu'`` or ``'qr'``.

    Returns:
      ``SlogdetResult(sign, logabsdet)``, each of shape ``a.shape[:-2]``; a singular matrix gives
      sign 0 and logabsdet -inf.
    """
    fname = "jax_batchla.linalg.slogdet"
    (a,) = _api.as_inexact_arrays(fname, a=a)
    _api.check_square(fname, "a", a)
    if method not in (None, "lu", "qr"):
        raise ValueError(f"{fname}: unknown slogdet method {method!r}; supported methods are "
                         "'lu' (None) and 'qr'")
    if method == "qr" or not _api.accelerated(a):
        return jnp.linalg.slogdet(a, method=method)
    return _compat.SlogdetResult(*_slogdet(a))


def det(a):
    """Compute the determinant of an array.

    Mirrors :func:`jax.numpy.linalg.det`: ``sign * exp(logabsdet)`` from one kernel that factors
    each matrix on chip and writes only the determinant's sign and log. For N = 2 and 3 it evaluates
    jnp's closed-form expressions (the same products and sums in the same order, each rounded, none
    fused into an FMA); gradients are those of the closed forms, as in jnp.

    Args:
      a: array of shape ``(..., N, N)``.

    Returns:
      array of shape ``a.shape[:-2]``; 0 for a singular matrix. The gradient is defined for
      singular matrices too (through the adjugate), as in jnp.
    """
    fname = "jax_batchla.linalg.det"
    (a,) = _api.as_inexact_arrays(fname, a=a)
    _api.check_square(fname, "a", a)
    if not _api.accelerated(a):
        return jnp.linalg.det(a)
    if a.shape[-1] in (2, 3):
        return _det_closed(a)
    return _det(a)


_QR_MODES = ("reduced", "complete", "r", "raw", "full")


def qr(a, mode: str = "reduced"):
    """Compute the QR decomposition of an array.

    Mirrors :func:`jax.numpy.linalg.qr`: Householder QR with LAPACK's conventions, so ``R``'s
    diagonal signs are jnp's. float32/float64 matrices with ``M >= N`` run jax_batchla's
    kernels (one fused on-chip kernel per batch for ``'reduced'`` and ``'r'`` while the matrix
    fits); wide matrices (``M < N``), complex and half-precision inputs forward to jax.

    Args:
      a: array of shape ``(..., M, N)``.
      mode: ``'reduced'`` (default; ``'full'`` is an alias, as in jnp): ``Q`` of shape
        ``(..., M, K)`` and ``R`` of shape ``(..., K, N)`` with ``K = min(M, N)``;
        ``'complete'``: ``Q`` of shape ``(..., M, M)`` and ``R`` of shape ``(..., M, N)``;
        ``'r'``: ``R`` only, of shape ``(..., K, N)`` (``Q`` is never formed);
        ``'raw'``: LAPACK's ``(h, tau)`` with ``h`` of shape ``(..., N, M)`` (the transpose of
        geqrf's output, as jnp returns it) and ``tau`` of shape ``(..., K)``.

    Returns:
      ``QRResult(Q, R)``, or the array ``R`` if ``mode='r'``. ``Q`` has orthonormal columns and
      ``R`` is upper triangular. A zero or linearly dependent column gives a zero on ``R``'s
      diagonal and no NaN; NaN/Inf in one matrix never reaches the others of the batch. The
      gradient of the ``'reduced'``, ``'complete'`` and ``'r'`` results is jnp's (it needs ``R``
      invertible, as jnp's does).
    """
    fname = "jax_batchla.linalg.qr"
    (a,) = _api.as_inexact_arrays(fname, a=a)
    if a.ndim < 2:
        raise ValueError(f"{fname}: argument a must have shape (..., M, N), got {a.shape}")
    if mode not in _QR_MODES:
        raise ValueError(f"{fname}: unsupported QR decomposition mode {mode!r}; expected one of "
                         f"{list(_QR_MODES)}")
    m, n = a.shape[-2:]
    if not _api.accelerated(a) or m < n:
        return jnp.linalg.qr(a, mode=mode)
    if mode == "raw":
        h, taus = geqrf(a)
        return _compat.QRResult(_api.mT(h), taus)
    if mode == "r":
        return qr_r(a)
    if mode == "complete" and m > n:
        return _compat.QRResult(*qr_complete(a))
    return _compat.QRResult(*_qr(a))


__all__ = ["cholesky", "solve", "inv", "det", "slogdet", "qr", "lstsq"] + _api.forward_missing(globals(), jnp.linalg, __name__)
