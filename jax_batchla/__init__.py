"""jax_batchla: fast batched small dense linear algebra inside jit-compiled JAX programs.

``jax_batchla.linalg`` mirrors ``jax.numpy.linalg`` and ``jax_batchla.scipy.linalg`` mirrors
``jax.scipy.linalg``: swap the import, keep the program. ``jax_batchla.interleaved`` keeps batches
of tiny matrices in the interleaved (batch-fastest) layout for Cholesky solves at memory speed.
"""

from . import _ffi, interleaved, linalg, scipy
from ._ffi import has_cuda

__version__ = "0.1.0"
__all__ = ["linalg", "scipy", "interleaved", "has_cuda", "__version__"]
