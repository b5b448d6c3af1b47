// Batched Cholesky (potrf only), grid class: kPotrfGridMinN <= n <= PotrfGridMaxN<T> (cuda/tuning.h).
// Conventions and failure semantics: see cuda/potrf_small.cuh.
//
// The matrix, padded to NP x NP with identity beyond n, lives in REGISTERS of a GR x GC thread grid:
// element (i, j) on thread (i % GR, j % GC). The cyclic deal keeps every thread busy while the
// trailing matrix shrinks. Right-looking in LDL^T form (as the wide class, on a 2-D grid): step k
// subtracts s_i s_j / d_k from the Schur complement S, with s = S(:, k) and d_k = s_k; at the end
// L(i, j) = S(i, j) / sqrt(d_j). One block barrier per step: the owners of column k + 1 (half of one
// warp) update it first and publish it in the other half of a double-buffered shared column, then
// every thread finishes step k; each thread takes d_k and 1 / d_k from the published column.
// Register indices stay static: the step loop is split into (column block kb, unrolled) x (column
// in block, runtime). The next matrix of the block is staged into shared memory with cp.async while
// this one is factored.
#pragma once

#include "cuda/potrf_wide.cuh"

namespace batchla {
namespace detail {

template <typename T, int GR_, int GC_, int NP_>
struct GridCfg {
  static constexpr int GR = GR_, GC = GC_, NP = NP_;
  static constexpr int QR = NP / GR, QC = NP / GC;  // rows / columns per thread
  static constexpr int NT = GR * GC;
  static_assert(NP % GR == 0 && NP % GC == 0, "NP must be a multiple of the grid");
  static constexpr int kV = 16 / int(sizeof(T));  // elements per 16 B granule
  // Block (a, b) of a thread's elements holds rows [GR a, GR a + GR) and columns [GC b, GC b + GC):
  // it never touches the lower triangle when all its rows lie above all its columns.
  static constexpr bool Lower(int a, int b) { return GR * a + GR - 1 >= GC * b; }
  // Stage row stride: one granule of padding keeps 16 B row starts and spreads column reads.
  static __host__ __device__ constexpr int Ld(int n) { return RoundUp(n, kV) + kV; }
  // Column-major thread numbering (tid = tc * GR + tr): the owners of one column share a warp, so
  // only that warp runs the publish branch of a step (the others skip it, uniformly).
  static_assert(GC % GR == 0 && 32 % GR == 0, "one warp holds whole thread columns");
  static constexpr int kM = GC / GR;
  // Position of s_i in the published column: rows are read as thread row (i % GR)'s QR values,
  // columns as thread column (j % GC)'s QC values; with GC = kM GR a row i = tr + GR a maps to
  // column position tr QC + ColOff(a). When GR == GC both orders coincide (one buffer).
  static constexpr int ColOff(int a) { return GR * (a % kM) * QC + a / kM; }
  static constexpr bool kOneBuf = GR == GC;
  static constexpr int kRing = 2;  // published columns: column k in slot k % 2
};

// Ring of published columns, permuted so that a thread's rows (columns) are contiguous, and every
// pivot d for the final scaling.
template <typename T, typename C>
struct GridShared {
  T rows[C::kRing][C::NP];                      // s_i at (i % GR) * QR + i / GR
  T cols[C::kOneBuf ? 1 : C::kRing][C::NP];     // s_j at (j % GC) * QC + j / GC (GR != GC only)
  T d[C::NP];
  __device__ T* Cols(int slot) { return C::kOneBuf ? rows[slot] : cols[C::kOneBuf ? 0 : slot]; }
};

template <typename T, typename C>
__host__ __device__ constexpr size_t GridSmemBytes(int n) {
  return RoundUp(n * C::Ld(n) * int(sizeof(T)), 16) + sizeof(GridShared<T, C>);
}

// Issues the cp.async copies of one n x n matrix into the stage (row stride C::Ld(n)).
template <typename T, typename C>
__device__ __forceinline__ void GridStage(const T* __restrict__ src, int n, T* st, bool vec) {
  const int ld = C::Ld(n);
  if (vec) {  // 16 B granules: rows are whole granules and src is 16 B aligned
    const int per_row = n / C::kV, total = n * per_row;
    for (int e = threadIdx.x; e < total; e += C::NT) {
      const int i = e / per_row, q = e - i * per_row;
      CpAsync<16>(st + i * ld + q * C::kV, src + static_cast<int64_t>(e) * C::kV);
    }
  } else {
    for (int e = threadIdx.x; e < n * n; e += C::NT) {
      const int i = e / n, j = e - i * n;
      CpAsync<int(sizeof(T))>(st + i * ld + j, src + e);
    }
  }
  CpAsyncCommit();
}

// Loads Q consecutive shared elements (16 B aligned when Q * sizeof(T) is a multiple of 16).
template <typename T, int Q>
__device__ __forceinline__ void GridLoadVec(const T* p, T (&v)[Q]) {
  if constexpr ((Q * sizeof(T)) % 16 == 0) {
#pragma unroll
    for (int q = 0; q < Q; q += Vec16<T>::kN) Vec16<T>::Load(p + q, v + q);
  } else {
#pragma unroll
    for (int q = 0; q < Q; ++q) v[q] = p[q];
  }
}

// Step k of the owners of column k + 1 (column block B of theirs; half of one warp): update that
// column first and write it to `slot` (rows from k + 1 on: the others hold upper-triangle garbage).
// cj[B] is cleared so that the bulk update of step k does not apply it twice.
template <typename T, typename C, int B>
__device__ __forceinline__ void GridPublish(T (&S)[C::QR][C::QC], const T (&ci)[C::QR], T (&cj)[C::QC], int tr,
                                            int k1, GridShared<T, C>* sh, int slot) {
  T* rows = sh->rows[slot] + tr * C::QR;
  T* cols = sh->Cols(slot) + tr * C::QC;
#pragma unroll
  for (int a = 0; a < C::QR; ++a) {
    if (!C::Lower(a, B)) continue;
    S[a][B] = fma(-ci[a], cj[B], S[a][B]);
    if (tr + C::GR * a >= k1) {
      rows[a] = S[a][B];
      if (!C::kOneBuf) cols[C::ColOff(a)] = S[a][B];
    }
  }
  cj[B] = T(0);
}

template <typename T, typename C, int MINB>
__global__ void __launch_bounds__(C::NT, MINB)
    GridKernel(const T* a, T* out, int32_t* info, int64_t batch, int n, int mode, bool vec) {
  using Sh = GridShared<T, C>;
  constexpr int GR = C::GR, GC = C::GC, QR = C::QR, QC = C::QC, NT = C::NT;
  extern __shared__ __align__(16) unsigned char smraw[];
  const int ld = C::Ld(n);
  T* st = reinterpret_cast<T*>(smraw);
  auto* sh = reinterpret_cast<Sh*>(smraw + RoundUp(n * ld * int(sizeof(T)), 16));
  constexpr int R = C::kRing;
  const int tid = threadIdx.x, tr = tid % GR, tc = tid / GR;
  const int64_t nn = static_cast<int64_t>(n) * n;
  // Buffer slots a step never writes are read (multiplied by 0): keep them finite.
  for (int e = tid; e < int(sizeof(Sh) / sizeof(T)); e += NT) reinterpret_cast<T*>(sh)[e] = T(0);
  if (blockIdx.x < batch) GridStage<T, C>(a + blockIdx.x * nn, n, st, vec);
  for (int64_t mat = blockIdx.x; mat < batch; mat += gridDim.x) {
    CpAsyncWaitAll();
    __syncthreads();
    // Opaque copies of the thread coordinates for the load and store phases: otherwise the compiler
    // hoists every element's offset and bounds test out of the matrix loop, and those QR x QC
    // values, live across the factor, spill.
    int ti = tr, tj = tc;
    asm volatile("" : "+r"(ti), "+r"(tj));
    // Registers from the stage (identity beyond n; the strict upper triangle is never used).
    T S[QR][QC];
#pragma unroll
    for (int ra = 0; ra < QR; ++ra)
#pragma unroll
      for (int b = 0; b < QC; ++b) {
        if (!C::Lower(ra, b)) continue;  // never read
        const int i = ti + GR * ra, j = tj + GC * b;
        T v = T(i == j ? 1 : 0);
        if (i < n && j <= i) {
          const T lo = st[i * ld + j], up = st[j * ld + i];
          v = mode == kLoadLower ? lo : mode == kLoadUpper ? up : (lo + up) / T(2);
        }
        S[ra][b] = v;
      }
    if (tc == 0) {  // publish column 0 (thread column 0 owns it, block 0)
#pragma unroll
      for (int ra = 0; ra < QR; ++ra) {
        sh->rows[0][tr * QR + ra] = S[ra][0];
        if (!C::kOneBuf) sh->Cols(0)[tr * QC + C::ColOff(ra)] = S[ra][0];
      }
    }
    __syncthreads();  // stage consumed, column 0 published
    if (mat + gridDim.x < batch) GridStage<T, C>(a + (mat + gridDim.x) * nn, n, st, vec);

    int fail = 0;
    bool done = false;
    StaticFor<0, QC>([&](auto kb_c) {  // column block kb: static, so register indices stay static
      constexpr int kb = decltype(kb_c)::value;
      if (done) return;
#pragma unroll 1
      for (int kc = 0; kc < GC; ++kc) {
        const int k = kb * GC + kc, slot = k % R, k1 = k + 1;
        if (k >= n) break;
        T ci[QR], cj[QC];
        GridLoadVec<T, QR>(sh->rows[slot] + tr * QR, ci);
        GridLoadVec<T, QC>(sh->Cols(slot) + tc * QC, cj);
        const T dk = sh->rows[slot][(k % GR) * QR + k / GR];
        if (!(dk > T(0))) {  // block-uniform: every thread reads the same pivot
          fail = k1;
          break;
        }
        if (tid == 0) sh->d[k] = dk;
        const T rd = T(1) / dk;
        // Column blocks b < kb are done (k >= kb GC); in block kb only columns tc > kc remain.
#pragma unroll
        for (int b = kb; b < QC; ++b) cj[b] = b > kb || tc > kc ? cj[b] * rd : T(0);
        if (k1 < n && tc == k1 % GC) {  // half a warp: update and publish column k + 1
          if (kc + 1 < GC) GridPublish<T, C, kb>(S, ci, cj, tr, k1, sh, k1 % R);
          else if constexpr (kb + 1 < QC) GridPublish<T, C, kb + 1>(S, ci, cj, tr, k1, sh, k1 % R);
        }
#pragma unroll
        for (int b = kb; b < QC; ++b) {
#pragma unroll
          for (int aa = 0; aa < QR; ++aa) {
            // upper block, or rows all above the trailing matrix (statically, then for this k)
            if (!C::Lower(aa, b) || GR * aa + GR - 1 < kb * GC || GR * aa + GR - 1 <= k) continue;
            S[aa][b] = fma(-ci[aa], cj[b], S[aa][b]);
          }
        }
        __syncthreads();
      }
      done = fail != 0 || kb * GC + GC >= n;
    });

    __syncthreads();  // every step done, sh->d complete
    // L = S D^-1/2 (lower), zeros above; NaN lower triangle on failure.
    T* om = out + mat * nn;
#pragma unroll
    for (int b = 0; b < QC; ++b) {
      const int j = tj + GC * b;
      if (j >= n) continue;
      const T dj = sh->d[j], sq = Scalar<T>::Sqrt(dj), rs = T(1) / sq;
#pragma unroll
      for (int aa = 0; aa < QR; ++aa) {
        const int i = ti + GR * aa;
        if (i >= n) continue;
        T v = T(0);
        if (C::Lower(aa, b) && j <= i) v = fail ? Scalar<T>::NaN() : (i == j ? sq : S[aa][b] * rs);
        om[static_cast<int64_t>(i) * n + j] = v;
      }
    }
    if (tid == 0) info[mat] = fail;
    __syncthreads();  // sh->d read before the next matrix publishes its column 0
  }
  CpAsyncWaitAll();
}

// 8 x 16 threads per matrix: 128 threads with 72 (NP = 128) or 42 (NP = 96) data registers each
// measured faster than 16 x 16 and 16 x 32 (fewer threads: less fixed work per step), as long as
// nothing spills (bench/NOTES.md, "Grid class"). Minimum blocks per SM: the register budget.
template <typename T, int NP>
struct GridShape {
  using C = GridCfg<T, 8, 16, NP>;
  static constexpr int kMinB = sizeof(T) == 8 && NP > 96 ? 1 : 3;
};

template <typename T, int NP>
cudaError_t GridLaunchNP(cudaStream_t s, const T* a, T* out, int32_t* info, int64_t batch, int n, int mode) {
  using G = GridShape<T, NP>;
  using C = typename G::C;
  auto kern = GridKernel<T, C, G::kMinB>;
  const size_t smem = GridSmemBytes<T, C>(n);
  cudaError_t e = cudaFuncSetAttribute(kern, cudaFuncAttributeMaxDynamicSharedMemorySize, int(smem));
  if (e != cudaSuccess) return e;
  unsigned grid = 0;
  // The stage grows with n: so may the blocks per SM fall (f64 NP = 96: 3 at n = 72, 2 at n = 96).
  if ((e = PersistentGridKeyed<G, NP + 1>(kern, C::NT, smem, batch, n, &grid)) != cudaSuccess) return e;
  const bool vec = n % C::kV == 0 && reinterpret_cast<uintptr_t>(a) % 16 == 0;
  kern<<<grid, C::NT, smem, s>>>(a, out, info, batch, n, mode, vec);
  return cudaGetLastError();
}

}  // namespace detail
}  // namespace batchla
