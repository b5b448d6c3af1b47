// Batched Cholesky (potrf) and fused SPD solve (posv): wide class, n in (kPotrfSmallMaxN,
// kPotrfWideMaxN] (33..64). Conventions and failure semantics: see cuda/potrf_small.cuh.
//
// One block of N = 64 threads (2 warps) per matrix, runtime n; lane r holds row r in registers
// (rows n..63 are identity rows). The matrix is staged with element cp.async (all loads of the
// block in flight at once) into shared memory (row stride 65), read into rows per LoadMode, and
// factored right-looking WITHOUT square roots in the loop (the LDL^T form of the Schur complement):
// at step j every lane publishes its raw a_rj in tb[j][r] (one barrier per step), lane j also
// 1/d_j (d_j = a_jj), and lanes update a_rc -= (a_rj / d_j) a_cj with 16-byte broadcast loads.
// At the end L[r][c] = a_rc / sqrt(d_c), L[r][r] = sqrt(d_r). info = first j with !(d_j > 0).
// posv: the first rhs column rides along as an extra column (z = W^-1 b, W = unit lower a / d),
// further columns are solved forward by 32-row blocks (shuffles in a warp, one cross-warp GEMV);
// then x = W^-T D^-1 z backward by blocks the same way, a_jr read from shared memory.
#pragma once

#include "cuda/potrf_small.cuh"

