// A block of consecutive reflectors applied at once (LAPACK larft + larfb, forward, columnwise,
// left side), CPU, ROW-MAJOR. H_0 ... H_{jb-1} = I - V T V^T with V (rows x jb) unit lower
// trapezoidal and T (jb x jb) upper triangular. Applying the block reads each row of C twice per
// block instead of twice per reflector: for tall matrices that do not fit in cache this is what
// keeps the unblocked row sweeps of reflector.h from being memory bound.
#pragma once

#include <algorithm>
#include <cstdint>

#include "bindings/cpu/blas1.h"

namespace batchla::cpu {

inline constexpr int64_t kBlockReflectors = 32;  // reflectors per block (LAPACK's default nb)
inline constexpr int64_t kBlockColumns = 128;    // columns of C per pass: W's tile stays in L1/L2

// Whether a block update of `rows` x `cols` beats per-reflector sweeps: the trailing matrix must
// be wide enough to amortise T and big enough not to sit in L1 anyway.
inline bool BlockPays(int64_t rows, int64_t cols) {
  return cols >= kBlockReflectors && rows * cols >= 16384;
}

// Scratch of the block routines, carved from one buffer of BlockScratchLen(m) elements.
template <typename T>
struct BlockScratch {
  T* v;  // m x kBlockReflectors: V with its unit diagonal and zeros made explicit
  T* t;  // kBlockReflectors^2: T, row-major
  T* w;  // kBlockReflectors x kBlockColumns: W = T^(T) V^T C for one column tile
};
inline int64_t BlockScratchLen(int64_t m) {
  return m * kBlockReflectors + kBlockReflectors * kBlockReflectors + kBlockReflectors * kBlockColumns;
}
template <typename T>
BlockScratch<T> CarveBlockScratch(T* base, int64_t m) {
  return {base, base + m * kBlockReflectors, base + m * kBlockReflectors + kBlockReflectors * kBlockReflectors};
}

// V and T of the jb reflectors stored below the diagonal of `panel` (rows x jb, row stride ld,
// as geqrf leaves them) with taus (jb). T(i, i) = tau_i and, for p < i,
// T(p, i) = -tau_i sum_{p <= q < i} T(p, q) (v_q . v_i); tau_i == 0 gives a zero column (larft).
template <typename T>
void BuildBlock(const T* panel, int64_t ld, int64_t rows, int64_t jb, const T* taus,
                const BlockScratch<T>& s) {
  for (int64_t r = 0; r < rows; ++r) {
    T* vr = s.v + r * jb;
    for (int64_t p = 0; p < jb; ++p) vr[p] = r < p ? T(0) : r == p ? T(1) : panel[r * ld + p];
  }
  T* t = s.t;
  Fill(t, jb * jb, T(0));
  // Gram matrix v_q . v_i (q < i) into T's strict upper triangle, one pass over V's rows.
  for (int64_t r = 0; r < rows; ++r) {
    const T* vr = s.v + r * jb;
    for (int64_t q = 0; q < std::min(r + 1, jb); ++q) SubScaled(t + q * jb + q + 1, -vr[q], vr + q + 1, std::min(r + 1, jb) - q - 1);
  }
  T gram_col[kBlockReflectors];
  for (int64_t i = 0; i < jb; ++i) {
    const T tau = taus[i];
    for (int64_t q = 0; q < i; ++q) gram_col[q] = t[q * jb + i];
    for (int64_t p = 0; p < i; ++p) {
      t[p * jb + i] = tau == T(0) ? T(0) : -tau * Dot(t + p * jb + p, gram_col + p, i - p);
    }
    t[i * jb + i] = tau;
  }
}

// C = Q^T C (`trans`) or Q C with Q = I - V T V^T from BuildBlock; C is rows x cols (row stride
// ldc), the same rows as V.
template <typename T>
void ApplyBlock(const BlockScratch<T>& s, int64_t rows, int64_t jb, bool trans, T* c, int64_t ldc,
                int64_t cols) {
  const T* t = s.t;
  for (int64_t c0 = 0; c0 < cols; c0 += kBlockColumns) {
    const int64_t ct = std::min(kBlockColumns, cols - c0);
    auto w = [&](int64_t p) { return s.w + p * ct; };
    Fill(s.w, jb * ct, T(0));
    for (int64_t r = 0; r < rows; ++r) {  // W = V^T C; row r of V is zero beyond column r
      const T* vr = s.v + r * jb;
      const T* cr = c + r * ldc + c0;
      for (int64_t p = 0; p < std::min(r + 1, jb); ++p) SubScaled(w(p), -vr[p], cr, ct);
    }
    if (trans) {  // W = T^T W, T^T lower: in place from the last row up
      for (int64_t p = jb - 1; p >= 0; --p) {
        for (int64_t x = 0; x < ct; ++x) w(p)[x] *= t[p * jb + p];
        for (int64_t q = 0; q < p; ++q) SubScaled(w(p), -t[q * jb + p], w(q), ct);
      }
    } else {  // W = T W, T upper: in place from the first row down
      for (int64_t p = 0; p < jb; ++p) {
        for (int64_t x = 0; x < ct; ++x) w(p)[x] *= t[p * jb + p];
        for (int64_t q = p + 1; q < jb; ++q) SubScaled(w(p), -t[p * jb + q], w(q), ct);
      }
    }
    for (int64_t r = 0; r < rows; ++r) {  // C -= V W
      const T* vr = s.v + r * jb;
      T* cr = c + r * ldc + c0;
      for (int64_t p = 0; p < std::min(r + 1, jb); ++p) SubScaled(cr, vr[p], w(p), ct);
    }
  }
}

}  // namespace batchla::cpu
