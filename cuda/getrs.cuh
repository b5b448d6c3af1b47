// Batched LU solve (getrs): kernels and their launcher. Included by cuda/getrs_f32.cu and
// cuda/getrs_f64.cu (instantiation); the public entry LaunchGetrs is in cuda/getrs.cu.
//
// Storage: ROW-MAJOR (launch.h). lu (n x n) of matrix m at m*n*n, element (i, j) at i*n + j: L
// strictly below the diagonal (unit diagonal implied, never read), U on and above. perm (n) at m*n.
// B, X (n x k) at m*n*k, element (i, c) at i*k + c. Matrix offsets are int64_t.
//
// getrs = a row permutation of the right-hand side plus the two triangular *sweeps* of trsm.cuh
// (SweepPass; the loops think in rows of M = op(triangle), dot form = rows of A, axpy form =
// columns of A) over the same packed lu. The permutation is fused into the load of B (op(A) = A)
// or into the store of X (op(A) = A^T), so B and X are each touched once:
//   op(A) = A:   L y = P b   (forward,  dot form,  unit)   then U x = y   (backward, dot form)
//   op(A) = A^T: U^T y = b   (forward,  axpy form)         then L^T z = y (backward, axpy form,
//                unit), and x = P^T z, i.e. X(perm[i], :) = z(i, :)
// Every rhs element passes through on-chip storage between its read and its write, and every
// (matrix, column) is read completely before any of it is written, so b and x may be the same
// buffer: they carry no __restrict__. A perm entry outside [0, n) (not a getrf output) is clamped
// into range: the result is then meaningless but nothing outside the matrix is touched.
//
// Size classes (reusing the trsm machinery of cuda/trsm_kernels.cuh and cuda/trsm_tiny.cuh):
//   tiny:  k == 1, n <= trsm's tiny limit. THREAD per matrix, template<int N>, lu/b/perm chunks
//          double-buffered in shared memory (= TinySolveKernel + perm staging + gather/scatter).
//   small: n <= 32. n-lane group per (matrix, rhs column) (= SmallSolveKernel + perm staging;
//          float32 uses its own fully unrolled sweep, GroupSweep).
//   tile:  warp per (matrix, KC columns), lu streamed in 32 x 32 tiles (= TileSolveKernel with the
//          gather in the load of B and the scatter in the store of X; work items ordered so the
//          column chunks of one matrix run side by side and share its tiles through L2).
//   panel: large n, few work items (thresholds below). BLOCK of kGetrsPanelWarps warps per
//          (matrix, KC columns): warp w owns the 32-row blocks t = w (mod W) of the sweep and
//          applies every update M(t, s) x_s to them, so the owner of t may solve diagonal step t
//          as soon as its own update from step t - 1 is applied; one mbarrier per step (not a
//          block barrier) publishes "step s final" and a warp waits only when it needs an x
//          that is not final yet. Critical path per step: one update tile + one diagonal sweep.
//          Each warp streams its update tiles through a private cp.async ring and prefetches its
//          next diagonal tile into registers.
#pragma once

#include <cstdint>
#include <cuda_runtime.h>

#include "cuda/common.cuh"
#include "cuda/launch.h"
#include "cuda/trsm.cuh"
#include "cuda/trsm_kernels.cuh"
#include "cuda/tuning.h"

