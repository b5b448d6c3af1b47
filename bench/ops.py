"""The benchmark op table: one entry per op, nothing else is op-specific.

Each entry says which inputs the op takes (drawn from the per-(dtype, n) input set made by
`make_inputs`), the bytes it must move and the flops it must do per matrix, and how each library
calls it. Inputs: `A` SPD (batch, n, n); `L` its lower Cholesky factor; `G` general
(nonsymmetric, well conditioned, pivoting needed); `b` a one-column rhs (batch, n, 1); `T` tall
full-rank (batch_t, tall_rows(n), n) with its one-column rhs `bT` (batch_t, tall_rows(n), 1). An
op's batch is its first input's leading dim. All arrays are row-major JAX arrays; torch sees the
same buffers through DLPack.

Interleaved-layout ops (issue 6, prefix `il_`, and the conversions) take the same inputs, but
`ours_inputs` converts them to `jax_batchla.interleaved.Interleaved` once, outside the timed call,
and `ours_output` brings our result back to the standard layout for the check. Their `standard`
names the standard-layout op whose `ours` runs as the extra library "ours_standard".
"""
from __future__ import annotations

import dataclasses
import functools
from typing import Callable

import jax
import jax.numpy as jnp
import jax.scipy.linalg as jsl


@dataclasses.dataclass(frozen=True)
class Op:
    name: str
    args: tuple[str, ...]                  # keys into the input dict, in call order
    bytes_per_matrix: Callable[[int], int]  # times itemsize: minimal traffic (read inputs + write output)
    flops_per_matrix: Callable[[int], float]
    ours: Callable                          # (jax_batchla module, *args) -> array
    jnp: Callable | None                    # (*args) -> array; also the reference for max_rel_err
    torch: Callable | None                  # (torch module, *args as tensors) -> tensor
    # Interleaved ops only: (module, *args) -> ours' args, made once and not timed
    ours_inputs: Callable | None = None
    # (module, ours' output) -> the standard-layout arrays to check against the reference
    ours_output: Callable | None = None
    standard: str | None = None             # op whose `ours` is timed as "ours_standard"
    # (*args) -> the reference when there is no jnp peer (conversions: the input itself)
    reference: Callable | None = None


def tall_rows(n: int) -> int:
    """Rows of the tall least-squares input for n columns: 8n, capped where the QR kernels stop."""
    return min(8 * n, 4096)


# The SVD-based jnp lstsq runs cuSOLVER's SVD one matrix at a time once m > 32 (jaxlib's gesvdj
# handler batches only up to 32 x 32): a loop of 0.1-1 ms per matrix, timed at least 7 times per
# case. So the tall batch gets a share of --bytes (64 MiB by default, above the H200's 50 MB L2)
# and, where jnp loops, at most TALL_LOOP_MAX_BATCH matrices, to keep a full run within minutes.
TALL_BYTES_SHARE = 4
TALL_LOOP_MAX_BATCH = 2048


def _geqrf_flops(m: int, n: int) -> float:
    return 2 * m * n * n - 2 * n ** 3 / 3


def _batched_jnp_lstsq(a, b):
    """jnp.linalg.lstsq takes one matrix: map it over the batch (what a user writes today)."""
    return jax.vmap(jnp.linalg.lstsq)(a, b)


def _il_args(m, a, *rest):
    """a (and a rhs) in the interleaved layout: a's default chunk, the rhs following a's."""
    ai = m.interleaved.to_interleaved(a)
    return (ai, *(m.interleaved.to_interleaved(r, ai.chunk) for r in rest))


def _il_std(m, x):
    return m.interleaved.from_interleaved(x)


def _il_op(name: str, standard: Op, ours: Callable) -> Op:
    """An interleaved op on the inputs, bytes, flops and peers of `standard` (ours: on Interleaved)."""
    return dataclasses.replace(standard, name=name, ours=ours, ours_inputs=_il_args,
                               ours_output=_il_std, standard=standard.name)


def _conversion(name: str, ours: Callable, to_layout: bool) -> Op:
    """to/from_interleaved of A: read + write of the matrices, checked exactly against A itself."""
    return Op(name, ("A",),
              bytes_per_matrix=lambda n: 2 * n * n,
              flops_per_matrix=lambda n: 0.0,
              ours=ours, jnp=None, torch=None,
              ours_inputs=None if to_layout else _il_args,
              ours_output=_il_std if to_layout else None,
              reference=lambda a: a)


