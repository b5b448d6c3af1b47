"""Mirror of :mod:`jax.scipy` (only ``linalg``)."""

from . import linalg

__all__ = ["linalg"]
