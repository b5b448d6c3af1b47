"""One module per primitive family; each registers its primitive's rules on import."""

from .cholesky import posv, potrf, potrs
from .triangular import trsm

__all__ = ["potrf", "potrs", "posv", "trsm"]
