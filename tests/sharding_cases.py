"""The table of the sharding check (sharding_check.py): one entry per public function we accelerate
(and per option that picks another kernel), the gradients built on our primitives, and the inputs
they run on. Every input has the batch in its leading axis, the axis the check shards."""

from __future__ import annotations

from typing import Callable, NamedTuple

import jax
import jax.scipy.linalg as jsl
import numpy as np

import jax_batchla.interleaved as il
import jax_batchla.linalg as bla
import jax_batchla.scipy.linalg as bsl

N = 6  # det needs N >= 4: 2x2 and 3x3 keep jnp's closed forms, no custom call
TALL = (8, 6)  # (M, N) of the QR family and lstsq; even, so rows and columns can be split in two
IL_N, IL_CHUNK = 5, 32


class Case(NamedTuple):
    name: str
    fn: Callable
    inputs: tuple[str, ...]  # keys of inputs(); all are sharded along their leading axis
    # lstsq decides "every matrix has full column rank" once for the whole batch (one lax.cond,
    # jax_batchla/_lstsq.py): under batch sharding the partitioner must combine the shards' answers,
    # so an all-reduce of that one scalar predicate is inherent. Only that is allowed, nothing larger.
    scalar_all_reduce: bool = False


def _vjp(f, nargs: int):
    """The pullback of `f` (of `nargs` primal inputs) applied to a cotangent, as one function of
    (*primals, cotangent): no sum over the batch, so the gradient itself must stay per shard."""
    return lambda *args: jax.vjp(f, *args[:nargs])[1](args[nargs])


def _jvp(f):
    return lambda x, dx: jax.jvp(f, (x,), (dx,))[1]


def _il(data):
    """Our interleaved matrices from their sharded data (nchunks, rows, cols, chunk)."""
    return il.Interleaved(data, (data.shape[0] * data.shape[-1],))


CASES = [
    # jax_batchla.linalg
    Case("cholesky", bla.cholesky, ("spd",)),
    Case("cholesky_upper", lambda a: bla.cholesky(a, upper=True), ("spd",)),
    Case("solve", bla.solve, ("gen", "rhs")),
    Case("inv", bla.inv, ("gen",)),
    Case("det", bla.det, ("gen",)),
    Case("slogdet", bla.slogdet, ("gen",)),
    Case("qr_reduced", bla.qr, ("tall",)),
    Case("qr_complete", lambda a: bla.qr(a, mode="complete"), ("tall",)),
    Case("qr_r", lambda a: bla.qr(a, mode="r"), ("tall",)),
    Case("qr_raw", lambda a: bla.qr(a, mode="raw"), ("tall",)),
    Case("lstsq", bla.lstsq, ("tall", "tall_rhs"), scalar_all_reduce=True),
    # jax_batchla.scipy.linalg
    Case("sp_cholesky", bsl.cholesky, ("spd",)),
    Case("sp_cholesky_lower", lambda a: bsl.cholesky(a, lower=True), ("spd",)),
    Case("cho_factor", lambda a: bsl.cho_factor(a)[0], ("spd",)),
    Case("cho_solve_lower", lambda c, b: bsl.cho_solve((c, True), b), ("lower", "rhs")),
    Case("cho_solve_upper", lambda c, b: bsl.cho_solve((c, False), b), ("upper", "rhs")),
    Case("solve_triangular_n", lambda a, b: bsl.solve_triangular(a, b, lower=True), ("lower", "rhs")),
    Case("solve_triangular_t", lambda a, b: bsl.solve_triangular(a, b, trans=1, lower=True),
         ("lower", "rhs")),
    Case("solve_triangular_c", lambda a, b: bsl.solve_triangular(a, b, trans=2), ("upper", "rhs")),
    Case("solve_triangular_unit", lambda a, b: bsl.solve_triangular(a, b, unit_diagonal=True),
         ("upper", "rhs")),
    Case("sp_solve_gen", bsl.solve, ("gen", "rhs")),
    Case("sp_solve_sym", lambda a, b: bsl.solve(a, b, assume_a="sym"), ("sym", "rhs")),
    Case("sp_solve_her", lambda a, b: bsl.solve(a, b, assume_a="her"), ("sym", "rhs")),
    Case("sp_solve_pos", lambda a, b: bsl.solve(a, b, assume_a="pos"), ("spd", "rhs")),
    Case("sp_inv", bsl.inv, ("gen",)),
    Case("sp_det", bsl.det, ("gen",)),
    Case("lu", bsl.lu, ("gen",)),
    Case("lu_permute_l", lambda a: bsl.lu(a, permute_l=True), ("gen",)),
    Case("lu_factor", bsl.lu_factor, ("gen",)),
    Case("lu_solve", lambda lu, piv, b: bsl.lu_solve((lu, piv), b), ("lu", "piv", "rhs")),
    Case("lu_solve_t", lambda lu, piv, b: bsl.lu_solve((lu, piv), b, trans=1), ("lu", "piv", "rhs")),
    Case("sp_qr_full", bsl.qr, ("tall",)),
    Case("sp_qr_economic", lambda a: bsl.qr(a, mode="economic"), ("tall",)),
    Case("sp_qr_r", lambda a: bsl.qr(a, mode="r"), ("tall",)),
    # jax_batchla.interleaved: the data (nchunks, rows, cols, chunk) sharded along its chunks
    Case("il_cholesky", lambda a: il.cholesky(_il(a)).data, ("il_spd",)),
    Case("il_cholesky_upper", lambda a: il.cholesky(_il(a), upper=True).data, ("il_spd",)),
    Case("il_cho_factor", lambda a: il.cho_factor(_il(a))[0].data, ("il_spd",)),
    Case("il_cho_solve", lambda c, b: il.cho_solve((_il(c), True), _il(b)).data, ("il_lower", "il_rhs")),
    Case("il_solve", lambda a, b: il.solve(_il(a), _il(b)).data, ("il_spd", "il_rhs")),
    Case("il_solve_std_rhs", lambda a, b: il.solve(_il(a), b), ("il_spd", "il_std_rhs")),  # relayout inside
    Case("il_solve_triangular", lambda a, b: il.solve_triangular(_il(a), _il(b), lower=True).data,
         ("il_lower", "il_rhs")),
    Case("il_solve_triangular_t",
         lambda a, b: il.solve_triangular(_il(a), _il(b), trans=1, lower=True).data,
         ("il_lower", "il_rhs")),
    # derivatives: the JVP rules and their transposes run our primitives too
    Case("vjp_cholesky", _vjp(bla.cholesky, 1), ("spd", "ct_square")),
    Case("jvp_cholesky", _jvp(bla.cholesky), ("spd", "ct_square")),
    Case("vjp_solve", _vjp(bla.solve, 2), ("gen", "rhs", "ct_rhs")),
    Case("vjp_sp_solve_pos", _vjp(lambda a, b: bsl.solve(a, b, assume_a="pos"), 2),
         ("spd", "rhs", "ct_rhs")),
    Case("vjp_inv", _vjp(bla.inv, 1), ("gen", "ct_square")),
    Case("vjp_slogdet", _vjp(lambda a: bla.slogdet(a).logabsdet, 1), ("gen", "ct_batch")),
    Case("vjp_lu_solve",  # the integer pivots are closed over: not differentiated
         lambda lu, piv, b, ct: _vjp(lambda lu, b: bsl.lu_solve((lu, piv), b), 2)(lu, b, ct),
         ("lu", "piv", "rhs", "ct_rhs")),
    Case("vjp_qr_r", _vjp(lambda a: bla.qr(a, mode="r"), 1), ("tall", "ct_square")),
    Case("vjp_lstsq", _vjp(lambda a, b: bla.lstsq(a, b)[0], 2), ("tall", "tall_rhs", "ct_rhs"),
         scalar_all_reduce=True),
    Case("vjp_il_cholesky", _vjp(lambda a: il.cholesky(_il(a)).data, 1), ("il_spd", "il_ct")),
]

