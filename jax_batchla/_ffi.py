"""Loads the native modules and registers their FFI targets with XLA.

The CPU module is always built and required. The CUDA module is optional: it exists where the
package was built with nvcc, and the "cuda" lowerings are only registered when it imports.
"""

from __future__ import annotations

import jax

from . import _cpu

try:
    from . import _cuda
except ImportError:  # built without nvcc: the CUDA platform falls back to the jnp reference
    _cuda = None

TARGETS = ("batchla_potrf", "batchla_trsm", "batchla_potrs", "batchla_posv", "batchla_getrf",
           "batchla_getrs", "batchla_gesv", "batchla_inverse", "batchla_slogdet", "batchla_det",
           "batchla_geqrf", "batchla_orgqr", "batchla_ormqr", "batchla_qr", "batchla_qr_r",
           "batchla_lstsq", "batchla_il_potrf", "batchla_il_potrs", "batchla_il_posv", "batchla_il_trsm")
_CUDA_TARGETS = frozenset(_cuda.registrations()) if _cuda is not None else frozenset()

# Every target is registered twice: as batch partitionable (XLA may split its call along the
# batch dims) and, under MANUAL_SUFFIX, as a plain target for calls inside a fully manual region
# (shard_map): there nothing is left to partition, and XLA's GSPMD batch partitioner aborts the
# process on a manual sharding it meets inside a conditional there.
MANUAL_SUFFIX = "_manual"

for _module, _platform in ((_cpu, "cpu"), (_cuda, "CUDA")):
    if _module is None:
        continue
    for _name, _capsule in _module.registrations().items():
        jax.ffi.register_ffi_target(_name, _capsule, platform=_platform)
        jax.ffi.register_ffi_target_as_batch_partitionable(_name)
        jax.ffi.register_ffi_target(_name + MANUAL_SUFFIX, _capsule, platform=_platform)


def has_cuda() -> bool:
    """True when the CUDA kernels were built into this installation."""
    return _cuda is not None


def has_cuda_target(name: str) -> bool:
    """True when the CUDA module of this installation provides FFI target `name`."""
    return name in _CUDA_TARGETS


def _cuda_size(fn: str, dtype) -> int:
    return getattr(_cuda, fn)(jax.numpy.dtype(dtype).name) if _cuda is not None else 0


_LU_FUSED_OUTPUTS = {"solve": 1, "inverse": 2, "slogdet": 3}  # cuda/lu_dispatch.h LuOutput


def lu_fused_wins(dtype, output: str, n: int) -> bool:
    """Whether the fused CUDA kernel of `output` ('solve', 'inverse', 'slogdet') is the faster way
    for n x n matrices, rather than getrf + getrs / the LU diagonal (False without the kernels)."""
    if not has_cuda_target("batchla_gesv"):
        return False
    return bool(_cuda.lu_fused_wins(jax.numpy.dtype(dtype).name, _LU_FUSED_OUTPUTS[output], int(n)))


def slogdet_scratch_elems(dtype, n: int) -> int:
    """Elements of scratch per matrix the CUDA slogdet needs at n (its third result; 0 without
    the kernels or where the factors stay on chip)."""
    if not has_cuda_target("batchla_slogdet"):
        return 0
    return int(_cuda.slogdet_scratch_elems(jax.numpy.dtype(dtype).name, int(n)))


def getrf_max_n(dtype) -> int:
    """Largest n the CUDA getrf kernels handle for `dtype` (0 without them)."""
    return _cuda_size("getrf_max_n", dtype) if has_cuda_target("batchla_getrf") else 0


def posv_max_fused_n(dtype) -> int:
    """Largest n the fused CUDA posv kernel handles for `dtype` (0 without CUDA)."""
    return _cuda.posv_max_fused_n(jax.numpy.dtype(dtype).name) if _cuda is not None else 0


def potrf_max_n(dtype) -> int:
    """Largest n the CUDA potrf kernels handle for `dtype` (0 without CUDA)."""
    return _cuda.potrf_max_n(jax.numpy.dtype(dtype).name) if _cuda is not None else 0


def qr_supported(dtype, m: int, n: int) -> bool:
    """True when the CUDA geqrf / orgqr / ormqr kernels handle m x n matrices of `dtype`
    (m >= n; False without them)."""
    if _cuda is None or not has_cuda_target("batchla_geqrf"):
        return False
    return bool(_cuda.qr_supported(jax.numpy.dtype(dtype).name, int(m), int(n)))


def qr_fused_fits(dtype, m: int, ncols: int) -> bool:
    """True when the fused on-chip CUDA qr / qr_r (ncols = n) or lstsq (ncols = n + k) kernels
    handle m rows of `dtype` (False without them)."""
    if _cuda is None or not has_cuda_target("batchla_qr"):
        return False
    return bool(_cuda.qr_fused_fits(jax.numpy.dtype(dtype).name, int(m), int(ncols)))


IL_FALLBACK_CHUNK = 32  # one warp of matrices: the smallest chunk the interleaved layout allows


def il_default_chunk(dtype, n: int) -> int:
    """The chunk size c (matrices per chunk) of the interleaved layout for n x n matrices of
    `dtype`: the one the CUDA autotuner measured fastest, else 32."""
    if _cuda is None or not hasattr(_cuda, "il_default_chunk"):
        return IL_FALLBACK_CHUNK
    return int(_cuda.il_default_chunk(jax.numpy.dtype(dtype).name, int(n)))


def il_posv_fused(dtype, n: int) -> bool:
    """True when the fused CUDA il_posv kernel handles n x n matrices of `dtype` (the tuned variant
    keeps the factor on chip); else the lowering composes il_potrf + il_potrs."""
    if _cuda is None or not hasattr(_cuda, "il_posv_fused"):
        return False
    return bool(_cuda.il_posv_fused(jax.numpy.dtype(dtype).name, int(n)))
