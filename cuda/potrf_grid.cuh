// Batched Cholesky (potrf only), grid class: n in (kPotrfGridMinN - 1, kPotrfGridMaxN]. Conventions
// and failure semantics: see cuda/potrf_small.cuh.
//
// The matrix, padded to NP x NP with identity beyond n, lives in REGISTERS of a GR x GC thread grid:
// element (i, j) on thread (i % GR, j % GC). The cyclic deal keeps every thread busy while the
// trailing matrix shrinks. Right-looking in LDL^T form (as the wide class, on a 2-D grid): step k
// subtracts s_i s_j / d_k from the Schur complement S, with s = S(:, k) and d_k = s_k; at the end
// L(i, j) = S(i, j) / sqrt(d_j). One block barrier per step: the owners of column k + 1 update it
// first and publish it (and d_{k+1}, 1 / d_{k+1}) in the other half of a double-buffered shared
// column, then every thread finishes step k. Register indices stay static: the step loop is split
// into (column block kb, unrolled) x (column in block, runtime). The next matrix of the block is
// staged into shared memory with cp.async while this one is factored.
#pragma once

#include <type_traits>

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
};

// Published column: s permuted so that a thread's rows (columns) are contiguous; d and 1/d.
template <typename T, int NP>
struct GridShared {
  T rows[2][NP];  // s_i at (i % GR) * QR + i / GR
  T cols[2][NP];  // s_j at (j % GC) * QC + j / GC
  T rd[2];        // 1 / d of the published column
  T d[NP];        // every pivot, for the final scaling
};

template <typename T, typename C>
__host__ __device__ constexpr size_t GridSmemBytes(int n) {
  return RoundUp(n * C::Ld(n) * int(sizeof(T)), 16) + sizeof(GridShared<T, C::NP>);
}

// Issues the cp.async copies of one n x n matrix into the stage (row stride C::Ld(n)).
template <typename T, typename C>
__device__ __forceinline__ void GridStage(const T* __restrict__ src, int n, T* st, bool vec) {
  const int ld = C::Ld(n);
  if (vec) {  // 16 B granules: rows are whole granules and src is 16 B aligned
    const int per_row = n / C::kV, total = n * per_row;
    for (int e = threadIdx.x; e < total; e += C::NT) {
      const int i = e / per_row, q = e - i * per_row;
      PfCpAsync16(st + i * ld + q * C::kV, src + static_cast<int64_t>(e) * C::kV);
    }
  } else {
    for (int e = threadIdx.x; e < n * n; e += C::NT) {
      const int i = e / n, j = e - i * n;
      CpAsyncElem<T>(st + i * ld + j, src + e);
    }
  }
  PfCpCommit();
}

template <int I, int N, typename F>
__device__ __forceinline__ void StaticFor(F&& f) {
  if constexpr (I < N) {
    f(std::integral_constant<int, I>{});
    StaticFor<I + 1, N>(f);
  }
}

// Loads Q consecutive shared elements (16 B aligned when Q * sizeof(T) is a multiple of 16).
template <typename T, int Q>
__device__ __forceinline__ void GridLoadVec(const T* p, T (&v)[Q]) {
  if constexpr ((Q * sizeof(T)) % 16 == 0) {
#pragma unroll
    for (int q = 0; q < Q; q += 16 / int(sizeof(T))) {
      if constexpr (sizeof(T) == 4) {
        const float4 x = *reinterpret_cast<const float4*>(p + q);
        v[q] = x.x, v[q + 1] = x.y, v[q + 2] = x.z, v[q + 3] = x.w;
      } else {
        const double2 x = *reinterpret_cast<const double2*>(p + q);
        v[q] = x.x, v[q + 1] = x.y;
      }
    }
  } else {
#pragma unroll
    for (int q = 0; q < Q; ++q) v[q] = p[q];
  }
}

// Step k of the owners of column k + 1 (column block B of theirs): update that column first and
// publish it into buffer `nxt`; the thread on its diagonal also publishes d_{k+1} and 1 / d_{k+1}.
// cj[B] is cleared so that the bulk update of step k does not apply it twice.
template <typename T, typename C, int B>
__device__ __forceinline__ void GridPublish(T (&S)[C::QR][C::QC], const T (&ci)[C::QR], T (&cj)[C::QC], int tr,
                                            int k1, GridShared<T, C::NP>* sh, int nxt) {
  T dval = T(1);
#pragma unroll
  for (int a = 0; a < C::QR; ++a) {
    if (!C::Lower(a, B)) continue;
    const int i = tr + C::GR * a;
    S[a][B] = fma(-ci[a], cj[B], S[a][B]);
    if (i >= k1) {
      sh->rows[nxt][tr * C::QR + a] = S[a][B];
      sh->cols[nxt][(i % C::GC) * C::QC + i / C::GC] = S[a][B];
    }
    if (i == k1) dval = S[a][B];
  }
  cj[B] = T(0);
  if (tr == k1 % C::GR) {
    sh->d[k1] = dval;
    sh->rd[nxt] = T(1) / dval;
  }
}

