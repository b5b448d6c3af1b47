"""Drop-in mirror of :mod:`jax.numpy.linalg` backed by jax_batchla's batched kernels.

Every public name of ``jax.numpy.linalg`` exists here. Functions we accelerate run our own
primitives (CUDA kernels on GPU, C++ handlers on CPU); the others forward to jax and say so in
their docstrings, so swapping ``import jax.numpy.linalg`` for this module never breaks a program.
"""

from __future__ import annotations

import jax.numpy as jnp

from . import _api
from ._ops import potrf


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


__all__ = ["cholesky"] + _api.forward_missing(globals(), jnp.linalg, __name__)
