"""Batched Cholesky solvers on matrices kept in the interleaved (batch-fastest, chunked) layout.

For tiny matrices the standard layout ``(..., N, N)`` cannot be read coalesced by one GPU thread
per matrix. The interleaved layout groups the batch in chunks of ``c`` matrices (``c`` a multiple
of 32) and stores element ``(i, j)`` of the ``c`` matrices of a chunk side by side: an
:class:`Interleaved` holds ``data`` of shape ``(nchunks, rows, cols, c)``, matrix ``m`` of the
batch being ``data[m // c, :, :, m % c]``. Convert once with :func:`to_interleaved`, keep the data
in this layout across the steps of a program (e.g. a Kalman filter inside ``lax.scan``), and
convert back with :func:`from_interleaved`.

The functions mirror :func:`jax_batchla.linalg.cholesky` and :mod:`jax_batchla.scipy.linalg`'s
``cho_factor``, ``cho_solve``, ``solve(assume_a='pos')`` and ``solve_triangular``, with the same
semantics per matrix (NaN for a matrix that is not positive definite, its neighbours untouched),
on float32 and float64. Right-hand sides are either interleaved (same chunk and batch as the
matrix; the result is interleaved) or standard arrays of shape ``batch_shape + (N,)`` or
``batch_shape + (N, K)`` (the result is a standard array of that shape).

:class:`Interleaved` is a pytree with one array leaf, so it passes through ``jit``, ``vmap``
(the mapped axis comes in front of ``data``'s dims), ``grad`` and ``lax.scan``.
"""

from __future__ import annotations

import math
import operator

import jax
import jax.numpy as jnp
import numpy as np

from . import _ffi
from ._ops.interleaved import from_interleaved as _from_interleaved
from ._ops.interleaved import il_mT, il_posv, il_potrf, il_potrs, il_trsm

__all__ = ["Interleaved", "to_interleaved", "from_interleaved", "cholesky", "cho_factor",
           "cho_solve", "solve", "solve_triangular"]

CHUNK_MULTIPLE = 32  # a warp of matrices: every chunk fills whole warps
_FLOATS = (np.dtype(np.float32), np.dtype(np.float64))
_TRANS = {0: False, "N": False, 1: True, "T": True, 2: True, "C": True}


@jax.tree_util.register_pytree_node_class
class Interleaved:
    """A batch of matrices (or vectors) in the interleaved layout.

    Attributes:
      data: array of shape ``(*lead, nchunks, rows, cols, c)``; ``lead`` is empty except for the
        axes ``vmap`` maps over. Element ``(i, j)`` of matrix ``m`` is ``data[..., m // c, i, j,
        m % c]``; matrices past ``batch_size`` are padding.
      batch_shape: the batch shape of the standard-layout array it came from (static).
      vector: True when it holds vectors ``batch_shape + (rows,)``, stored with ``cols == 1``.
    """

    def __init__(self, data, batch_shape, vector: bool = False):
        self.data = data  # not validated: jax rebuilds pytrees with placeholder leaves
        self.batch_shape = tuple(int(d) for d in batch_shape)
        self.vector = bool(vector)

    def tree_flatten(self):
        return (self.data,), (self.batch_shape, self.vector)

    @classmethod
    def tree_unflatten(cls, aux, children):
        return cls(children[0], *aux)

    @property
    def rows(self) -> int:
        return self.data.shape[-3]

    @property
    def cols(self) -> int:
        return self.data.shape[-2]

    @property
    def chunk(self) -> int:
        """c: the matrices per chunk."""
        return self.data.shape[-1]

    @property
    def nchunks(self) -> int:
        return self.data.shape[-4]

    @property
    def dtype(self):
        return self.data.dtype

    @property
    def shape(self) -> tuple[int, ...]:
        """The shape of the standard-layout array it represents."""
        return self.batch_shape + ((self.rows,) if self.vector else (self.rows, self.cols))

    @property
    def batch_size(self) -> int:
        return math.prod(self.batch_shape)

    @property
    def padded_batch(self) -> int:
        return self.nchunks * self.chunk

    def __repr__(self):
        try:
            return (f"Interleaved(shape={self.shape}, dtype={self.dtype}, chunk={self.chunk}, "
                    f"padded_batch={self.padded_batch}, vector={self.vector})")
        except (AttributeError, IndexError, TypeError):  # a placeholder leaf inside a transform
            return f"Interleaved(data={self.data!r}, batch_shape={self.batch_shape}, vector={self.vector})"