OPS: dict[str, Op] = {op.name: op for op in [
    Op("cholesky", ("A",),
       bytes_per_matrix=lambda n: 2 * n * n,            # read A, write L
       flops_per_matrix=lambda n: n ** 3 / 3,
       ours=lambda m, a: m.linalg.cholesky(a),
       jnp=lambda a: jnp.linalg.cholesky(a),
       # *_ex skips torch's error check (a host sync); jnp does not check either.
       torch=lambda t, a: t.linalg.cholesky_ex(a, check_errors=False).L),
    Op("cho_solve", ("L", "b"),
       bytes_per_matrix=lambda n: n * n + 2 * n,        # read L and b, write x
       flops_per_matrix=lambda n: 2 * n * n,
       ours=lambda m, c, b: m.scipy.linalg.cho_solve((c, True), b),
       jnp=lambda c, b: jsl.cho_solve((c, True), b),
       torch=lambda t, c, b: t.cholesky_solve(b, c, upper=False)),
    Op("solve_triangular", ("L", "b"),
       bytes_per_matrix=lambda n: n * n + 2 * n,
       flops_per_matrix=lambda n: n * n,
       ours=lambda m, c, b: m.scipy.linalg.solve_triangular(c, b, lower=True),
       jnp=lambda c, b: jsl.solve_triangular(c, b, lower=True),
       torch=lambda t, c, b: t.linalg.solve_triangular(c, b, upper=False)),
    Op("posv", ("A", "b"),
       bytes_per_matrix=lambda n: n * n + 2 * n,        # read A and b, write x
       flops_per_matrix=lambda n: n ** 3 / 3 + 2 * n * n,
       ours=lambda m, a, b: m.scipy.linalg.solve(a, b, assume_a="pos"),
       jnp=lambda a, b: jnp.linalg.solve(a, b),        # what users call today (LU)
       torch=lambda t, a, b: t.linalg.solve_ex(a, b, check_errors=False).result),
    Op("lu", ("G",),
       bytes_per_matrix=lambda n: 2 * n * n + n,        # read G, write LU and the pivots
       flops_per_matrix=lambda n: 2 * n ** 3 / 3,
       ours=lambda m, g: m.scipy.linalg.lu_factor(g)[0],
       jnp=lambda g: jsl.lu_factor(g)[0],
       torch=lambda t, g: t.linalg.lu_factor_ex(g, check_errors=False).LU),
    Op("solve", ("G", "b"),
       bytes_per_matrix=lambda n: n * n + 2 * n,        # read G and b, write x
       flops_per_matrix=lambda n: 2 * n ** 3 / 3 + 2 * n * n,
       ours=lambda m, g, b: m.linalg.solve(g, b),
       jnp=lambda g, b: jnp.linalg.solve(g, b),
       torch=lambda t, g, b: t.linalg.solve_ex(g, b, check_errors=False).result),
    Op("inv", ("G",),
       bytes_per_matrix=lambda n: 2 * n * n,            # read G, write its inverse
       flops_per_matrix=lambda n: 2 * n ** 3,
       ours=lambda m, g: m.linalg.inv(g),
       jnp=lambda g: jnp.linalg.inv(g),
       torch=lambda t, g: t.linalg.inv_ex(g, check_errors=False).inverse),
    Op("det", ("G",),
       bytes_per_matrix=lambda n: n * n + 1,            # read G, write one number
       flops_per_matrix=lambda n: 2 * n ** 3 / 3,
       ours=lambda m, g: m.linalg.det(g),
       jnp=lambda g: jnp.linalg.det(g),
       torch=lambda t, g: t.linalg.det(g)),
    Op("qr_r", ("G",),
       bytes_per_matrix=lambda n: 2 * n * n,            # read G, write R
       flops_per_matrix=lambda n: _geqrf_flops(n, n),
       ours=lambda m, g: m.linalg.qr(g, mode="r"),
       jnp=lambda g: jnp.linalg.qr(g, mode="r"),
       torch=lambda t, g: t.linalg.qr(g, mode="r").R),
    Op("qr", ("G",),
       bytes_per_matrix=lambda n: 3 * n * n,            # read G, write Q and R
       flops_per_matrix=lambda n: 2 * _geqrf_flops(n, n),  # geqrf + orgqr
       ours=lambda m, g: tuple(m.linalg.qr(g)),
       jnp=lambda g: tuple(jnp.linalg.qr(g)),
       # torch's batched reduced QR on CUDA loops over the matrices (0.2-3 GB/s at n = 32..128,
       # bench/NOTES.md): minutes per case at 256 MiB, so it is left out (no target needs it)
       torch=None),
    Op("lstsq", ("T", "bT"),                            # tall: m = tall_rows(n), one rhs column
       bytes_per_matrix=lambda n: tall_rows(n) * (n + 1) + n,   # read T and bT, write x
       flops_per_matrix=lambda n: _geqrf_flops(tall_rows(n), n) + 4 * tall_rows(n) * n + n * n,
       ours=lambda m, a, b: m.linalg.lstsq(a, b)[0],
       jnp=lambda a, b: _batched_jnp_lstsq(a, b)[0],
       # CUDA torch has only the 'gels' driver (QR, full rank assumed): the fair peer here
       torch=lambda t, a, b: t.linalg.lstsq(a, b).solution),
]}