namespace batchla {
namespace getrs_detail {

// ===== thresholds ================================================================================
// Thresholds of the getrs classes: cuda/tuning.h, block "getrs". The tiny / small limits are trsm's.
using tuning::kGetrsPanelFewItemsMinN;
using tuning::kGetrsPanelItemsPerSm;
using tuning::kGetrsPanelMinN;
using tuning::kGetrsPanelStagesF32;
using tuning::kGetrsPanelStagesF64;
using tuning::kGetrsPanelWarps;
template <typename T>
constexpr bool SmallUnrolledSweep() { return tuning::GetrsSmallUnrolledSweep<T>(); }

using detail::CpAsync;
using detail::CpAsyncCommit;
using detail::CpAsyncWait;
using detail::CpAsyncWaitDyn;
using trsm_detail::MbarArrive;
using trsm_detail::MbarInit;
using trsm_detail::MbarWait;
using trsm_detail::kFullMask;
using trsm_detail::PassOf;
using trsm_detail::SolvePlan;
using trsm_detail::StaticFor;
using trsm_detail::SweepPass;
using trsm_detail::TileCfg;
using trsm_detail::TinyLay;
using trsm_detail::Vec16;

// Size class; kAuto picks by (n, k). The others force a class (benchmarks and tests only) and
// return cudaErrorInvalidValue where that class cannot run the problem.
enum class GetrsClass : int { kAuto = 0, kTiny, kSmall, kTile, kPanel };

// The two sweeps of getrs (file comment).
inline SolvePlan GetrsPlan(bool trans) {
  SolvePlan p{};
  p.npasses = 2;
  if (!trans) {
    p.pass[0] = {/*forward=*/true, /*transposed=*/false, /*unit_diag=*/true};    // L
    p.pass[1] = {/*forward=*/false, /*transposed=*/false, /*unit_diag=*/false};  // U
  } else {
    p.pass[0] = {/*forward=*/true, /*transposed=*/true, /*unit_diag=*/false};    // U^T
    p.pass[1] = {/*forward=*/false, /*transposed=*/true, /*unit_diag=*/true};    // L^T
  }
  return p;
}

__device__ __forceinline__ int ClampRow(int p, int n) { return unsigned(p) < unsigned(n) ? p : 0; }

// 16 bytes of global memory (16-byte aligned) into registers, read-only path.
template <typename T>
__device__ __forceinline__ void LoadGlobal16(const T* p, T* out) {
  using V = detail::Vec16<T>;
  V::Split(__ldg(reinterpret_cast<const typename V::type*>(p)), out);
}

// =================================================================================================
// tiny: thread per matrix, k == 1
// =================================================================================================

template <typename T, int N>
struct TinyGetrsCfg {
  using LA = TinyLay<T, N * N>;
  using LB = TinyLay<T, N>;
  using LP = TinyLay<int32_t, N>;
  static constexpr int kPer = (LA::kStride + LB::kStride) * int(sizeof(T)) + LP::kStride * 4;
  static constexpr int kBudget = tuning::kTrsmTinyStageBytes;
  static constexpr int kMT = 128 * kPer <= kBudget ? 128 : (64 * kPer <= kBudget ? 64 : 32);
  static constexpr int kPermOff = kMT * (LA::kStride + LB::kStride);  // T elements; 16-B aligned
  static constexpr int kStageBytes =
      detail::RoundUp(kPermOff * int(sizeof(T)) + kMT * LP::kStride * 4, 16);
  static constexpr size_t kSmem = size_t(2) * kStageBytes;
};

// p[i] = perm row i of one matrix in layout TinyLay<int32_t, N> (16-byte loads when padded).
template <int N>
__device__ __forceinline__ void TinyLoadPerm(const int32_t* pm, int (&p)[N]) {
  using L = TinyLay<int32_t, N>;
  if constexpr (L::kVec) {
    StaticFor<0, N / 4>([&](auto uc) {
      constexpr int u = decltype(uc)::value;
      const int4 v = *reinterpret_cast<const int4*>(pm + 4 * u);
      p[4 * u] = v.x; p[4 * u + 1] = v.y; p[4 * u + 2] = v.z; p[4 * u + 3] = v.w;
    });
  } else {
    StaticFor<0, N>([&](auto ic) { p[decltype(ic)::value] = pm[decltype(ic)::value]; });
  }
  StaticFor<0, N>([&](auto ic) { p[decltype(ic)::value] = ClampRow(p[decltype(ic)::value], N); });
}

template <typename T, int N>
__global__ void __launch_bounds__(TinyGetrsCfg<T, N>::kMT)
    TinyGetrsKernel(const T* __restrict__ lu, const int32_t* __restrict__ perm, const T* b, T* x,
                    int64_t batch, bool trans, bool aligned) {
  using C = TinyGetrsCfg<T, N>;
  using LA = typename C::LA;
  using LB = typename C::LB;
  using LP = typename C::LP;
  constexpr int MT = C::kMT;
  extern __shared__ __align__(16) unsigned char getrs_smem[];
  const int64_t chunks = (batch + MT - 1) / MT;
  int64_t c = blockIdx.x;
  if (c >= chunks) return;
  auto stage = [&](int st) { return reinterpret_cast<T*>(getrs_smem + st * C::kStageBytes); };
  auto issue = [&](int64_t ch, int st) {
    const int64_t m0 = ch * MT;
    const int mc = static_cast<int>(batch - m0 < MT ? batch - m0 : MT);
    T* as = stage(st);
    trsm_detail::TinyStageIn<T, N * N, MT>(as, lu + m0 * (N * N), mc, aligned);
    trsm_detail::TinyStageIn<T, N, MT>(as + MT * LA::kStride, b + m0 * N, mc, aligned);
    trsm_detail::TinyStageIn<int32_t, N, MT>(reinterpret_cast<int32_t*>(as + C::kPermOff),
                                             perm + m0 * N, mc, aligned);
  };

  issue(c, 0);
  CpAsyncCommit();
  for (int it = 0; c < chunks; c += gridDim.x, ++it) {
    const int st = it & 1;
    if (c + gridDim.x < chunks) issue(c + gridDim.x, st ^ 1);  // freed by the last sync
    CpAsyncCommit();
    CpAsyncWait<1>();
    __syncthreads();
    const int64_t m0 = c * MT;
    const int mc = static_cast<int>(batch - m0 < MT ? batch - m0 : MT);
    T* const as = stage(st);
    T* const bs = as + MT * LA::kStride;
    if (int(threadIdx.x) < mc) {
      const T* am = as + threadIdx.x * LA::kStride;
      T* bm = bs + threadIdx.x * LB::kStride;
      int p[N];
      TinyLoadPerm<N>(reinterpret_cast<const int32_t*>(as + C::kPermOff) + threadIdx.x * LP::kStride, p);
      T xv[N];
      if (!trans) {
        StaticFor<0, N>([&](auto ic) { xv[decltype(ic)::value] = bm[p[decltype(ic)::value]]; });
      } else {
        trsm_detail::TinyLoadSeg<T, N, N, 0, 0, N - 1>(bm, xv);
      }
      T inv[N];  // 1 / U(i, i), shared by both orders
      StaticFor<0, N>([&](auto ic) {
        constexpr int i = decltype(ic)::value;
        T dv[N];
        trsm_detail::TinyLoadSeg<T, N * N, N, i, i, i>(am, dv);
        inv[i] = T(1) / dv[i];
      });
      if (!trans) {
        trsm_detail::TinySweep<T, N, true, false>(am, xv, inv, /*unit=*/true);    // L
        trsm_detail::TinySweep<T, N, false, false>(am, xv, inv, /*unit=*/false);  // U
        trsm_detail::TinyStoreVec<T, N>(bm, xv);
      } else {
        trsm_detail::TinySweep<T, N, true, true>(am, xv, inv, /*unit=*/false);    // U^T
        trsm_detail::TinySweep<T, N, false, true>(am, xv, inv, /*unit=*/true);    // L^T
        StaticFor<0, N>([&](auto ic) { bm[p[decltype(ic)::value]] = xv[decltype(ic)::value]; });
      }
    }
    __syncthreads();
    trsm_detail::TinyStageOut<T, N, MT>(x + m0 * N, bs, mc, aligned);
    __syncthreads();  // the next iteration refills this buffer
  }
}

template <typename T, int N>
cudaError_t LaunchTinyGetrsN(cudaStream_t stream, const T* lu, const int32_t* perm, const T* b, T* x,
                             int64_t batch, bool trans) {
  using C = TinyGetrsCfg<T, N>;
  auto kernel = TinyGetrsKernel<T, N>;
  cudaError_t e;
  if (C::kSmem > 48 * 1024) {
    e = cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, int(C::kSmem));
    if (e != cudaSuccess) return e;
  }
  const int64_t chunks = (batch + C::kMT - 1) / C::kMT;
  unsigned grid = 0;
  if ((e = detail::PersistentGrid<C>(kernel, C::kMT, C::kSmem, chunks, &grid)) != cudaSuccess) return e;
  const bool aligned = reinterpret_cast<uintptr_t>(lu) % 16 == 0 &&
                       reinterpret_cast<uintptr_t>(perm) % 16 == 0 &&
                       reinterpret_cast<uintptr_t>(b) % 16 == 0 &&
                       reinterpret_cast<uintptr_t>(x) % 16 == 0;
  kernel<<<grid, C::kMT, C::kSmem, stream>>>(lu, perm, b, x, batch, trans, aligned);
  return cudaGetLastError();
}

// n in 1..TinyMaxN<T>() (trsm's compile-time sizes), k == 1.
template <typename T, int N = 1>
cudaError_t LaunchTinyGetrs(cudaStream_t stream, const T* lu, const int32_t* perm, const T* b, T* x,
                            int64_t batch, int n, bool trans) {
  if constexpr (N <= trsm_detail::TinyMaxN<T>()) {
    if (n == N) return LaunchTinyGetrsN<T, N>(stream, lu, perm, b, x, batch, trans);
    return LaunchTinyGetrs<T, N + 1>(stream, lu, perm, b, x, batch, n, trans);
  } else {
    return cudaErrorInvalidValue;
  }
}

// =================================================================================================
// small: n <= 32, n-lane group per (matrix, rhs column)
// =================================================================================================

// Bytes of shared memory one matrix needs in the small class (padded lu rows, rhs, perm).
template <typename T>
constexpr int64_t SmallBytesPerMatrix(int n, int k) {
  return (int64_t{n} * (n | 1) + int64_t{n} * k) * int64_t{sizeof(T)} + int64_t{n} * 4;
}

// One sweep for the group's column, lane i holding row i (trsm's SweepGroup with the pass known at
// compile time and the step loop fully unrolled: constant shuffle lanes and smem offsets, no FMUL
// in the unit sweeps). y_i = r_i / M(i, i) is kept pre-divided, so y_j IS x_j at step j: per step
// one shuffle, one FMUL (non-unit) and one FMA on the dependency chain's side.
template <typename T, bool FWD, bool TR, bool UNIT>
__device__ __forceinline__ T GroupSweep(const T* Am, int ld, int n, int i, int base, bool valid, T xi) {
  const T* Mi = Am + (TR ? i : i * ld);  // M(i, j) = Mi[j * (TR ? ld : 1)]
  T inv = T(1);
  if (!UNIT && valid) inv = T(1) / Am[i * (ld + 1)];
  T y = UNIT ? xi : xi * inv;
#pragma unroll
  for (int s = 0; s < 32; ++s) {
    const int j = FWD ? s : 31 - s;
    if (FWD && j >= n) break;
    if (j < n) {  // uniform over the warp
      const T xj = __shfl_sync(kFullMask, y, base + j);
      const T m = Mi[TR ? j * ld : j];
      if (valid && (FWD ? i > j : i < j)) y = fma(-(UNIT ? m : m * inv), xj, y);
    }
  }
  return y;
}

// Shared memory: As[mats][n][ld], Bs[mats][n][k] (B in, X out), Ps[mats][n].
template <typename T, bool kUnrolled>
__global__ void __launch_bounds__(tuning::kTrsmSmallThreads)
    SmallGetrsKernel(const T* __restrict__ lu, const int32_t* __restrict__ perm, const T* b, T* x,
                     int64_t batch, int n, int k, int mats, int ld, SolvePlan plan, bool trans) {
  extern __shared__ __align__(16) unsigned char getrs_smem[];
  T* As = reinterpret_cast<T*>(getrs_smem);
  T* Bs = As + mats * n * ld;
  int32_t* Ps = reinterpret_cast<int32_t*>(Bs + mats * n * k);
  const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
  const int per_warp = 32 / n;
  const int gw = lane / n;       // group within the warp
  const int i = lane - gw * n;   // row owned by this lane
  const int base = gw * n;       // first lane of the group
  const bool in_group = gw < per_warp;
  const int groups = per_warp * (blockDim.x >> 5);
  const int64_t nn = int64_t{n} * n, nk = int64_t{n} * k;
  const int64_t chunks = (batch + mats - 1) / mats;
  const float rcp_n = 1.0f / float(n);

  for (int64_t chunk = blockIdx.x; chunk < chunks; chunk += gridDim.x) {
    const int64_t m0 = chunk * mats;
    const int mc = static_cast<int>(batch - m0 < mats ? batch - m0 : mats);
    const T* ag = lu + m0 * nn;
    const int aelems = mc * n * n;
    for (int e = threadIdx.x; e < aelems; e += blockDim.x) {
      // q = e / n: exact in float (e < 2^16, n <= 32: (e + 0.5)/n is >= 1/64 from an integer).
      const int q = __float2int_rz((float(e) + 0.5f) * rcp_n);
      CpAsync<sizeof(T)>(As + q * ld + (e - q * n), ag + e, true);
    }
    const T* bg = b + m0 * nk;
    const int belems = mc * n * k;
    for (int e = threadIdx.x; e < belems; e += blockDim.x) CpAsync<sizeof(T)>(Bs + e, bg + e, true);
    const int32_t* pg = perm + m0 * n;
    for (int e = threadIdx.x; e < mc * n; e += blockDim.x) CpAsync<4>(Ps + e, pg + e, true);
    CpAsyncCommit();
    CpAsyncWait<0>();
    __syncthreads();

    const int pairs = mc * k;
    // The loop bound depends on the warp only, so every lane reaches every shuffle. A group reads
    // its whole column before its shuffles and writes it after them, so the in-place permutation
    // (scatter into the same column of Bs) is safe.
    for (int pw = warp * per_warp; pw < pairs; pw += groups) {
      const int p = pw + gw;
      const bool valid = in_group && p < pairs;
      const int m = valid ? p / k : 0;
      const int c = valid ? p - m * k : 0;
      const int pr = valid ? ClampRow(Ps[m * n + i], n) : i;
      T* col = Bs + m * n * k + c;
      T xi = valid ? col[(trans ? i : pr) * k] : T(0);
      const T* Am = As + m * n * ld;
      if (!kUnrolled) {
        for (int s = 0; s < plan.npasses; ++s)
          xi = trsm_detail::SweepGroup(Am, ld, n, i, base, valid, PassOf(plan, s), xi);
      } else if (!trans) {
        xi = GroupSweep<T, true, false, true>(Am, ld, n, i, base, valid, xi);    // L
        xi = GroupSweep<T, false, false, false>(Am, ld, n, i, base, valid, xi);  // U
      } else {
        xi = GroupSweep<T, true, true, false>(Am, ld, n, i, base, valid, xi);    // U^T
        xi = GroupSweep<T, false, true, true>(Am, ld, n, i, base, valid, xi);    // L^T
      }
      __syncwarp();  // orders every lane's read of the column before the permuted writes into it
      if (valid) col[(trans ? pr : i) * k] = xi;
    }
    __syncthreads();
    T* xg = x + m0 * nk;
    for (int e = threadIdx.x; e < belems; e += blockDim.x) xg[e] = Bs[e];
    __syncthreads();  // the next chunk overwrites shared memory
  }
}

template <typename T>
cudaError_t LaunchSmallGetrs(cudaStream_t stream, const T* lu, const int32_t* perm, const T* b, T* x,
                             int64_t batch, int n, int k, bool trans) {
  const int64_t per = SmallBytesPerMatrix<T>(n, k);
  if (n > tuning::kTrsmSmallMaxN || per > tuning::kTrsmSmallMaxMatrixBytes) return cudaErrorInvalidValue;
  // Chunk sizing as trsm's small class (cuda/trsm_kernels.cuh, LaunchTriSolve).
  constexpr int kThreads = tuning::kTrsmSmallThreads;
  const int groups = (32 / n) * (kThreads / 32);
  const int64_t max_mats = tuning::kTrsmSmallMaxMatrixBytes / per;
  int64_t mats = tuning::kTrsmSmallChunkBytes / per;
  if (mats > groups) mats = mats / groups * groups;  // whole rounds of groups for k = 1
  if (k == 1 && mats < groups) mats = groups;
  if (mats > max_mats) mats = max_mats;
  if (mats > 8 * groups) mats = 8 * groups;
  if (mats < 1) mats = 1;
  const int64_t chunks = (batch + mats - 1) / mats;
  const size_t smem = size_t(mats * per);
  auto kernel = SmallGetrsKernel<T, SmallUnrolledSweep<T>()>;
  kernel<<<detail::GridFor(chunks), kThreads, smem, stream>>>(lu, perm, b, x, batch, n, k,
                                                              static_cast<int>(mats), n | 1,
                                                              GetrsPlan(trans), trans);
  return cudaGetLastError();
}

// =================================================================================================
// shared by tile and panel: rhs block in / out with the permutation, tile loads and tile math
// =================================================================================================

// V[row][c] <- B(src_row, c0 + c) for rows < vrows (zero outside n x k), src_row = perm[row]
// (op(A) = A) or row. Elements tid, tid + nthreads, ... of V (consecutive threads take consecutive
// columns of a row: coalesced); kRhsU perm loads are in flight before their cp.async (one at a
// time, each cp.async waited a full memory latency for its row: run 1, bench/NOTES.md, "getrs").
constexpr int kRhsU = 4;
template <typename T, int KC>
__device__ __forceinline__ void LoadRhs(T* V, const T* Bm, const int32_t* __restrict__ Pm, int n, int k,
                                        int c0, int vrows, bool trans, int tid, int nthreads) {
  const int total = vrows * KC;
  for (int e0 = tid; e0 < total; e0 += kRhsU * nthreads) {
    int src[kRhsU];
#pragma unroll
    for (int u = 0; u < kRhsU; ++u) {
      const int row = (e0 + u * nthreads) / KC;
      src[u] = row < n && !trans ? ClampRow(__ldg(Pm + row), n) : row;
    }
#pragma unroll
    for (int u = 0; u < kRhsU; ++u) {
      const int e = e0 + u * nthreads;
      if (e < total) {
        const int row = e / KC, c = e % KC;
        const bool ok = row < n && c0 + c < k;
        CpAsync<sizeof(T)>(V + e, ok ? Bm + int64_t{src[u]} * k + c0 + c : Bm, ok);
      }
    }
  }
}
// X(dst_row, c0 + c) <- V[row][c], dst_row = perm[row] (op(A) = A^T) or row.
template <typename T, int KC>
__device__ __forceinline__ void StoreRhs(T* Xm, const T* V, const int32_t* __restrict__ Pm, int n, int k,
                                         int c0, bool trans, int tid, int nthreads) {
  const int total = n * KC;
  for (int e0 = tid; e0 < total; e0 += kRhsU * nthreads) {
    int dst[kRhsU];
#pragma unroll
    for (int u = 0; u < kRhsU; ++u) {
      const int row = (e0 + u * nthreads) / KC;
      dst[u] = row < n && trans ? ClampRow(__ldg(Pm + row), n) : row;
    }
#pragma unroll
    for (int u = 0; u < kRhsU; ++u) {
      const int e = e0 + u * nthreads;
      const int c = e % KC;
      if (e < total && c0 + c < k) Xm[int64_t{dst[u]} * k + c0 + c] = V[e];
    }
  }
}

// This lane's row of M's 32 x 32 block from a staged tile of A: row `lane` of the tile (dot form)
// or column `lane` (axpy form, M = A^T).
template <typename T>
__device__ __forceinline__ void TileRow(const T* tile, bool transposed, int lane, T (&mrow)[32]) {
  using Cfg = TileCfg<T>;
  if (!transposed) {
#pragma unroll
    for (int j = 0; j < 32; j += Cfg::kVec) Vec16<T>::Load(tile + lane * Cfg::kLd + j, mrow + j);
  } else {
#pragma unroll
    for (int j = 0; j < 32; ++j) mrow[j] = tile[j * Cfg::kLd + lane];
  }
}

// Diagonal block O of the sweep: rows O*32 .. of V solved in place (lane = row within the block);
// mrow = this lane's row of M(O, O) (clobbered), mii = its diagonal element (unused if unit).
template <typename T, int KC>
__device__ __forceinline__ void DiagSolve(T (&mrow)[32], T mii, const SweepPass& sp, T* V, int n, int O,
                                          int lane) {
  const int nv = n - O * 32 < 32 ? n - O * 32 : 32;
  T inv = T(0);
  if (lane < nv) inv = sp.unit_diag ? T(1) : T(1) / mii;
  T* vr = V + (O * 32 + lane) * KC;
  T r[KC];
#pragma unroll
  for (int c = 0; c < KC; ++c) r[c] = vr[c];
  trsm_detail::ScaledSweep<T, 32, KC>(mrow, inv, sp.forward, nv, lane, 0, r);
  if (lane < nv) {
#pragma unroll
    for (int c = 0; c < KC; ++c) vr[c] = r[c];
  }
}

// Off-diagonal update: rows of block P of V -= M(P, O) x_O (lane = row within block P);
// mrow = TileRow of the staged tile holding M(P, O).
template <typename T, int KC>
__device__ __forceinline__ void BlockUpdate(const T (&mrow)[32], T* V, int n, int P, int O, int lane) {
  constexpr int NA = KC == 1 ? 4 : 1;  // independent accumulators per column
  T acc[KC * NA];
#pragma unroll
  for (int u = 0; u < KC * NA; ++u) acc[u] = T(0);
  trsm_detail::TileDot<T, KC, NA>(mrow, V + O * 32 * KC, acc);
  const int row = P * 32 + lane;
  if (row < n) {
#pragma unroll
    for (int c = 0; c < KC; ++c) {
      T t = T(0);
#pragma unroll
      for (int u = 0; u < NA; ++u) t += acc[c * NA + u];
      V[row * KC + c] -= t;
    }
  }
}

// =================================================================================================
// tile: warp per (matrix, KC rhs columns)
// =================================================================================================

// One warp per block; work item w = matrix * col_blocks + column block (grid-stride), so the column
// blocks of one matrix are scheduled together and re-read its tiles from L2.
// Shared memory: ring[stages][32][kLd], then V[nt*32][KC].
template <typename T, int KC>
__global__ void __launch_bounds__(32)
    TileGetrsKernel(const T* __restrict__ lu, const int32_t* __restrict__ perm, const T* b, T* x,
                    int64_t batch, int n, int k, int col_blocks, int stages, bool vec_ok,
                    SolvePlan plan, bool trans) {
  using Cfg = TileCfg<T>;
  constexpr int NA = KC == 1 ? 4 : 1;
  extern __shared__ __align__(16) unsigned char getrs_smem[];
  T* ring = reinterpret_cast<T*>(getrs_smem);
  const int nt = (n + 31) / 32;
  T* V = ring + stages * Cfg::kElems;
  const int lane = threadIdx.x;
  trsm_detail::TileSeq seq;
  seq.nt = nt;
  seq.plan = plan;
  const int total = plan.npasses * (nt * (nt + 1) / 2);
  const int64_t items = batch * col_blocks;

  for (int64_t item = blockIdx.x; item < items; item += gridDim.x) {
    const int64_t mat = item / col_blocks;
    const int c0 = static_cast<int>(item - mat * col_blocks) * KC;
    const T* Am = lu + mat * int64_t{n} * n;
    const int32_t* Pm = perm + mat * n;
    LoadRhs<T, KC>(V, b + mat * int64_t{n} * k, Pm, n, k, c0, nt * 32, trans, lane, 32);
    // Prologue: tiles 0 .. stages-2, one group each (the rhs rides in the first group).
    trsm_detail::TilePos prod{0, 0, 0};
    int issued = 0;
    for (; issued < stages - 1; ++issued) {
      if (issued < total) {
        int R, C;
        seq.Coords(prod.p, prod.o, prod.t, R, C);
        const SweepPass sp = PassOf(plan, prod.p);
        trsm_detail::LoadTile(ring + issued * Cfg::kElems, Am, n, R, C, sp.forward != sp.transposed,
                              vec_ok, lane);
        prod.Advance(seq);
      }
      CpAsyncCommit();
    }

    // As TileSolveKernel: dot-form updates accumulate in registers until the diagonal tile.
    T acc[KC * NA];
#pragma unroll
    for (int u = 0; u < KC * NA; ++u) acc[u] = T(0);
    trsm_detail::TilePos cons{0, 0, 0};
    for (int ct = 0; ct < total; ++ct) {
      CpAsyncWaitDyn(stages - 2);
      __syncwarp();
      if (issued < total) {  // refill the slot consumed in the previous iteration
        int R, C;
        seq.Coords(prod.p, prod.o, prod.t, R, C);
        const SweepPass sp = PassOf(plan, prod.p);
        trsm_detail::LoadTile(ring + (issued % stages) * Cfg::kElems, Am, n, R, C,
                              sp.forward != sp.transposed, vec_ok, lane);
        prod.Advance(seq);
      }
      ++issued;
      CpAsyncCommit();

      int R, C;
      seq.Coords(cons.p, cons.o, cons.t, R, C);
      const SweepPass sp = PassOf(plan, cons.p);
      const T* tile = ring + (ct % stages) * Cfg::kElems;
      T mrow[32];
      TileRow(tile, sp.transposed, lane, mrow);
      if (R == C) {
        if (!sp.transposed) {  // dot form: the row block's accumulated update ends here
          const int grow = R * 32 + lane;
#pragma unroll
          for (int c = 0; c < KC; ++c) {
            T s = T(0);
#pragma unroll
            for (int u = 0; u < NA; ++u) s += acc[c * NA + u];
            if (grow < n) V[grow * KC + c] -= s;  // padding rows of V stay 0
          }
#pragma unroll
          for (int u = 0; u < KC * NA; ++u) acc[u] = T(0);
        }
        DiagSolve<T, KC>(mrow, tile[lane * (Cfg::kLd + 1)], sp, V, n, R, lane);
      } else if (!sp.transposed) {
        trsm_detail::TileDot<T, KC, NA>(mrow, V + C * 32 * KC, acc);  // row block R += A_RC x_C
      } else {
        BlockUpdate<T, KC>(mrow, V, n, C, R, lane);  // rows of block C -= A_RC^T x_R
      }
      __syncwarp();
      cons.Advance(seq);
    }
    CpAsyncWait<0>();
    __syncwarp();
    StoreRhs<T, KC>(x + mat * int64_t{n} * k, V, Pm, n, k, c0, trans, lane, 32);
    __syncwarp();  // the next item overwrites V
  }
}

template <typename T>
constexpr int TileStages() {
  return sizeof(T) == 4 ? tuning::kTrsmTileStagesF32 : tuning::kTrsmTileStagesF64;
}

template <typename T, int KC>
cudaError_t LaunchTileGetrs(cudaStream_t stream, const T* lu, const int32_t* perm, const T* b, T* x,
                            int64_t batch, int n, int k, bool trans) {
  using Cfg = TileCfg<T>;
  const SolvePlan plan = GetrsPlan(trans);
  const int nt = (n + 31) / 32;
  const int total = plan.npasses * (nt * (nt + 1) / 2);
  int stages = nt <= 2 ? 2 : TileStages<T>();  // occupancy beats depth (bench/NOTES.md "trsm")
  if (stages > total + 1) stages = total + 1;
  if (stages < 2) stages = 2;
  const size_t smem = (size_t(stages) * Cfg::kElems + size_t(nt) * 32 * KC) * sizeof(T);
  if (smem > 227 * 1024) return cudaErrorInvalidValue;
  auto kernel = TileGetrsKernel<T, KC>;
  if (smem > 48 * 1024) {
    const cudaError_t e = cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, int(smem));
    if (e != cudaSuccess) return e;
  }
  const int col_blocks = static_cast<int>((int64_t{k} + KC - 1) / KC);
  const bool vec_ok = n % Cfg::kVec == 0 && reinterpret_cast<uintptr_t>(lu) % 16 == 0;
  kernel<<<detail::GridFor(batch * col_blocks), 32, smem, stream>>>(lu, perm, b, x, batch, n, k, col_blocks,
                                                                   stages, vec_ok, plan, trans);
  return cudaGetLastError();
}

