"""jax_batchla: fast batched small dense linear algebra inside jit-compiled JAX programs.

``jax_batchla.linalg`` mirrors ``jax.numpy.linalg`` and ``jax_batchla.scipy.linalg`` mirrors
``jax.scipy.linalg``: swap the import, keep the program.
"""

from . import _ffi, linalg, scipy
from ._ffi import has_cuda

__version__ = "0.1.0"
__all__ = ["linalg", "scipy", "has_cuda", "__version__"]