template <typename T, typename C, int MINB>
__global__ void __launch_bounds__(C::NT, MINB)
    GridKernel(const T* a, T* out, int32_t* info, int64_t batch, int n, int mode, bool vec) {
  using Sh = GridShared<T, C::NP>;
  constexpr int GR = C::GR, GC = C::GC, QR = C::QR, QC = C::QC, NT = C::NT;
  extern __shared__ __align__(16) unsigned char smraw[];
  const int ld = C::Ld(n);
  T* st = reinterpret_cast<T*>(smraw);
  auto* sh = reinterpret_cast<Sh*>(smraw + RoundUp(n * ld * int(sizeof(T)), 16));
  const int tid = threadIdx.x, tc = tid % GC, tr = tid / GC;
  const int64_t nn = static_cast<int64_t>(n) * n;
  // Buffer slots a step never writes are read (multiplied by 0): keep them finite.
  for (int e = tid; e < int(sizeof(Sh) / sizeof(T)); e += NT) reinterpret_cast<T*>(sh)[e] = T(0);
  if (blockIdx.x < batch) GridStage<T, C>(a + blockIdx.x * nn, n, st, vec);
  for (int64_t mat = blockIdx.x; mat < batch; mat += gridDim.x) {
    CpAsyncWaitAll();
    __syncthreads();
    // Registers from the stage (identity beyond n; the strict upper triangle is never used).
    T S[QR][QC];
#pragma unroll
    for (int ra = 0; ra < QR; ++ra)
#pragma unroll
      for (int b = 0; b < QC; ++b) {
        if (!C::Lower(ra, b)) continue;  // never read
        const int i = tr + GR * ra, j = tc + GC * b;
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
        const int i = tr + GR * ra;
        sh->rows[0][tr * QR + ra] = S[ra][0];
        sh->cols[0][(i % GC) * QC + i / GC] = S[ra][0];
      }
      if (tr == 0) sh->d[0] = S[0][0], sh->rd[0] = T(1) / S[0][0];
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
        const int k = kb * GC + kc, cur = k & 1;
        if (k >= n) break;
        const T dk = sh->d[k];
        if (!(dk > T(0))) {  // block-uniform: every thread reads the same pivot
          fail = k + 1;
          break;
        }
        T ci[QR], cj[QC];
        GridLoadVec<T, QR>(sh->rows[cur] + tr * QR, ci);
        GridLoadVec<T, QC>(sh->cols[cur] + tc * QC, cj);
        const T rd = sh->rd[cur];
#pragma unroll
        for (int b = 0; b < QC; ++b) cj[b] = tc + GC * b > k ? cj[b] * rd : T(0);
        const int k1 = k + 1;
        if (k1 < n && tc == k1 % GC) {
          if (kc + 1 < GC) GridPublish<T, C, kb>(S, ci, cj, tr, k1, sh, cur ^ 1);
          else if constexpr (kb + 1 < QC) GridPublish<T, C, kb + 1>(S, ci, cj, tr, k1, sh, cur ^ 1);
        }
#pragma unroll
        for (int b = 0; b < QC; ++b) {
          if (GC * b + GC - 1 <= k) continue;  // this thread column's block is done
#pragma unroll
          for (int aa = 0; aa < QR; ++aa) {
            if (!C::Lower(aa, b) || GR * aa + GR - 1 <= k) continue;  // upper, or above the trailing part
            S[aa][b] = fma(-ci[aa], cj[b], S[aa][b]);
          }
        }
        __syncthreads();
      }
      done = fail != 0 || kb * GC + GC >= n;
    });

    // L = S D^-1/2 (lower), zeros above; NaN lower triangle on failure.
    T* om = out + mat * nn;
#pragma unroll
    for (int b = 0; b < QC; ++b) {
      const int j = tc + GC * b;
      if (j >= n) continue;
      const T dj = sh->d[j], sq = Scalar<T>::Sqrt(dj), rs = T(1) / sq;
#pragma unroll
      for (int aa = 0; aa < QR; ++aa) {
        const int i = tr + GR * aa;
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

// Threads per block / minimum blocks per SM of each padded size (registers: see bench/NOTES.md).
template <typename T, int NP>
struct GridShape;
template <int NP>
struct GridShape<float, NP> {
  using C = GridCfg<float, 16, 16, NP>;
  static constexpr int kMinB = NP <= 64 ? 4 : NP <= 96 ? 3 : 2;
};
template <int NP>
struct GridShape<double, NP> {
  using C = GridCfg<double, 16, NP <= 64 ? 16 : 32, NP>;
  static constexpr int kMinB = 1;
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
  if ((e = PersistentGrid<G>(kern, C::NT, smem, batch, &grid)) != cudaSuccess) return e;
  const bool vec = n % C::kV == 0 && reinterpret_cast<uintptr_t>(a) % 16 == 0;
  kern<<<grid, C::NT, smem, s>>>(a, out, info, batch, n, mode, vec);
  return cudaGetLastError();
}

}  // namespace detail
}  // namespace batchla
