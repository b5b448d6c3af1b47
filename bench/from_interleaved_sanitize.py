"""Runs from_interleaved's CUDA kernel on the shapes of tests/test_interleaved.py::FROM_CASES (all
three tile plans, partial chunks, a leading dim) for compute-sanitizer, e.g.
    compute-sanitizer --tool memcheck --kernel-name regex:FromInterleaved python3 -m bench.from_interleaved_sanitize
and checks each result bit for bit against the numpy transpose."""
import jax
import numpy as np

jax.config.update("jax_enable_x64", True)
from jax_batchla._ops import interleaved as ilops  # noqa: E402

CASES = [(2, 2, 32, 33), (1, 1, 32, 1), (3, 5, 32, 100), (4, 4, 64, 130), (5, 3, 256, 300),
         (8, 8, 96, 97), (9, 9, 32, 40), (17, 5, 64, 65), (64, 64, 32, 33), (3, 3, 32, 0)]

for dtype in (np.float32, np.float64):
    for rows, cols, chunk, count in CASES:
        chunks = max(1, -(-count // chunk))
        x = np.random.default_rng(count).standard_normal((2, chunks, rows, cols, chunk)).astype(dtype)
        want = np.moveaxis(x, -1, -3).reshape(2, chunks * chunk, rows, cols)[:, :count]
        got = np.asarray(jax.jit(lambda d: ilops.from_interleaved(d, count=count))(x))
        assert np.array_equal(got, want), (dtype, rows, cols, chunk, count)
print("from_interleaved: all cases exact")