// =================================================================================================
// panel: block of W warps per (matrix, KC rhs columns)
// =================================================================================================

// The update tiles of warp w, in the order it applies them: for each pass p and diagonal step s,
// the tiles M(t, s) of its row blocks t > s, t = w (mod W), ascending. Sweep indices s, t map to
// block rows O = s (forward) or nt-1-s (backward). Its diagonal tiles (s = w (mod W)) do not
// pass through the ring: they are prefetched into registers W steps ahead (v1 queued them in
// the ring, 2 tiles ahead: a full memory latency on every step's critical path, run 1).
struct PanelSeq {
  int nt, w, npasses;
  __device__ __forceinline__ int Owned(int lo) const {  // smallest t >= lo with t = w (mod W)
    constexpr int W = kGetrsPanelWarps;
    return lo + ((w - lo) % W + W) % W;
  }
  __device__ __forceinline__ void Normalize(int& p, int& s, int& t) const {
    while (p < npasses && t >= nt) {
      if (++s == nt) {
        s = 0;
        ++p;
      }
      t = Owned(s + 1);
    }
  }
  __device__ __forceinline__ void Start(int& p, int& s, int& t) const {
    p = 0;
    s = 0;
    t = Owned(1);
    Normalize(p, s, t);
  }
  __device__ __forceinline__ void Advance(int& p, int& s, int& t) const {
    t += kGetrsPanelWarps;
    Normalize(p, s, t);
  }
};

