// Batched Cholesky (potrf only), left-looking class: a block of 128 or 256 threads per matrix,
// n up to 512.
// Panel J (32 columns) is formed from the input panel and the columns of L already written:
//   P = A[J:n, J:J+32] - L[J:n, 0:J] L[J:J+32, 0:J]^T,
// a register-tiled product whose k dimension streams through shared memory in chunks of L read
// back from the output (L2) with cp.async, double-buffered. So the trailing matrix is never read
// and rewritten per panel (the right-looking large class's traffic), A is read once and L written
// once. Then warp 0 factors P's 32 x 32 diagonal block (DiagFactorLdl), every thread solves one
// row of the panel below against it, and the panel goes to L with the zeros above it.
// Conventions and failure semantics: cuda/potrf_small.cuh. Measurements: bench/NOTES.md,
// "Left-looking class".
#pragma once

#include "cuda/left_chunks.cuh"
#include "cuda/potrf_blocked.cuh"

namespace batchla {
namespace detail {

template <typename T>
struct LeftScratch {
  alignas(16) T dt[kNB * kNB];  // the factored diagonal block transposed: dt[p * 32 + q] = L_qp
  T invd[kNB];           // 1 / L_rr
  int info;
};

// Rows of one chunk buffer: the product reads rows up to RoundUp(m, 32) - 1 (stale past m; they
// only feed accumulators that are never stored).
__host__ __device__ constexpr int LeftStageRows(int n) { return RoundUp(n, 64); }
// Between products the same area holds the panel (n x kLdp, from element 0) and, after it,
// DiagFactorLdl's 32 x 32 broadcast block (16-byte aligned); no chunk is in flight then.
template <typename T, class C>
__host__ __device__ constexpr int LeftTbOffset(int n) { return RoundUp(n * C::kLdp, C::kV); }
template <typename T, class C>
__host__ __device__ constexpr int LeftAreaElems(int n) {
  return 2 * LeftStageRows(n) * C::kLds > LeftTbOffset<T, C>(n) + kNB * kNB
             ? 2 * LeftStageRows(n) * C::kLds : LeftTbOffset<T, C>(n) + kNB * kNB;
}
template <typename T, class C>
__host__ __device__ constexpr size_t LeftSmemBytes(int n) {
  return size_t(LeftAreaElems<T, C>(n)) * sizeof(T) + sizeof(LeftScratch<T>);
}

// Asks L2 for the input lines panel J reads after its product (step 2 of LeftKernel): the jw-wide
// row segments of the lower part and, unless kLoadLower, the 32 rows of the upper part; one
// request per 128-byte line, issued before the product so the loads after it hit L2.
template <typename T, class C>
__device__ __forceinline__ void LeftPrefetchPanel(const T* am, int n, int J, int mode, int tid) {
  constexpr int kPerLine = 128 / int(sizeof(T));
  const int m = n - J, jw = m < kNB ? m : kNB;
  constexpr int kLinesPerRow = kNB / kPerLine > 0 ? kNB / kPerLine : 1;
  if (mode != kLoadUpper)
    for (int t = tid; t < m * kLinesPerRow; t += C::kNT)
      asm volatile("prefetch.global.L2 [%0];" ::"l"(am + (J + t / kLinesPerRow) * n + J + (t % kLinesPerRow) * kPerLine));
  if (mode != kLoadLower) {
    const int per_row = (m + kPerLine - 1) / kPerLine;
    for (int t = tid; t < jw * per_row; t += C::kNT)
      asm volatile("prefetch.global.L2 [%0];" ::"l"(am + (J + t / per_row) * n + J + (t % per_row) * kPerLine));
  }
}

// C: LeftCfg. RQ: row passes per thread (n <= RQ kPass). MINB: blocks per SM the register budget
// is sized for. PF: prefetch each panel's input into L2 before its product (LeftPrefetchPanel).
template <typename T, class C, int RQ, int MINB, bool PF>
__global__ void __launch_bounds__(C::kNT, MINB)
    LeftKernel(const T* a, T* l, int32_t* info, int64_t batch, int n, int mode, bool vec) {
  extern __shared__ __align__(16) unsigned char smraw[];
  const int sr = LeftStageRows(n);
  T* const stage0 = reinterpret_cast<T*>(smraw);
  T* const stage1 = stage0 + sr * C::kLds;
  T* const pan = stage0;  // the panel (row stride kLdp) reuses the chunk buffers between products
  auto* sc = reinterpret_cast<LeftScratch<T>*>(smraw + size_t(LeftAreaElems<T, C>(n)) * sizeof(T));
  T* const tb = stage0 + LeftTbOffset<T, C>(n);
  const int64_t nn = static_cast<int64_t>(n) * n;
  for (int64_t mat = blockIdx.x; mat < batch; mat += gridDim.x) {
    const T* am = a + mat * nn;
    T* lm = l + mat * nn;
    if (threadIdx.x == 0) sc->info = 0;
    for (int J = 0; J < n; J += kNB) {
      // An opaque thread index per panel: without it ptxas hoists every per-thread offset of the
      // loops below to the kernel's start and spills them (SASS: ~37 STL before the matrix loop).
      int tid = threadIdx.x;
      asm volatile("" : "+r"(tid));
      const int lane = tid & 31, warp = tid >> 5;
      const int rbase = (warp >> 2) * 32;  // the warp's first row in a pass
      const int r0 = rbase + lane, c0 = (warp & 3) * 8;
      const int m = n - J, jw = m < kNB ? m : kNB;
      const int qn = m > rbase ? (m - rbase + C::kPass - 1) / C::kPass : 0;  // warp-uniform
      T acc[RQ][8];
#pragma unroll
      for (int q = 0; q < RQ; ++q)
#pragma unroll
        for (int e = 0; e < 8; ++e) acc[q][e] = T(0);
      if (PF && J > 0) LeftPrefetchPanel<T, C>(am, n, J, mode, tid);  // step 2's input, into L2
      // 1. acc = L[J:n, 0:J] L[J:J+32, 0:J]^T, chunk c + 1 in flight while chunk c is multiplied
      const int chunks = J / C::kKC;
      if (chunks > 0) LeftIssueChunk<T, C>(lm, n, J, m, 0, stage0, vec, tid);
      for (int c = 0; c < chunks; ++c) {
        if (c + 1 < chunks) {
          LeftIssueChunk<T, C>(lm, n, J, m, (c + 1) * C::kKC, (c & 1) ? stage0 : stage1, vec, tid);
          CpAsyncWait<1>();
        } else {
          CpAsyncWait<0>();
        }
        __syncthreads();
        const T* S = (c & 1) ? stage1 : stage0;
        StaticFor<1, RQ + 1>([&](auto Q) {
          if (qn == Q) LeftChunkProduct<T, C, decltype(Q)::value, RQ, C::kPass, false>(S, r0, S, c0, acc);
        });
        __syncthreads();
      }
      // 2. panel = A[J:n, J:J+jw] - acc (the diagonal block's strict upper part is not formed).
      // The thread's tile: 8 consecutive elements of a row (lower part: 16-byte loads when the
      // rows are aligned) and of a column (upper part: coalesced across the lanes), all in flight.
      StaticFor<0, RQ>([&](auto Q) {
        constexpr int q = decltype(Q)::value;
        const int r = r0 + C::kPass * q;
        if (q < qn && r < m) {
          using V = Vec16<T>;
          T lo[8], up[8];
          const T* row = am + (J + r) * n + J + c0;
          if (mode != kLoadUpper && vec && c0 + 8 <= jw) {
#pragma unroll
            for (int g = 0; g < 8; g += V::kN) {
              const typename V::type w = *reinterpret_cast<const typename V::type*>(row + g);
#pragma unroll
              for (int v = 0; v < V::kN; ++v) lo[g + v] = V::Get(w, v);
            }
          } else {
#pragma unroll
            for (int e = 0; e < 8; ++e)
              lo[e] = (mode != kLoadUpper && c0 + e < jw && c0 + e <= r) ? row[e] : T(0);
          }
#pragma unroll
          for (int e = 0; e < 8; ++e) {
            const int cc = c0 + e;
            up[e] = (mode != kLoadLower && cc < jw && cc <= r) ? am[(J + cc) * n + J + r] : T(0);
          }
#pragma unroll
          for (int e = 0; e < 8; ++e) {
            if (c0 + e < jw && c0 + e <= r) {
              const T v = mode == kLoadLower ? lo[e] : mode == kLoadSym ? (lo[e] + up[e]) / T(2) : up[e];
              pan[r * C::kLdp + c0 + e] = v - acc[q][e];
            }
          }
        }
      });
      __syncthreads();
      // 3. diagonal block: warp 0, lane r holds row r (identity rows pad jw up to 32)
      if (warp == 0) {
        T row[kNB];
#pragma unroll
        for (int cc = 0; cc < kNB; ++cc)
          row[cc] = (lane < jw && cc <= lane) ? pan[lane * C::kLdp + cc] : (cc == lane ? T(1) : T(0));
        T invd;
        const int f = DiagFactorLdl<T>(row, lane, tb, &invd);
        if (lane < jw) {
#pragma unroll
          for (int cc = 0; cc < kNB; ++cc) {
            if (cc <= lane) pan[lane * C::kLdp + cc] = row[cc];
            sc->dt[cc * kNB + lane] = row[cc];
          }
        }
        sc->invd[lane] = invd;
        if (lane == 0 && f) sc->info = J + f;
      }
      __syncthreads();
      if (sc->info) break;  // block-uniform
      // 4. rows below the diagonal block: x L_JJ^T = P[r, :] (m > 32 implies jw == 32)
      for (int r = kNB + tid; r < m; r += C::kNT) {
        T x[kNB];
        T* pr = pan + r * C::kLdp;
        int o = 0;
        asm volatile("" : "+r"(o));  // opaque per row: keeps ptxas from hoisting the loads of L_JJ
                                     // out of the row loop into (spilled) registers
#pragma unroll
        for (int p = 0; p < kNB; ++p) x[p] = pr[p];
#pragma unroll
        for (int p = 0; p < kNB; ++p) {
          const T xp = x[p] * sc->invd[o + p];
          x[p] = xp;
          // column p of L_JJ below the diagonal, 16 bytes per (broadcast) load
          using V = Vec16<T>;
#pragma unroll
          for (int kk = ((p + 1) / V::kN) * V::kN; kk < kNB; kk += V::kN) {
            const typename V::type w = *reinterpret_cast<const typename V::type*>(sc->dt + o + p * kNB + kk);
#pragma unroll
            for (int e = 0; e < V::kN; ++e)
              if (kk + e > p) x[kk + e] = fma(-xp, V::Get(w, e), x[kk + e]);
          }
        }
#pragma unroll
        for (int p = 0; p < kNB; ++p) pr[p] = x[p];
      }
      __syncthreads();
      // 5. L[J:n, J:J+jw] = panel (zeros right of the diagonal), L[0:J, J:J+jw] = 0; warp per row
      if (lane < jw) {
        for (int r = warp; r < m; r += C::kNT / 32)
          lm[(J + r) * n + J + lane] = lane <= r ? pan[r * C::kLdp + lane] : T(0);
        for (int r = warp; r < J; r += C::kNT / 32) lm[r * n + J + lane] = T(0);
      }
      __syncthreads();  // L visible to the next panel's cp.async; the panel buffer free again
    }
    const int inf = sc->info;
    const int tid = threadIdx.x, lane = tid & 31, warp = tid >> 5;
    if (tid == 0) info[mat] = inf;
    if (inf) {
      for (int i = warp; i < n; i += C::kNT / 32)
        for (int j = lane; j < n; j += 32) lm[i * n + j] = j <= i ? Scalar<T>::NaN() : T(0);
    }
    __syncthreads();  // sc->info read by every thread before the next matrix resets it
  }
}

template <typename T, class C, int RQ, int MINB, bool PF>
struct LeftGridTag {};

// Launches one configuration (the size bands are chosen in cuda/potrf_left.cu).
template <typename T, class C, int RQ, int MINB, bool PF>
cudaError_t LeftLaunchCfg(cudaStream_t s, const T* a, T* out, int32_t* info, int64_t batch, int n, int mode) {
  auto kern = LeftKernel<T, C, RQ, MINB, PF>;
  const size_t smem = LeftSmemBytes<T, C>(n);
  cudaError_t e = cudaFuncSetAttribute(kern, cudaFuncAttributeMaxDynamicSharedMemorySize, int(smem));
  if (e != cudaSuccess) return e;
  unsigned grid = 0;
  // the stage grows with n, and with it the blocks per SM may fall: cached per n
  e = PersistentGridKeyed<LeftGridTag<T, C, RQ, MINB, PF>, C::kPass * RQ + 1>(kern, C::kNT, smem, batch, n, &grid);
  if (e != cudaSuccess) return e;
  const bool vec = n % C::kV == 0 && reinterpret_cast<uintptr_t>(out) % 16 == 0 &&
                   reinterpret_cast<uintptr_t>(a) % 16 == 0;
  kern<<<grid, C::kNT, smem, s>>>(a, out, info, batch, n, mode, vec);
  return cudaGetLastError();
}

}  // namespace detail
}  // namespace batchla
