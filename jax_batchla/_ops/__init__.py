"""One module per primitive family; each registers its primitive's rules on import."""

from .cholesky import posv, potrf, potrs
from .lu import det, det_closed, gesv, getrf, getrs, inverse, slogdet, unit_lower
from .triangular import trsm

__all__ = ["potrf", "potrs", "posv", "trsm", "getrf", "getrs", "gesv", "inverse", "slogdet",
           "det", "det_closed", "unit_lower"]