// The block of A holding M(P, O), with P, O from sweep indices t, s.
__device__ __forceinline__ void PanelTile(const SweepPass& sp, int nt, int s, int t, int& R, int& C) {
  const int O = sp.forward ? s : nt - 1 - s;
  const int P = sp.forward ? t : nt - 1 - t;
  R = sp.transposed ? O : P;
  C = sp.transposed ? P : O;
}

// This lane's row of the diagonal block M(O, O) straight from global memory (zero outside the
// matrix), and its diagonal element: row O*32 + lane of A (dot form, 16-byte loads when vec_ok)
// or column O*32 + lane (axpy form: lanes read one row of A together, coalesced).
template <typename T>
__device__ __forceinline__ void LoadDiagRow(const T* Am, int n, int O, bool transposed, bool vec_ok,
                                            int lane, T (&m)[32], T& mii) {
  const int r0 = O * 32, i = r0 + lane;
  const bool row_ok = i < n;
  mii = row_ok ? Am[int64_t{i} * n + i] : T(1);
  if (!transposed && vec_ok && r0 + 32 <= n) {
    constexpr int kV = Vec16<T>::kN;
    const T* src = Am + int64_t{row_ok ? i : r0} * n + r0;
#pragma unroll
    for (int j = 0; j < 32; j += kV) LoadGlobal16(src + j, m + j);
    if (!row_ok) {
#pragma unroll
      for (int j = 0; j < 32; ++j) m[j] = T(0);
    }
  } else {
#pragma unroll
    for (int j = 0; j < 32; ++j) {
      const bool ok = row_ok && r0 + j < n;
      m[j] = ok ? Am[transposed ? int64_t{r0 + j} * n + i : int64_t{i} * n + r0 + j] : T(0);
    }
  }
}

