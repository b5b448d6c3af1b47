"""Every private JAX import and version shim lives here (jax 0.10 on PyPI, 0.11 on our GPU hosts)."""

from __future__ import annotations

import jax
from jax.interpreters import mlir
from jax.sharding import NamedSharding, PartitionSpec

try:  # the eager path every jax primitive uses: one cached jit per (primitive, params)
    from jax._src.dispatch import apply_primitive
except ImportError:  # pragma: no cover - only if jax moves it
    apply_primitive = None

try:  # Shardy sharding rules for custom calls (what jaxlib's own linalg lowering attaches)
    from jax._src.custom_partitioning_sharding_rule import (
        sdy_sharding_rule_to_mlir,
        str_to_sdy_sharding_rule,
    )
except ImportError:  # pragma: no cover
    sdy_sharding_rule_to_mlir = str_to_sdy_sharding_rule = None


try:  # the namedtuple jnp.linalg.slogdet returns (not exported publicly)
    from jax._src.numpy.linalg import SlogdetResult
except ImportError:  # pragma: no cover
    import collections

    SlogdetResult = collections.namedtuple("SlogdetResult", ["sign", "logabsdet"])

try:  # the namedtuple jnp.linalg.qr returns (not exported publicly)
    from jax._src.numpy.linalg import QRResult
except ImportError:  # pragma: no cover
    import collections

    QRResult = collections.namedtuple("QRResult", ["Q", "R"])

try:  # jax's Householder QR (LAPACK / cuSOLVER geqrf): public in lax.linalg only in newer jax
    from jax.lax.linalg import geqrf
except ImportError:
    from jax._src.lax.linalg import geqrf


def fully_manual(module_context) -> bool:
    """True while lowering inside a shard_map that is manual over every mesh axis."""
    ctx = getattr(module_context, "axis_context", None)
    manual = getattr(ctx, "manual_axes", None)
    mesh = getattr(ctx, "mesh", None)
    return bool(manual) and mesh is not None and set(manual) >= set(mesh.axis_names)


def vary_like_inputs(outs, avals_in):
    """Results that vary over the manual mesh axes (shard_map) their inputs vary over, as jax's own
    linalg primitives do; otherwise shard_map's type check rejects the JVP and the branches of a
    lax.cond around our ops. Inputs varying over different axes give the union (the first input
    whose set covers all the others). No-op on a jax without manual-axis types."""
    mats = [getattr(a, "manual_axis_type", None) for a in avals_in]
    if any(m is None or not hasattr(m, "varying") for m in mats):
        return outs
    mat = max(mats, key=lambda m: len(m.varying))
    if not mat.varying or any(not m.varying <= mat.varying for m in mats):
        return outs
    mesh = next(a for a, m in zip(avals_in, mats) if m is mat).sharding.mesh
    return tuple(o.update(sharding=NamedSharding(mesh, PartitionSpec(*(None,) * o.ndim)),
                          manual_axis_type=mat) for o in outs)


def shardy_enabled() -> bool:
    try:
        return bool(jax.config.jax_use_shardy_partitioner)
    except AttributeError:  # pragma: no cover
        return False


def _ir_type(module_context, aval):
    try:  # jax >= 0.10 takes the module context first
        return mlir.aval_to_ir_type(module_context, aval)
    except TypeError:  # pragma: no cover - older signature
        return mlir.aval_to_ir_type(aval)


def sdy_batch_rule(module_context, num_batch_dims: int, avals_in, avals_out):
    """A Shardy rule that lets the leading `num_batch_dims` dims of every operand and result be
    sharded together ("..."), and keeps each matrix dim local. None if Shardy is unavailable."""
    if str_to_sdy_sharding_rule is None:
        return None
    letters = iter("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ")

    def factors(aval):
        own = " ".join(next(letters) for _ in range(len(aval.shape) - num_batch_dims))
        return ("... " + own).strip() if num_batch_dims else own

    lhs = ", ".join(factors(a) for a in avals_in)
    rhs = ", ".join(factors(a) for a in avals_out)
    rule = str_to_sdy_sharding_rule(f"{lhs} -> {rhs}")
    return sdy_sharding_rule_to_mlir(
        rule,
        [_ir_type(module_context, a) for a in avals_in],
        [_ir_type(module_context, a) for a in avals_out],
    )
