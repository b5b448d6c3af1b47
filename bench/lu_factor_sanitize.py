"""Runs lu_factor (getrf without the permutation: every class skips the perm store) once per LU
size class for compute-sanitizer, e.g.
    compute-sanitizer --tool memcheck --kernel-name kns=Lu python3 -m bench.lu_factor_sanitize
and checks lu and pivots bit for bit against the full getrf of the same matrices."""
import jax
import numpy as np

jax.config.update("jax_enable_x64", True)
import jax_batchla.scipy.linalg as bsl  # noqa: E402
from jax_batchla._ops import lu as luops  # noqa: E402

for dtype in (np.float32, np.float64):
    for n in (2, 3, 9, 20, 33, 100, 256):  # tiny, small (two), warp, medium, large
        a = np.random.default_rng(n).standard_normal((5, n, n)).astype(dtype)
        lu, piv = jax.jit(bsl.lu_factor)(a)
        full = jax.jit(luops.getrf)(a)
        assert np.array_equal(np.asarray(lu), np.asarray(full[0])), (dtype, n)
        assert np.array_equal(np.asarray(piv), np.asarray(full[1])), (dtype, n)
print("lu_factor: lu and pivots equal getrf's for every class")
