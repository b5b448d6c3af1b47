"""The benchmark op table: one entry per op, nothing else is op-specific.

Each entry says which inputs the op takes (drawn from the per-(dtype, n) input set made by
`make_inputs`), the bytes it must move and the flops it must do per matrix, and how each library
calls it. Inputs: `A` SPD (batch, n, n); `L` its lower Cholesky factor; `G` general
(nonsymmetric, well conditioned, pivoting needed); `b` a one-column rhs (batch, n, 1). All arrays are row-major JAX arrays; torch sees the same buffers through DLPack.
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
    jnp: Callable                           # (*args) -> array; also the reference for max_rel_err
    torch: Callable | None                  # (torch module, *args as tensors) -> tensor


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
]}


@functools.partial(jax.jit, static_argnums=(1, 2, 3))
def _make_inputs(key, batch: int, n: int, dtype):
    """SPD A = B Bᵀ/n + I (eigenvalues in about [1, 5]), L = chol(A), b ~ N(0, 1); general
    G = the rows of C/sqrt(n) + 2 I in reverse order (C ~ N(0, 1): singular values near 2, so well
    conditioned; the reversal puts each column's largest entry off the diagonal: pivoting swaps)."""
    kb, kr, kg = jax.random.split(key, 3)
    b_mat = jax.random.normal(kb, (batch, n, n), dtype)
    a = jnp.einsum("bij,bkj->bik", b_mat, b_mat, precision="highest") / n + jnp.eye(n, dtype=dtype)
    a = (a + jnp.swapaxes(a, -1, -2)) / 2                # exactly symmetric
    g = jax.random.normal(kg, (batch, n, n), dtype) / jnp.sqrt(jnp.asarray(n, dtype)) + 2 * jnp.eye(n, dtype=dtype)
    g = g[:, ::-1, :]
    return {"A": a, "L": jnp.linalg.cholesky(a), "G": g, "b": jax.random.normal(kr, (batch, n, 1), dtype)}


def make_inputs(batch: int, n: int, dtype, seed: int = 0) -> dict[str, jax.Array]:
    """Built on the device, once per (dtype, n); not timed."""
    return jax.block_until_ready(_make_inputs(jax.random.key(seed), batch, n, jnp.dtype(dtype)))


class JnpStandIn:
    """Stands in for jax_batchla (`--ours jnp`): the same public names, implemented by jax itself."""
    linalg = jnp.linalg

    class scipy:  # noqa: N801  (mirrors the module path jax_batchla.scipy.linalg)
        linalg = jsl