# Every case runs in float64; these also in float32 (one per kernel family: the kernels and the
# partitioning rules are the same per dtype, and CI's time is short).
FLOAT32 = ("cholesky", "cho_solve_lower", "solve_triangular_t", "sp_solve_pos", "solve", "inv",
           "slogdet", "lu_factor", "lu_solve", "qr_reduced", "lstsq", "il_solve", "vjp_cholesky")
# Matrices split along their rows and/or columns (not the batch), in float64: correct results,
# collectives allowed. The representative set covers each kernel family once.
NON_BATCH = ("cholesky", "solve", "inv", "lu_factor", "qr_reduced", "cho_solve_lower", "lstsq")
assert set(FLOAT32 + NON_BATCH) <= {case.name for case in CASES}


def inputs(batch: int, nchunks: int, seed: int = 0) -> dict[str, np.ndarray]:
    """Every input of the table as float64 NumPy arrays (pivots int32): `batch` matrices in the
    standard layout, `nchunks` * IL_CHUNK in the interleaved one."""
    rng = np.random.default_rng(seed)
    eye = np.eye(N)

    def spd(shape):
        g = rng.standard_normal(shape)
        return g @ np.swapaxes(g, -1, -2) + shape[-1] * np.eye(shape[-1])

    x = {"spd": spd((batch, N, N)), "gen": rng.standard_normal((batch, N, N)) + 4 * eye,
         "rhs": rng.standard_normal((batch, N, 2)), "tall": rng.standard_normal((batch, *TALL)),
         "tall_rhs": rng.standard_normal((batch, TALL[0], 2))}
    x["lower"] = np.linalg.cholesky(x["spd"])
    x["upper"] = np.swapaxes(x["lower"], -1, -2)
    x["sym"] = (x["gen"] + np.swapaxes(x["gen"], -1, -2)) / 2
    lu, piv = jsl.lu_factor(x["gen"])
    x["lu"], x["piv"] = np.asarray(lu), np.asarray(piv, np.int32)
    x.update(ct_square=rng.standard_normal((batch, N, N)), ct_rhs=rng.standard_normal((batch, N, 2)),
             ct_batch=rng.standard_normal(batch))
    n_il = nchunks * IL_CHUNK
    a_il = il.to_interleaved(spd((n_il, IL_N, IL_N)), IL_CHUNK)
    x["il_spd"] = np.asarray(a_il.data)
    x["il_lower"] = np.asarray(il.cholesky(a_il).data)
    x["il_std_rhs"] = rng.standard_normal((n_il, IL_N, 3))
    x["il_rhs"] = np.asarray(il.to_interleaved(x["il_std_rhs"], IL_CHUNK).data)
    x["il_ct"] = rng.standard_normal(x["il_spd"].shape)
    return x