OPS.update({op.name: op for op in [   # issue 6: the interleaved layout
    _il_op("il_potrf", OPS["cholesky"], lambda m, a: m.interleaved.cholesky(a)),
    _il_op("il_potrs", OPS["cho_solve"], lambda m, c, b: m.interleaved.cho_solve((c, True), b)),
    _il_op("il_posv", OPS["posv"], lambda m, a, b: m.interleaved.solve(a, b, assume_a="pos")),
    _conversion("to_interleaved", lambda m, a: m.interleaved.to_interleaved(a), to_layout=True),
    _conversion("from_interleaved", lambda m, x: m.interleaved.from_interleaved(x), to_layout=False),
]})
# --ops accepts these names for their ops; "standard" is the default run
_INTERLEAVED = ("il_potrf", "il_potrs", "il_posv", "to_interleaved", "from_interleaved")
OP_GROUPS = {"standard": tuple(name for name in OPS if name not in _INTERLEAVED),
             "interleaved": _INTERLEAVED}


@functools.partial(jax.jit, static_argnums=(1, 2, 3))
def _make_inputs(key, batch: int, n: int, dtype):
    """SPD A = B Bᵀ/n + I (eigenvalues in about [1, 5]), L = chol(A), b ~ N(0, 1); general
    G = the rows of C/sqrt(n) + 2 I in reverse order (C ~ N(0, 1): singular values near 2, so well
    conditioned; the reversal puts each column's largest entry off the diagonal: pivoting swaps);
    the tall T and bT of `_tall_inputs`."""
    kb, kr, kg, kt = jax.random.split(key, 4)
    b_mat = jax.random.normal(kb, (batch, n, n), dtype)
    a = jnp.einsum("bij,bkj->bik", b_mat, b_mat, precision="highest") / n + jnp.eye(n, dtype=dtype)
    a = (a + jnp.swapaxes(a, -1, -2)) / 2                # exactly symmetric
    g = jax.random.normal(kg, (batch, n, n), dtype) / jnp.sqrt(jnp.asarray(n, dtype)) + 2 * jnp.eye(n, dtype=dtype)
    g = g[:, ::-1, :]
    return {"A": a, "L": jnp.linalg.cholesky(a), "G": g, "b": jax.random.normal(kr, (batch, n, 1), dtype),
            **_tall_inputs(kt, batch, n, dtype)}


def _tall_inputs(key, batch: int, n: int, dtype):
    """T: tall (tall_rows(n), n) with N(0, 1/m) entries, so its singular values lie in about
    [1 - sqrt(n/m), 1 + sqrt(n/m)] = [0.65, 1.35] (full rank, well conditioned), and a rhs bT;
    batch_t holds the bytes of batch n x n matrices / TALL_BYTES_SHARE, capped where jnp loops."""
    m = tall_rows(n)
    batch_t = max(1, batch * n * n // (m * n * TALL_BYTES_SHARE))
    if m > 32:
        batch_t = min(batch_t, TALL_LOOP_MAX_BATCH)
    ka, kb = jax.random.split(key)
    t = jax.random.normal(ka, (batch_t, m, n), dtype) / jnp.sqrt(jnp.asarray(m, dtype))
    return {"T": t, "bT": jax.random.normal(kb, (batch_t, m, 1), dtype)}


def make_inputs(batch: int, n: int, dtype, seed: int = 0) -> dict[str, jax.Array]:
    """Built on the device, once per (dtype, n); not timed."""
    return jax.block_until_ready(_make_inputs(jax.random.key(seed), batch, n, jnp.dtype(dtype)))


class _JnpLinalg:
    """jnp.linalg with lstsq mapped over leading batch dims, as jax_batchla.linalg.lstsq takes them."""
    lstsq = staticmethod(_batched_jnp_lstsq)

    def __getattr__(self, name):
        return getattr(jnp.linalg, name)


class JnpStandIn:
    """Stands in for jax_batchla (`--ours jnp`): the same public names, implemented by jax itself."""
    linalg = _JnpLinalg()

    class scipy:  # noqa: N801  (mirrors the module path jax_batchla.scipy.linalg)
        linalg = jsl
