// The chunk stream of the left-looking factorizations (Cholesky, cuda/potrf_left.cuh; LU,
// cuda/lu_blocked_left.cuh): a block of NT threads per matrix forms each 32-column panel from the
// columns of the factor already written to the output, read back KC columns at a time into
// shared memory with cp.async (double-buffered) and multiplied by a register-tiled product.
#pragma once

#include "cuda/potrf_small.cuh"  // Vec

namespace batchla {
namespace detail {

// NT threads (4 column groups of 8 x NT / 128 row groups of 32 lanes), KC columns of L per chunk.
template <typename T, int NT_, int KC_>
struct LeftCfg {
  static constexpr int kNT = NT_;
  static constexpr int kKC = KC_;
  static constexpr int kV = 16 / int(sizeof(T));  // elements per 16-byte access
  static constexpr int kLds = kKC + kV;  // chunk row stride: an odd number of 16-byte granules
                                         // (kKC * sizeof(T) = 64 or 128 B), so the 8 lanes of an
                                         // LDS.128 phase (8 consecutive rows) hit distinct banks
  static constexpr int kLdp = 33;        // panel row stride (32 columns + 1: thread-per-row reads)
  static constexpr int kPass = kNT / 4;  // rows per pass of the thread tile
  static_assert((kKC * sizeof(T)) % 64 == 0 && kNT % 128 == 0, "LeftCfg");
};

// Stages L[J + r][kk, kk + kKC) for r < m into S (row stride kLds) and commits the group. `vec`:
// rows are 16-byte aligned (n % kV == 0), one 16-byte copy per granule; else one per element.
// kGather: S row r comes from L row rowmap[J + r] instead (the LU class's slogdet keeps L by input
// row, cuda/lu_blocked_left.cuh).
template <typename T, class C, bool kGather = false>
__device__ __forceinline__ void LeftIssueChunk(const T* lm, int n, int J, int m, int kk, T* S, bool vec,
                                               int tid, const int* rowmap = nullptr) {
  const T* src = lm + J * n + kk;
  if (vec) {
    constexpr int kG = C::kKC / C::kV;
    for (int g = tid; g < m * kG; g += C::kNT) {
      const int r = g / kG, part = g % kG;
      if constexpr (kGather)
        CpAsync<16, /*kCacheL1=*/true>(S + r * C::kLds + part * C::kV, lm + rowmap[J + r] * n + kk + part * C::kV);
      else
        CpAsync<16, /*kCacheL1=*/true>(S + r * C::kLds + part * C::kV, src + r * n + part * C::kV);
    }
  } else {
    for (int e = tid; e < m * C::kKC; e += C::kNT) {
      const int r = e / C::kKC, c = e % C::kKC;
      if constexpr (kGather) CpAsync<int(sizeof(T))>(S + r * C::kLds + c, lm + rowmap[J + r] * n + kk + c);
      else CpAsync<int(sizeof(T))>(S + r * C::kLds + c, src + r * n + c);
    }
  }
  CpAsyncCommit();
}

// acc[q][e] +=/-= sum_p S[r0 + STEP q][p] * B[c0 + e][p] over one chunk (SUB: subtract), q < Q
// (the warp's live row passes; potrf counts them from the top, STEP = kPass, the LU class from the
// bottom, STEP = -kPass). c0 is warp-uniform, so the B reads are broadcasts: potrf's B is the chunk
// itself (rows J.. of L), the LU class's the chunk's U rows transposed.
template <typename T, class C, int Q, int RQ, int STEP, bool SUB>
__device__ __forceinline__ void LeftChunkProduct(const T* S, int r0, const T* B, int c0, T (&acc)[RQ][8]) {
  using V = Vec16<T>;
  using VT = typename V::type;
#pragma unroll 1
  for (int p = 0; p < C::kKC; p += C::kV) {
    VT av[Q], bv[8];
#pragma unroll
    for (int q = 0; q < Q; ++q) av[q] = *reinterpret_cast<const VT*>(S + (r0 + STEP * q) * C::kLds + p);
#pragma unroll
    for (int e = 0; e < 8; ++e) bv[e] = *reinterpret_cast<const VT*>(B + (c0 + e) * C::kLds + p);
#pragma unroll
    for (int v = 0; v < C::kV; ++v)
#pragma unroll
      for (int q = 0; q < Q; ++q)
#pragma unroll
        for (int e = 0; e < 8; ++e)
          acc[q][e] = fma(SUB ? -V::Get(av[q], v) : V::Get(av[q], v), V::Get(bv[e], v), acc[q][e]);
  }
}

}  // namespace detail
}  // namespace batchla
