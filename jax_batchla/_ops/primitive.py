"""One factory for every batched linear-algebra primitive of the package.

Each op is declared once as an `OpSpec` (its FFI target, shape rule, reference algorithm); the
factory registers the abstract eval, the eager impl, the vmap rule and one lowering per platform:
"cuda" -> our CUDA kernel, "cpu" -> our C++ handler, any other platform -> the pure-jnp reference.
JVP and transpose rules are op specific and live next to each op.

Operands share their leading batch dims exactly (the public layer broadcasts), so the vmap rule
only has to move the mapped axis to the front: one call, no loop. The batch dims are all but the
last `core_rank` dims of each operand: 2 for the standard layout (..., rows, cols), 3 for the
interleaved layout (..., rows, cols, c) of jax_batchla.interleaved.
"""

from __future__ import annotations

import dataclasses
from functools import partial
from typing import Callable

import jax
import jax.numpy as jnp
from jax.extend.core import Primitive
from jax.interpreters import batching, mlir

from .. import _compat, _ffi

FLOAT_DTYPES = (jnp.dtype(jnp.float32), jnp.dtype(jnp.float64))


@dataclasses.dataclass(frozen=True)
class OpSpec:
    name: str  # primitive and FFI target name
    operands: tuple[str, ...]  # operand names, for error messages
    shape_rule: Callable  # (*avals, **params) -> tuple of jax.core.ShapedArray (results)
    reference: Callable  # pure-jnp implementation with the kernel's exact semantics
    multiple_results: bool = False
    # vmap with only the last operand (the rhs, (..., n, k) or interleaved (..., n, k, c)) batched
    # folds the mapped axis into its columns: one call on the unbatched matrix, no copies of it
    fold_rhs_batch: bool = False
    # operands that are int32 per-matrix vectors (..., n) (a permutation), not float matrices
    index_operands: tuple[str, ...] = ()
    # operands that are float per-matrix vectors (..., k) of the matrices' dtype (QR's taus)
    vector_operands: tuple[str, ...] = ()
    cuda_lowering: Callable | None = None  # replaces the plain FFI lowering on CUDA
    core_rank: int = 2  # trailing dims of one operand that are not batch dims (3: interleaved)


def check_matrix_operands(name: str, operands: tuple[str, ...], *avals, index_operands=(),
                          vector_operands=(), core_rank=2):
    """Internal consistency checks shared by all ops (the public API reports user errors first).
    The first operand is a matrix; it fixes the batch dims (and dtype) the others must share.
    Matrix operands have `core_rank` trailing non-batch dims."""
    batch = None
    for what, aval in zip(operands, avals):
        if what in index_operands:
            if aval.dtype != jnp.int32 or aval.ndim < 1 or aval.shape[:-1] != batch:
                raise TypeError(f"{name}: {what} must be int32 of shape {batch} + (n,), got "
                                f"{aval.dtype}{list(aval.shape)}")
            continue
        if what in vector_operands:
            if aval.dtype != dtype or aval.ndim < 1 or aval.shape[:-1] != batch:
                raise TypeError(f"{name}: {what} must be {dtype} of shape {batch} + (k,), got "
                                f"{aval.dtype}{list(aval.shape)}")
            continue
        if aval.dtype not in FLOAT_DTYPES:
            raise TypeError(f"{name}: {what} must be float32 or float64, got {aval.dtype}")
        if aval.ndim < core_rank:
            raise ValueError(f"{name}: {what} must have rank >= {core_rank}, got shape {aval.shape}")
        if batch is None:
            batch, dtype = aval.shape[:-core_rank], aval.dtype
        elif aval.shape[:-core_rank] != batch or aval.dtype != dtype:
            raise ValueError(
                f"{name}: {what} {aval.dtype}{list(aval.shape)} does not match the batch dims "
                f"{batch} and dtype {dtype} of {operands[0]}")
    return batch