namespace batchla {
namespace detail {

template <typename T>
struct WideCfg {
  static constexpr int kN = tuning::kPotrfWideMaxN;
  static constexpr int kLd = kN | 1;                               // staging / L row stride
  static constexpr int kTS = RoundUp(kN + 1, 16 / int(sizeof(T)));  // tb row stride; slot kN = b
  static constexpr int kArea = RoundUp(kN * kLd > kN * kTS ? kN * kLd : kN * kTS, 16 / int(sizeof(T)));
};

template <typename T, bool POSV>
// No min-blocks bound: capping registers (f32 128, f64 168) spills and measured slower (NOTES).
__global__ void __launch_bounds__(tuning::kPotrfWideMaxN)
    WideKernel(const T* a, const T* b, T* out, int32_t* info, int64_t batch, int n, int k, int mode) {
  using C = WideCfg<T>;
  constexpr int N = C::kN, LD = C::kLd, TS = C::kTS;
  using V = Vec16<T>;
  constexpr int kV = V::kN;
  static_assert(N == 64, "wide kernel: two warps, lane per row");
  __shared__ __align__(16) T S[C::kArea];
  __shared__ __align__(16) T rs[N];
  __shared__ T invs[N];
  __shared__ T xs[N];
  __shared__ int bad[2];
  const int r = threadIdx.x, lane = r & 31, warp = r >> 5;
  const int64_t nn = static_cast<int64_t>(n) * n;
  const int stepA = mode == kLoadUpper ? LD : 1;
  for (int64_t mat = blockIdx.x; mat < batch; mat += gridDim.x) {
    const T* am = a + mat * nn;
    // f32: an opaque copy of the row per matrix keeps the 64 load offsets inside the matrix loop
    // (hoisted, they stay live across the factor): 166 -> 96 registers, n = 64 0.286 -> 0.335 of
    // the roofline. f64 keeps them hoisted: opaque it measured 0.353 -> 0.266 at n = 64 with the
    // symmetrized read (bench/NOTES.md, "Grid per-n launch and wide-class opaque row").
    int ro = r;
    if constexpr (sizeof(T) == 4) asm volatile("" : "+r"(ro));
    const int baseA = mode == kLoadUpper ? ro : ro * LD;
    if (r < n) {  // thread r copies column r of every row it needs (each row coalesced)
      for (int i = 0; i < n; ++i) {
        const bool keep = mode == kLoadSym || (mode == kLoadLower ? r <= i : r >= i);
        if (keep) CpAsync<int(sizeof(T))>(S + i * LD + r, am + static_cast<int64_t>(i) * n + r);
      }
    }
    const int64_t bbase = mat * n * static_cast<int64_t>(k);
    T bv = T(0);
    if (POSV && r < n) bv = b[bbase + static_cast<int64_t>(r) * k];
    CpAsyncWaitAll();
    __syncthreads();
    T row[N];
#pragma unroll
    for (int c = 0; c < N; ++c) {
      T v = T(0);
      if (ro >= n) {
        v = c == ro ? T(1) : T(0);
      } else if (c <= ro) {
        v = S[baseA + c * stepA];
        if (mode == kLoadSym) v = (v + S[c * LD + ro]) / T(2);
      }
      row[c] = v;
    }
    __syncthreads();  // S becomes tb
    T dmine = T(1), invmine = T(1);
#pragma unroll
    for (int j = 0; j < N; ++j) {
      if (j >= n) break;
      T* tj = S + j * TS;
      tj[r] = row[j];
      if (r == j) {
        dmine = row[j];
        invmine = T(1) / dmine;
        invs[j] = invmine;
        if (POSV) tj[N] = bv;
      }
      __syncthreads();
      const T mult = row[j] * invs[j];
      if (POSV && r > j) bv = fma(-mult, tj[N], bv);
#pragma unroll
      for (int kk = ((j + 1) / kV) * kV; kk < N; kk += kV) {
        const typename V::type v = *reinterpret_cast<const typename V::type*>(tj + kk);
#pragma unroll
        for (int e = 0; e < kV; ++e) {
          const int c = kk + e;
          if (c > j) row[c] = fma(-mult, V::Get(v, e), row[c]);
        }
      }
    }
    const unsigned bw = __ballot_sync(0xffffffffu, r < n && !(dmine > T(0)));
    if (lane == 0) bad[warp] = bw ? warp * 32 + __ffs(bw) : 0;
    T s = T(0);
    if constexpr (!POSV) {
      s = Scalar<T>::Sqrt(dmine);
      rs[r] = T(1) / s;
    }
    __syncthreads();  // every tb read done; bad / rs visible
    const int inf = bad[0] ? bad[0] : bad[1];
    if (r == 0) info[mat] = inf;
    if constexpr (!POSV) {
      if (r < n) {
#pragma unroll
        for (int c = 0; c < N; ++c)
          if (c < n) S[r * LD + c] = c < r ? row[c] * rs[c] : (c == r ? s : T(0));
      }
      __syncthreads();
      T* om = out + mat * nn;
      if (r < n)
        for (int i = 0; i < n; ++i)
          om[static_cast<int64_t>(i) * n + r] = r <= i ? (inf ? Scalar<T>::NaN() : S[i * LD + r]) : T(0);
    } else {
      if (r < n) {
#pragma unroll
        for (int c = 0; c < N; ++c)
          if (c < r) S[r * LD + c] = row[c];
      }
      __syncthreads();
      for (int cc = 0; cc < k; ++cc) {
        T y = bv;  // z for column 0 (eliminated during the factorization)
        if (cc > 0) {
          y = r < n ? b[bbase + static_cast<int64_t>(r) * k + cc] : T(0);
          if (warp == 0) {  // forward, rows 0..31: z_r = y_r - sum_j (a_rj / d_j) z_j
#pragma unroll
            for (int j = 0; j < 32; ++j) {
              const T t = ShflIdx(y * invmine, j);
              if (lane > j) y = fma(-row[j], t, y);
              if (lane == j) xs[j] = t;
            }
          }
          __syncthreads();
          if (warp == 1) {
#pragma unroll
            for (int j = 0; j < 32; ++j) y = fma(-row[j], xs[j], y);
#pragma unroll
            for (int j = 0; j < 32; ++j) {
              if (32 + j >= n) break;
              const T t = ShflIdx(y * invmine, j);
              if (lane > j) y = fma(-row[32 + j], t, y);
            }
          }
        }
        // backward: x_j = (z_j - sum_{r > j} a_rj x_r) / d_j
        if (warp == 1) {
#pragma unroll
          for (int j = 31; j >= 0; --j) {
            if (32 + j >= n) continue;
            const T xj = ShflIdx(y * invmine, j);
            if (lane == j) y = xj;
            if (lane < j) y = fma(-S[(32 + j) * LD + r], xj, y);
          }
          xs[r] = y;
        }
        __syncthreads();
        if (warp == 0) {
          for (int j = 32; j < n; ++j) y = fma(-S[j * LD + r], xs[j], y);
#pragma unroll
          for (int j = 31; j >= 0; --j) {
            const T xj = ShflIdx(y * invmine, j);
            if (lane == j) y = xj;
            if (lane < j) y = fma(-S[j * LD + r], xj, y);
          }
        }
        if (r < n) out[bbase + static_cast<int64_t>(r) * k + cc] = inf ? Scalar<T>::NaN() : y;
        __syncthreads();  // xs reused by the next column
      }
    }
    __syncthreads();  // S reused by the next matrix
  }
}

template <typename T>
cudaError_t WideLaunch(cudaStream_t s, const T* a, const T* b, T* out, int32_t* info, int64_t batch,
                       int n, int k, int mode, bool posv) {
  constexpr int kT = tuning::kPotrfWideMaxN;
  if (posv) WideKernel<T, true><<<GridFor(batch), kT, 0, s>>>(a, b, out, info, batch, n, k, mode);
  else WideKernel<T, false><<<GridFor(batch), kT, 0, s>>>(a, b, out, info, batch, n, k, mode);
  return cudaGetLastError();
}

}  // namespace detail
}  // namespace batchla
