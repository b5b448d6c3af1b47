// Shared-memory layouts of the blocked LU kernels (cuda/lu_blocked_medium.cuh, _large.cuh), apart
// from the kernels so that the dispatcher (cuda/lu_blocked.cu) can size launches without
// instantiating them. Sizes in bytes; every region starts 16-byte aligned.
#pragma once

#include "cuda/lu_blocked.cuh"

namespace batchla {
namespace detail {

// ---- medium: the whole matrix in shared memory ------------------------------------------------
__host__ __device__ constexpr int LuMediumLd(int n) { return n | 1; }
__host__ __device__ constexpr int LuSolveLd(int kcap) { return kcap | 1; }

// Shared memory layout: A (n x ld) | X (n x LuSolveLd(kcap), fused solve / inverse: kcap
// right-hand-side columns per chunk) | piv, perm, rowsrc (n ints each) | LuShared.
template <typename T>
__host__ __device__ constexpr size_t LuMediumXOff(int n) { return RoundUp(n * LuMediumLd(n) * int(sizeof(T)), 16); }
template <typename T>
__host__ __device__ constexpr size_t LuMediumIntOff(int n, int kcap) {
  return LuMediumXOff<T>(n) + (kcap > 0 ? RoundUp(n * LuSolveLd(kcap) * int(sizeof(T)), 16) : 0);
}
template <typename T>
__host__ __device__ constexpr size_t LuMediumSmemBytes(int n, int kcap) {
  return LuMediumIntOff<T>(n, kcap) + RoundUp(3 * n * 4, 16) + sizeof(LuShared<T>);
}
// Columns per solve chunk: all of them when they fit (one pass), else as many as fit in a
// `limit` bytes of shared memory per block (multiples of 32).
constexpr size_t kLuSmemLimit = 232448;  // 227 KB opt-in per block on sm_90 (sm_80: 163 KB)
template <typename T>
inline int LuSolveCap(int n, int k, size_t limit) {
  if (k <= 0) return 1;
  const size_t base = LuMediumSmemBytes<T>(n, 0) + 16;
  const size_t per_col = size_t(n) * sizeof(T);
  int fit = limit > base ? int((limit - base) / per_col) - 1 : 1;  // -1: the odd leading dimension
  int cap = k < fit ? k : fit;
  if (cap < k && cap > 32) cap = cap / 32 * 32;
  return cap < 1 ? 1 : cap;
}

// ---- large: panel + U12 strip in shared memory --------------------------------------------------
constexpr int kLuLargeLdp = kLuNB + 1;

template <typename T>
__host__ __device__ constexpr size_t LuLargeUsOff(int n) { return RoundUp(n * kLuLargeLdp * int(sizeof(T)), 16); }
// U12 strip width: kLuLargeStrip, or all the columns of a smaller matrix.
__host__ __device__ constexpr int LuLargeStrip(int n) { return n < kLuLargeStrip ? RoundUp(n, 32) : kLuLargeStrip; }
template <typename T>
__host__ __device__ constexpr size_t LuLargeIntOff(int n) {
  return LuLargeUsOff<T>(n) + RoundUp(kLuNB * LuLargeStrip(n) * int(sizeof(T)), 16);
}
template <typename T>
__host__ __device__ constexpr size_t LuLargeSmemBytes(int n) {
  return LuLargeIntOff<T>(n) + RoundUp(3 * n * 4, 16) + sizeof(LuShared<T>);
}

}  // namespace detail
}  // namespace batchla