def ffi_lowering(target: str, core_rank: int = 2):
    """Lowering to an FFI custom call that XLA may split along the batch dims (all but the last
    `core_rank` dims of the first operand) when sharded."""

    def rule(ctx, *args, **params):
        if _compat.fully_manual(ctx.module_context):  # inside shard_map: a per-device call
            return jax.ffi.ffi_lowering(target + _ffi.MANUAL_SUFFIX)(ctx, *args, **params)
        num_batch_dims = len(ctx.avals_in[0].shape) - core_rank
        extra = {"mhlo.frontend_attributes": mlir.ir_attribute({"num_batch_dims": str(num_batch_dims)})}
        if _compat.shardy_enabled():
            sdy = _compat.sdy_batch_rule(ctx.module_context, num_batch_dims, ctx.avals_in, ctx.avals_out)
            if sdy is not None:
                extra["sdy.sharding_rule"] = sdy
        return jax.ffi.ffi_lowering(target, extra_attributes=extra)(ctx, *args, **params)

    return rule


def conditional_cuda_lowering(target: str, fits: Callable, fallback: Callable, core_rank: int = 2):
    """The CUDA lowering of an op whose kernels cover only some shapes: our FFI target where
    `fits(*avals_in, **params)` holds; elsewhere `fallback` (a jnp function of the op's operands
    and params returning a sequence of results, built from our other primitives or jax's own
    ops) lowered in its place. `core_rank` as OpSpec's (3 for interleaved operands)."""

    def rule(ctx, *args, **params):
        if fits(*ctx.avals_in, **params):
            return ffi_lowering(target, core_rank)(ctx, *args, **params)
        return mlir.lower_fun(fallback, multiple_results=True)(ctx, *args, **params)

    return rule


def sized_cuda_lowering(target: str, max_n: Callable, fallback: Callable):
    """conditional_cuda_lowering for kernels that cover n <= max_n(dtype) of the first operand."""

    def fits(a, *avals, **params):
        return a.shape[-1] <= max_n(a.dtype)

    return conditional_cuda_lowering(target, fits, fallback)


def _batch_rule(prim: Primitive, spec: OpSpec, args, dims, **params):
    size = next(x.shape[d] for x, d in zip(args, dims) if d is not None)
    if spec.fold_rhs_batch and all(d is None for d in dims[:-1]):
        # x = op(A)^-1 [b_1 ... b_B]: put the mapped axis into the columns of the rhs.
        *mats, b = args
        mapped = b.ndim - spec.core_rank + 1  # just past the columns: (..., n, k, B[, c])
        b = jnp.moveaxis(b, dims[-1], mapped)
        folded = b.shape[:mapped - 1] + (b.shape[mapped - 1] * b.shape[mapped],) + b.shape[mapped + 1:]
        out = prim.bind(*mats, b.reshape(folded), **params)
        if not spec.multiple_results:
            return out.reshape(b.shape), mapped
        x, *rest = out  # per-matrix outputs such as info are not mapped
        return [x.reshape(b.shape), *rest], [mapped] + [None] * len(rest)
    args = [batching.bdim_at_front(x, d, size) for x, d in zip(args, dims)]
    out = prim.bind(*args, **params)
    return out, ((0,) * len(out) if spec.multiple_results else 0)


def make_primitive(spec: OpSpec) -> Primitive:
    prim = Primitive(spec.name)
    prim.multiple_results = spec.multiple_results
    prim.def_impl(partial(_compat.apply_primitive, prim))

    def abstract_eval(*avals, **params):
        check_matrix_operands(spec.name, spec.operands, *avals, index_operands=spec.index_operands,
                              vector_operands=spec.vector_operands, core_rank=spec.core_rank)
        out = _compat.vary_like_inputs(spec.shape_rule(*avals, **params), avals)
        return out if spec.multiple_results else out[0]

    prim.def_abstract_eval(abstract_eval)
    batching.primitive_batchers[prim] = partial(_batch_rule, prim, spec)
    mlir.register_lowering(prim, mlir.lower_fun(spec.reference, multiple_results=spec.multiple_results))
    mlir.register_lowering(prim, ffi_lowering(spec.name, spec.core_rank), platform="cpu")
    if _ffi.has_cuda() and (spec.cuda_lowering is not None or _ffi.has_cuda_target(spec.name)):
        mlir.register_lowering(prim, spec.cuda_lowering or ffi_lowering(spec.name, spec.core_rank),
                               platform="cuda")
    return prim