// Shared memory: ring[W][stages][32][kLd] (one ring of update tiles per warp), V[nt*32][KC], and
// one mbarrier per diagonal step (`step_done[s]`: the 32 lanes of step s's owner arrive once its x
// is final; a phase per pass, so a consumer waits on the parity of the passes run so far).
template <typename T, int KC>
__global__ void __launch_bounds__(kGetrsPanelWarps * 32, sizeof(T) == 4 ? 2 : 1)  // f32: 2 blocks/SM
    PanelGetrsKernel(const T* __restrict__ lu, const int32_t* __restrict__ perm, const T* b, T* x,
                     int64_t batch, int n, int k, int col_blocks, int stages, bool vec_ok,
                     SolvePlan plan, bool trans) {
  using Cfg = TileCfg<T>;
  constexpr int W = kGetrsPanelWarps;
  extern __shared__ __align__(16) unsigned char getrs_smem[];
  const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
  T* ring = reinterpret_cast<T*>(getrs_smem) + warp * stages * Cfg::kElems;
  T* V = reinterpret_cast<T*>(getrs_smem) + W * stages * Cfg::kElems;
  const int nt = (n + 31) / 32;
  uint64_t* step_done = reinterpret_cast<uint64_t*>(
      (reinterpret_cast<uintptr_t>(V + nt * 32 * KC) + 7) & ~uintptr_t{7});
  if (threadIdx.x == 0)  // ordered before any use by the first __syncthreads below
    for (int s = 0; s < nt; ++s) MbarInit(step_done + s, 32);
  unsigned parity = 0;  // passes run by this block so far, mod 2
  const PanelSeq seq{nt, warp, plan.npasses};
  const int64_t items = batch * col_blocks;

  for (int64_t item = blockIdx.x; item < items; item += gridDim.x) {
    const int64_t mat = item / col_blocks;
    const int c0 = static_cast<int>(item - mat * col_blocks) * KC;
    const T* Am = lu + mat * int64_t{n} * n;
    const int32_t* Pm = perm + mat * n;

    // Diagonal tiles of this warp: steps s = warp, warp + W, ... of each pass, one ahead in registers.
    int dp = 0, ds = warp;
    T dm[32], dii = T(1);
    auto prefetch_diag = [&]() {
      if (dp < plan.npasses && ds < nt) {
        const SweepPass sp = PassOf(plan, dp);
        LoadDiagRow(Am, n, sp.forward ? ds : nt - 1 - ds, sp.transposed, vec_ok, lane, dm, dii);
      }
    };
    prefetch_diag();

    LoadRhs<T, KC>(V, b + mat * int64_t{n} * k, Pm, n, k, c0, nt * 32, trans, threadIdx.x, blockDim.x);
    CpAsyncCommit();  // group 0: this thread's part of the rhs

    int pp, ps, pt;  // producer position in this warp's update sequence
    seq.Start(pp, ps, pt);
    auto produce = [&](int slot) {
      if (pp < plan.npasses) {
        const SweepPass sp = PassOf(plan, pp);
        int R, C;
        PanelTile(sp, nt, ps, pt, R, C);
        trsm_detail::LoadTile(ring + slot * Cfg::kElems, Am, n, R, C, sp.forward != sp.transposed,
                              vec_ok, lane);
        seq.Advance(pp, ps, pt);
      }
      CpAsyncCommit();
    };
    for (int i = 0; i < stages - 1; ++i) produce(i);
    CpAsyncWaitDyn(stages - 1);  // the rhs group is done
    __syncthreads();

    int ct = 0;  // update tiles consumed by this warp
    // Solves diagonal step s (this warp owns it: every update of its row block came from this
    // warp), then publishes "step s final" to the block (its mbarrier).
    auto diag = [&](const SweepPass& sp, int s) {
      DiagSolve<T, KC>(dm, dii, sp, V, n, sp.forward ? s : nt - 1 - s, lane);
      MbarArrive(step_done + s);  // each lane releases its own writes of x
      ds += W;
      if (ds >= nt) {
        ds = warp;
        ++dp;
      }
      prefetch_diag();
    };
    for (int p = 0; p < plan.npasses; ++p) {
      const SweepPass sp = PassOf(plan, p);
      if (warp == 0) diag(sp, 0);
      // Step s's updates need x of step s only, so a warp runs ahead until it needs a step that is
      // not final yet; the owner of s + 1 applies M(s + 1, s) first and solves s + 1 at once.
      for (int s = 0; s + 1 < nt; ++s) {
        const int O = sp.forward ? s : nt - 1 - s;
        bool waited = false;
        for (int t = seq.Owned(s + 1); t < nt; t += W) {
          CpAsyncWaitDyn(stages - 2);
          __syncwarp();
          produce((ct + stages - 1) % stages);  // the slot consumed last time
          T mrow[32];
          TileRow(ring + (ct++ % stages) * Cfg::kElems, sp.transposed, lane, mrow);
          if (!waited) {
            MbarWait(step_done + s, parity);
            waited = true;
          }
          BlockUpdate<T, KC>(mrow, V, n, sp.forward ? t : nt - 1 - t, O, lane);
          __syncwarp();
          if (t == s + 1) diag(sp, t);
        }
      }
      __syncthreads();  // the pass is complete (every update precedes its row block's diagonal step)
      parity ^= 1;
    }
    CpAsyncWait<0>();
    __syncthreads();
    StoreRhs<T, KC>(x + mat * int64_t{n} * k, V, Pm, n, k, c0, trans, threadIdx.x, blockDim.x);
    __syncthreads();  // the next item overwrites V
  }
}

