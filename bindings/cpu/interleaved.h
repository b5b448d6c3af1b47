// The interleaved layout on the CPU (bindings/TARGETS.md, "Interleaved layout"): the gather and
// scatter between one matrix of an interleaved buffer and a contiguous ROW-MAJOR scratch, so the
// per-matrix routines of this folder (potrf.h, trsm.h, ...) run unchanged. Operand checks are
// shared with the CUDA handlers in bindings/validate_interleaved.h. The CPU path is a correctness
// reference, not a fast path: the strided gather costs one pass over each matrix, small next to
// the O(n^3) factorization it feeds.
//
// Buffers have shape (..., rows, cols, c); the leading dims collapse to a chunk count. Matrix
// m = q * c + l (chunk q, lane l) has element (i, j) at ((q * rows + i) * cols + j) * c + l.
#pragma once

#include <cstdint>

namespace batchla::cpu {

// Offset of element (0, 0) of matrix m in a buffer of rows x cols matrices, c per chunk.
inline int64_t InterleavedBase(int64_t m, int64_t rows, int64_t cols, int64_t c) {
  return (m / c) * rows * cols * c + m % c;
}

// Matrix m of the interleaved `src` into the contiguous row-major `dst` (rows x cols).
template <typename T>
void GatherMatrix(const T* src, T* dst, int64_t m, int64_t rows, int64_t cols, int64_t c) {
  const T* p = src + InterleavedBase(m, rows, cols, c);
  for (int64_t e = 0; e < rows * cols; ++e) dst[e] = p[e * c];
}

// The contiguous row-major `src` (rows x cols) into matrix m of the interleaved `dst`.
template <typename T>
void ScatterMatrix(const T* src, T* dst, int64_t m, int64_t rows, int64_t cols, int64_t c) {
  T* p = dst + InterleavedBase(m, rows, cols, c);
  for (int64_t e = 0; e < rows * cols; ++e) p[e * c] = src[e];
}

}  // namespace batchla::cpu