def _float_array(fname: str, name: str, x):
    try:
        x = jnp.asarray(x)
    except TypeError as e:
        raise TypeError(f"{fname}: argument {name} is not an array: {e}") from None
    if x.dtype not in _FLOATS:
        raise TypeError(f"{fname}: argument {name} must be float32 or float64, got {x.dtype}")
    return x


def _chunk(fname: str, chunk, dtype, n: int) -> int:
    if chunk is None:
        return _ffi.il_default_chunk(dtype, n)
    try:
        c = operator.index(chunk)
    except TypeError:
        raise ValueError(f"{fname}: chunk must be a positive multiple of {CHUNK_MULTIPLE}, "
                         f"got {chunk!r}") from None
    if c <= 0 or c % CHUNK_MULTIPLE:
        raise ValueError(f"{fname}: chunk must be a positive multiple of {CHUNK_MULTIPLE}, got {c}")
    return c


def to_interleaved(a, chunk: int | None = None, *, vector: bool = False) -> Interleaved:
    """Convert a batch of matrices (or vectors) to the interleaved layout.

    Args:
      a: float32 or float64 array of shape ``(..., N, M)``, or ``(..., N)`` with ``vector=True``.
      chunk: matrices per chunk ``c``, a positive multiple of 32; by default the size the CUDA
        autotuner measured fastest for this ``N`` and dtype (32 without CUDA).
      vector: treat the last axis of ``a`` as vectors of length ``N`` (right-hand sides).

    Returns:
      :class:`Interleaved` with ``data`` of shape ``(ceil(B / c), N, M, c)`` (``M = 1`` for
      vectors), ``B`` the product of the batch dims. The batch is padded to a multiple of ``c``
      with identity matrices (square ``a``) or zeros, so padding factors and solves cleanly.
    """
    fname = "jax_batchla.interleaved.to_interleaved"
    a = _float_array(fname, "a", a)
    if a.ndim < (1 if vector else 2):
        want = "(..., N)" if vector else "(..., N, M)"
        raise ValueError(f"{fname}: argument a must have shape {want}, got {a.shape}")
    if vector:
        a = a[..., None]
    batch_shape, (rows, cols) = a.shape[:-2], a.shape[-2:]
    c = _chunk(fname, chunk, a.dtype, rows)
    count = math.prod(batch_shape)
    nchunks = -(-count // c)
    flat = a.reshape(count, rows, cols)
    pad = nchunks * c - count
    if pad:
        fill = jnp.eye(rows, dtype=a.dtype) if rows == cols and not vector else jnp.zeros((rows, cols), a.dtype)
        flat = jnp.concatenate([flat, jnp.broadcast_to(fill, (pad, rows, cols))])
    data = flat.reshape(nchunks, c, rows, cols).transpose(0, 2, 3, 1)
    return Interleaved(data, batch_shape, vector)


def _interleaved(fname: str, name: str, x) -> Interleaved:
    if not isinstance(x, Interleaved):
        raise TypeError(f"{fname}: argument {name} must be an Interleaved (see to_interleaved), "
                        f"got {type(x).__name__}")
    if jnp.ndim(x.data) < 4:
        raise ValueError(f"{fname}: argument {name} has data of shape {jnp.shape(x.data)}; expected "
                         "(..., nchunks, rows, cols, c)")
    return x


def from_interleaved(x: Interleaved):
    """Convert an :class:`Interleaved` back to the standard layout (an exact copy, no padding).

    Returns:
      array of shape ``x.shape`` (``batch_shape + (N, M)`` or ``batch_shape + (N,)``), with any
      leading axes that ``vmap`` added to ``x.data`` in front.
    """
    x = _interleaved("jax_batchla.interleaved.from_interleaved", "x", x)
    lead, rows, cols = x.data.shape[:-4], x.rows, x.cols
    if x.batch_size == x.padded_batch or x.dtype not in _FLOATS:
        # whole chunks: XLA's tiled transpose is as fast as our kernel and fuses into consumers
        flat = jnp.moveaxis(x.data, -1, -3).reshape(*lead, x.padded_batch, rows, cols)
    else:  # dropping the padding: our kernel (XLA's fused transpose + slice runs at half speed)
        flat = _from_interleaved(x.data, count=x.batch_size)
    out = flat.reshape(*lead, *x.batch_shape, rows, cols)
    return out[..., 0] if x.vector else out


def _square(fname: str, name: str, a) -> Interleaved:
    a = _interleaved(fname, name, a)
    if a.vector or a.rows != a.cols:
        raise ValueError(f"{fname}: argument {name} must hold square matrices (..., N, N), got "
                         f"shape {a.shape}")
    if a.dtype not in _FLOATS:
        raise TypeError(f"{fname}: argument {name} must be float32 or float64, got {a.dtype}")
    return a


def _rhs(fname: str, a: Interleaved, b):
    """(b's data in a's layout, a function from the solution's data to b's form)."""
    if isinstance(b, Interleaved):
        b = _interleaved(fname, "b", b)
        if (b.rows, b.chunk, b.data.shape[:-3], b.batch_shape) != (a.rows, a.chunk, a.data.shape[:-3],
                                                                    a.batch_shape):
            raise ValueError(f"{fname}: argument b (shape {b.shape}, data {b.data.shape}) must have "
                             f"{a.rows} rows and the batch, chunk and padding of a (shape {a.shape}, "
                             f"data {a.data.shape})")
        if b.dtype != a.dtype:
            raise TypeError(f"{fname}: argument b must have the dtype of a ({a.dtype}), got {b.dtype}")
        return b.data, lambda x: Interleaved(x, b.batch_shape, b.vector)
    b = _float_array(fname, "b", b)
    n, batch = a.rows, a.batch_shape
    vector = b.shape == batch + (n,)
    if not vector and not (b.ndim == len(batch) + 2 and b.shape[:-1] == batch + (n,)):
        raise ValueError(f"{fname}: argument b must have shape {batch + (n,)} or {batch + (n,)} + (K,) "
                         f"to match a of shape {a.shape}, got {b.shape}")
    if b.dtype != a.dtype:
        raise TypeError(f"{fname}: argument b must have the dtype of a ({a.dtype}), got {b.dtype}")
    if a.data.ndim != 4:
        raise ValueError(f"{fname}: a standard-layout b needs a with data (nchunks, N, N, c), got "
                         f"{a.data.shape}; pass b as an Interleaved")
    bi = to_interleaved(b, a.chunk, vector=vector)
    return bi.data, lambda x: from_interleaved(Interleaved(x, bi.batch_shape, vector))


def cholesky(a: Interleaved, *, upper: bool = False, symmetrize_input: bool = True) -> Interleaved:
    """Compute the Cholesky decomposition of interleaved positive-definite matrices.

    Mirrors :func:`jax_batchla.linalg.cholesky` in the interleaved layout.

    Args:
      a: :class:`Interleaved` of symmetric positive-definite matrices ``(..., N, N)``.
      upper: if True return ``U`` with ``a = U^T U``, else ``L`` with ``a = L L^T``.
      symmetrize_input: if True (default) factor ``(a + a^T) / 2``; if False only the lower
        triangle of ``a`` is read.

    Returns:
      :class:`Interleaved` like ``a``: the triangular factor, zeros in the other triangle. A
      matrix that is not positive definite (or holds NaN/Inf) gets NaN in its factor's triangle;
      the other matrices are unaffected.
    """
    a = _square("jax_batchla.interleaved.cholesky", "a", a)
    l, _ = il_potrf(a.data, symmetrize=bool(symmetrize_input))
    return Interleaved(il_mT(l) if upper else l, a.batch_shape)


def cho_factor(a: Interleaved, lower: bool = False):
    """Cholesky factorization for :func:`cho_solve`; mirrors
    :func:`jax_batchla.scipy.linalg.cho_factor` in the interleaved layout.

    Only the ``lower`` (or upper) triangle of ``a`` is read.

    Returns:
      ``(c, lower)``: ``c`` an :class:`Interleaved` holding the factor in that triangle and zeros
      in the other (NaN in the triangle for a matrix that is not positive definite).
    """
    a = _square("jax_batchla.interleaved.cho_factor", "a", a)
    l, _ = il_potrf(a.data if lower else il_mT(a.data))
    return Interleaved(l if lower else il_mT(l), a.batch_shape), lower


def cho_solve(c_and_lower, b):
    """Solve ``a x = b`` given the Cholesky factor of ``a``, in the interleaved layout; mirrors
    :func:`jax_batchla.scipy.linalg.cho_solve`.

    Args:
      c_and_lower: ``(c, lower)`` as returned by :func:`cho_factor`; only the ``lower`` (or upper)
        triangle of the :class:`Interleaved` ``c`` (``(..., N, N)``) is read.
      b: :class:`Interleaved` with ``c``'s chunk and batch, or an array of shape
        ``batch_shape + (N,)`` or ``batch_shape + (N, K)``.

    Returns:
      the solution in ``b``'s form (interleaved or standard, same shape).
    """
    fname = "jax_batchla.interleaved.cho_solve"
    c, lower = c_and_lower
    c = _square(fname, "c", c)
    b_data, finish = _rhs(fname, c, b)
    return finish(il_potrs(c.data, b_data, lower=bool(lower)))


def solve(a: Interleaved, b, *, lower: bool = False, assume_a: str = "pos"):
    """Solve ``a x = b`` for symmetric positive-definite interleaved ``a``; mirrors
    :func:`jax_batchla.scipy.linalg.solve` with ``assume_a='pos'`` (one fused factor + solve).

    Args:
      a: :class:`Interleaved` ``(..., N, N)``; only its ``lower`` (or upper) triangle is read.
      b: :class:`Interleaved` with ``a``'s chunk and batch, or an array of shape
        ``batch_shape + (N,)`` or ``batch_shape + (N, K)``.
      lower: which triangle of ``a`` to read.
      assume_a: only ``'pos'`` is supported in the interleaved layout.

    Returns:
      the solution in ``b``'s form; NaN for a matrix that is not positive definite, the others
      unaffected.
    """
    fname = "jax_batchla.interleaved.solve"
    if assume_a != "pos":
        raise ValueError(f"{fname}: only assume_a='pos' is supported in the interleaved layout, "
                         f"got {assume_a!r}")
    a = _square(fname, "a", a)
    b_data, finish = _rhs(fname, a, b)
    x, _ = il_posv(a.data, b_data, lower=bool(lower))
    return finish(x)


def solve_triangular(a: Interleaved, b, trans=0, lower: bool = False, unit_diagonal: bool = False):
    """Solve ``op(a) x = b`` for triangular interleaved ``a``; mirrors
    :func:`jax_batchla.scipy.linalg.solve_triangular`.

    Args:
      a: :class:`Interleaved` ``(..., N, N)``; only its ``lower`` (or upper) triangle is read.
      b: :class:`Interleaved` with ``a``'s chunk and batch, or an array of shape
        ``batch_shape + (N,)`` or ``batch_shape + (N, K)``.
      trans: 0/``'N'`` solves ``a x = b``; 1/``'T'`` and 2/``'C'`` solve ``a^T x = b``.
      lower: use the lower triangle of ``a`` if True, else the upper.
      unit_diagonal: treat the diagonal of ``a`` as ones (it is not read).

    Returns:
      the solution in ``b``'s form. A zero on the diagonal gives inf/NaN in that matrix's
      solution only.
    """
    fname = "jax_batchla.interleaved.solve_triangular"
    if trans not in _TRANS:
        raise ValueError(f"{fname}: invalid 'trans' value {trans!r}")
    a = _square(fname, "a", a)
    b_data, finish = _rhs(fname, a, b)
    return finish(il_trsm(a.data, b_data, lower=bool(lower), trans=_TRANS[trans],
                          unit_diag=bool(unit_diagonal)))