template <typename T>
constexpr int PanelStages() {
  return sizeof(T) == 4 ? kGetrsPanelStagesF32 : kGetrsPanelStagesF64;
}

template <typename T, int KC>
cudaError_t LaunchPanelGetrs(cudaStream_t stream, const T* lu, const int32_t* perm, const T* b, T* x,
                             int64_t batch, int n, int k, bool trans) {
  using Cfg = TileCfg<T>;
  const int nt = (n + 31) / 32;
  auto smem_for = [&](int stages) {
    return (size_t(kGetrsPanelWarps) * stages * Cfg::kElems + size_t(nt) * 32 * KC) * sizeof(T) +
           8 * size_t(nt) + 8;  // + step_done[nt], 8-byte aligned
  };
  int stages = PanelStages<T>();
  while (stages > 2 && smem_for(stages) > 227 * 1024) --stages;
  const size_t smem = smem_for(stages);
  if (smem > 227 * 1024) return cudaErrorInvalidValue;
  auto kernel = PanelGetrsKernel<T, KC>;
  cudaError_t e = cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, int(smem));
  if (e != cudaSuccess) return e;
  // f32: two ~110 KB blocks per SM only with the whole carveout as shared memory
  e = cudaFuncSetAttribute(kernel, cudaFuncAttributePreferredSharedMemoryCarveout, cudaSharedmemCarveoutMaxShared);
  if (e != cudaSuccess) return e;
  const int col_blocks = static_cast<int>((int64_t{k} + KC - 1) / KC);
  const int64_t items = batch * col_blocks;
  unsigned grid = 0;
  struct Tag {};
  if ((e = detail::PersistentGrid<Tag>(kernel, kGetrsPanelWarps * 32, smem, items, &grid)) != cudaSuccess)
    return e;
  const bool vec_ok = n % Cfg::kVec == 0 && reinterpret_cast<uintptr_t>(lu) % 16 == 0;
  kernel<<<grid, kGetrsPanelWarps * 32, smem, stream>>>(lu, perm, b, x, batch, n, k, col_blocks, stages,
                                                        vec_ok, GetrsPlan(trans), trans);
  return cudaGetLastError();
}

// =================================================================================================
// dispatch
// =================================================================================================

// SM count of the current device, queried once per device (0 if the query fails).
inline int64_t SmCount() {
  constexpr int kMaxDevices = 64;
  static int sms[kMaxDevices] = {};  // benign race: same value written
  int dev = 0;
  if (cudaGetDevice(&dev) != cudaSuccess || dev >= kMaxDevices) return 0;
  if (sms[dev] == 0 && cudaDeviceGetAttribute(&sms[dev], cudaDevAttrMultiProcessorCount, dev) != cudaSuccess)
    return 0;
  return sms[dev];
}

template <typename T>
cudaError_t LaunchGetrsAs(cudaStream_t stream, const T* lu, const int32_t* perm, const T* b, T* x,
                          int64_t batch, int n, int k, bool trans, GetrsClass cls) {
  if (batch < 0 || n < 0 || k < 0) return cudaErrorInvalidValue;
  if (batch == 0 || n == 0 || k == 0) return cudaSuccess;
  constexpr int KC = tuning::kTrsmTileCols;
  if (cls == GetrsClass::kAuto) {
    const int64_t items = batch * (k == 1 ? 1 : (int64_t{k} + KC - 1) / KC);
    if (k == 1 && n <= trsm_detail::TinyMaxN<T>()) cls = GetrsClass::kTiny;
    else if (n <= tuning::kTrsmSmallMaxN && SmallBytesPerMatrix<T>(n, k) <= tuning::kTrsmSmallMaxMatrixBytes)
      cls = GetrsClass::kSmall;
    else if ((k == 1 && n >= kGetrsPanelMinN) ||
             (n >= kGetrsPanelFewItemsMinN && items <= kGetrsPanelItemsPerSm * SmCount()))
      cls = GetrsClass::kPanel;
    else cls = GetrsClass::kTile;
  }
  switch (cls) {
    case GetrsClass::kTiny:
      if (k != 1) return cudaErrorInvalidValue;
      return LaunchTinyGetrs<T>(stream, lu, perm, b, x, batch, n, trans);
    case GetrsClass::kSmall:
      return LaunchSmallGetrs<T>(stream, lu, perm, b, x, batch, n, k, trans);
    case GetrsClass::kPanel: {
      // Launchers return cudaErrorInvalidValue before any CUDA call when the rhs block does not
      // fit in shared memory; the panel class then falls back to the tile class.
      const cudaError_t e = k == 1 ? LaunchPanelGetrs<T, 1>(stream, lu, perm, b, x, batch, n, k, trans)
                                   : LaunchPanelGetrs<T, KC>(stream, lu, perm, b, x, batch, n, k, trans);
      if (e != cudaErrorInvalidValue) return e;
      break;
    }
    default:
      break;
  }
  // tile (also the fallback of panel); KC = 1 when KC columns of the rhs do not fit on chip
  if (k > 1) {
    const cudaError_t e = LaunchTileGetrs<T, KC>(stream, lu, perm, b, x, batch, n, k, trans);
    if (e != cudaErrorInvalidValue) return e;
  }
  return LaunchTileGetrs<T, 1>(stream, lu, perm, b, x, batch, n, k, trans);
}

// Instantiated once per scalar type in cuda/getrs_f32.cu / cuda/getrs_f64.cu; every other includer
// (cuda/getrs.cu, tests) links against those.
extern template cudaError_t LaunchGetrsAs<float>(cudaStream_t, const float*, const int32_t*, const float*,
                                                 float*, int64_t, int, int, bool, GetrsClass);
extern template cudaError_t LaunchGetrsAs<double>(cudaStream_t, const double*, const int32_t*,
                                                  const double*, double*, int64_t, int, int, bool, GetrsClass);

}  // namespace getrs_detail
}  // namespace batchla
