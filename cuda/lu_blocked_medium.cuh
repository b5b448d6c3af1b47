// Batched LU, medium class: one block per matrix, the whole matrix in shared memory (row-major,
// leading dimension n | 1 so that lanes walking down a column hit distinct banks). Factors with
// the blocked steps of cuda/lu_blocked.cuh, then writes the requested output (LuOutput): the
// factors, or X = A^-1 B / A^-1 (B or I streamed through shared memory in chunks of as many
// columns as fit, forward then backward substitution by 32-row blocks), or sign / log|det|.
#pragma once

#include "cuda/lu_blocked.cuh"
#include "cuda/lu_blocked_layout.cuh"

namespace batchla {
namespace detail {

// Xr (rows x kc) -= Lr (rows x jw, stride ld) * Xb (jw x kc); both X blocks stride ldx.
template <typename T, int NT>
__device__ __forceinline__ void LuUpdateRows(const T* Lr, int ld, T* Xr, const T* Xb, int ldx, int rows, int kc,
                                             int jw, bool wide) {
  if (wide) {
    LuGemm<T, NT, false>(Xr, ldx, rows, kc, Lr, ld, Xb, ldx, jw);
    return;
  }
  const float rkc = 1.0f / float(kc);
  for (int e = threadIdx.x; e < rows * kc; e += NT) {
    const int i = LuRowOf(e, rkc), c = e - i * kc;
    const T* ai = Lr + i * ld;
    T s0 = T(0), s1 = T(0);
    int q = 0;
    for (; q + 1 < jw; q += 2) {
      s0 = fma(ai[q], Xb[q * ldx + c], s0);
      s1 = fma(ai[q + 1], Xb[(q + 1) * ldx + c], s1);
    }
    if (q < jw) s0 = fma(ai[q], Xb[q * ldx + c], s0);
    Xr[i * ldx + c] -= s0 + s1;
  }
}

// X (n x kc, row stride ldx) := U^-1 L^-1 X with the unit-lower L / upper U packed in A (stride
// ld), by 32-row blocks: the diagonal block is solved by a warp per column (lane per row,
// shuffles; few columns) or a thread per column (32 entries in registers; many columns), then the
// rows beyond it are updated (a dot product per element, or LuGemm when there are many columns).
// Block-wide; X must be visible (caller synchronized).
template <typename T, int NT>
__device__ void LuTriSolve(const T* A, int ld, int n, T* X, int ldx, int kc) {
  const int tid = threadIdx.x, lane = tid & 31, warp = tid >> 5;
  const bool wide = kc >= 16;
  for (int J = 0; J < n; J += 32) {  // forward, unit diagonal
    const int jw = min(32, n - J);
    if (wide) {
      for (int c = tid; c < kc; c += NT) {
        T x[32];
#pragma unroll
        for (int r = 0; r < 32; ++r) x[r] = r < jw ? X[(J + r) * ldx + c] : T(0);
#pragma unroll
        for (int q = 0; q < 32; ++q)
#pragma unroll
          for (int r = q + 1; r < 32; ++r)
            if (r < jw) x[r] = fma(-A[(J + r) * ld + J + q], x[q], x[r]);
#pragma unroll
        for (int r = 0; r < 32; ++r)
          if (r < jw) X[(J + r) * ldx + c] = x[r];
      }
    } else {
      for (int c = warp; c < kc; c += NT / 32) {
        T x = lane < jw ? X[(J + lane) * ldx + c] : T(0);
        const T* arow = A + (J + (lane < jw ? lane : 0)) * ld + J;
        for (int jl = 0; jl < jw; ++jl) {
          const T xj = ShflIdx(x, jl);
          if (lane > jl && lane < jw) x = fma(-arow[jl], xj, x);
        }
        if (lane < jw) X[(J + lane) * ldx + c] = x;
      }
    }
    __syncthreads();
    const int below = n - J - jw;
    if (below > 0) {
      LuUpdateRows<T, NT>(A + (J + jw) * ld + J, ld, X + (J + jw) * ldx, X + J * ldx, ldx, below, kc, jw, wide);
      __syncthreads();
    }
  }
  for (int J = ((n - 1) / 32) * 32; J >= 0; J -= 32) {  // backward, U
    const int jw = min(32, n - J);
    if (wide) {
      for (int c = tid; c < kc; c += NT) {
        T x[32];
#pragma unroll
        for (int r = 0; r < 32; ++r) x[r] = r < jw ? X[(J + r) * ldx + c] : T(0);
#pragma unroll
        for (int q = 31; q >= 0; --q) {
          if (q < jw) {
            x[q] = x[q] / A[(J + q) * ld + J + q];
#pragma unroll
            for (int r = 0; r < q; ++r) x[r] = fma(-A[(J + r) * ld + J + q], x[q], x[r]);
          }
        }
#pragma unroll
        for (int r = 0; r < 32; ++r)
          if (r < jw) X[(J + r) * ldx + c] = x[r];
      }
    } else {
      for (int c = warp; c < kc; c += NT / 32) {
        T x = lane < jw ? X[(J + lane) * ldx + c] : T(0);
        const T* arow = A + (J + (lane < jw ? lane : 0)) * ld + J;
        for (int jl = jw - 1; jl >= 0; --jl) {
          if (lane == jl) x = x / arow[jl];
          const T xj = ShflIdx(x, jl);
          if (lane < jl) x = fma(-arow[jl], xj, x);
        }
        if (lane < jw) X[(J + lane) * ldx + c] = x;
      }
    }
    __syncthreads();
    if (J > 0) {
      LuUpdateRows<T, NT>(A + J, ld, X, X + J * ldx, ldx, J, kc, jw, wide);
      __syncthreads();
    }
  }
}

// Block per matrix (grid-stride over the batch). NT >= n: each panel row has its own thread.
// kcap: right-hand-side columns per solve chunk (fused solve / inverse), else 0.
// FUSED: the solve / inverse / slogdet outputs (a separate instantiation, so that the registers of
// the solve do not limit the occupancy of the factor-only kernel).
template <typename T, int NT, int MINB, bool FUSED>
__global__ void __launch_bounds__(NT, MINB) LuMediumKernel(LuArgs<T> args, int out, int kcap) {
  extern __shared__ __align__(16) unsigned char smraw[];
  const int n = args.n, ld = LuMediumLd(n), tid = threadIdx.x;
  T* A = reinterpret_cast<T*>(smraw);
  T* X = reinterpret_cast<T*>(smraw + LuMediumXOff<T>(n));
  int* piv = reinterpret_cast<int*>(smraw + LuMediumIntOff<T>(n, kcap));
  int* perm = piv + n;
  int* rowsrc = perm + n;
  auto* sh = reinterpret_cast<LuShared<T>*>(smraw + LuMediumIntOff<T>(n, kcap) + RoundUp(3 * n * 4, 16));
  const int64_t nn = static_cast<int64_t>(n) * n;
  for (int64_t mat = blockIdx.x; mat < args.batch; mat += gridDim.x) {
    LuCopy<T, NT>(args.a + mat * nn, n, A, ld, n, n);
    for (int i = tid; i < n; i += NT) perm[i] = i;
    if (tid == 0) sh->info = 0, sh->dcount = 0;
    __syncthreads();
    for (int k = 0; k < n; k += kLuNB) {
      const int w = min(kLuNB, n - k), m = n - k;
      T* P = A + k * ld + k;
      LuPanel<T, 1, NT>(P, ld, m, w, k, piv, rowsrc, sh);
      __syncthreads();
      const int newperm = tid < m ? perm[k + rowsrc[tid]] : 0;
      for (int c = tid; c < n - w; c += NT) {  // columns outside the panel
        if (c < k) LuColumnSwapSolve<T, false>(A, ld, k, w, c, rowsrc, sh, P, ld, nullptr, 0);
        else LuColumnSwapSolve<T, true>(A, ld, k, w, c + w, rowsrc, sh, P, ld, nullptr, 0);
      }
      __syncthreads();
      if (tid < m) perm[k + tid] = newperm;
      if (tid == 0) sh->dcount = 0;
      if (m > w) LuTrailing<T, NT, false>(P + w * ld + w, ld, m - w, m - w, P + w * ld, ld, P + w, ld);
      __syncthreads();
    }
    const int info = sh->info;
    if constexpr (!FUSED) {
      LuCopy<T, NT>(A, ld, args.lu + mat * nn, n, n, n);
      for (int i = tid; i < n; i += NT) {
        args.pivots[mat * n + i] = piv[i];
        if (args.perm) args.perm[mat * n + i] = perm[i];
      }
      if (tid == 0) args.info[mat] = info;
    } else if (out == int(LuOutput::kSlogdet)) {
      LuWriteSlogdet<T, NT>(A, ld + 1, piv, n, sh, args.sign + mat, args.logabsdet + mat);
    } else {
      const bool inverse = out == int(LuOutput::kInverse);
      const int kk = inverse ? n : args.k, ldx = LuSolveLd(kcap);
      const int64_t xbase = mat * n * static_cast<int64_t>(kk);
      T* x = (inverse ? args.inv : args.x) + xbase;
      for (int c0 = 0; c0 < kk; c0 += kcap) {
        const int kc = min(kcap, kk - c0);
        const float rkc = 1.0f / float(kc);
        for (int e0 = tid; e0 < n * kc; e0 += kLuCopyU * NT) {  // X = P B (or P I)
          T v[kLuCopyU];
#pragma unroll
          for (int u = 0; u < kLuCopyU; ++u) {
            const int e = e0 + u * NT, i = LuRowOf(e, rkc), c = e - i * kc;
            if (e < n * kc)
              v[u] = inverse ? T(perm[i] == c0 + c ? 1 : 0)
                             : args.b[xbase + static_cast<int64_t>(perm[i]) * kk + c0 + c];
          }
#pragma unroll
          for (int u = 0; u < kLuCopyU; ++u) {
            const int e = e0 + u * NT, i = LuRowOf(e, rkc);
            if (e < n * kc) X[i * ldx + e - i * kc] = v[u];
          }
        }
        __syncthreads();
        LuTriSolve<T, NT>(A, ld, n, X, ldx, kc);
        LuCopy<T, NT>(X, ldx, x + c0, kk, n, kc);
        __syncthreads();
      }
      if (tid == 0) args.info[mat] = info;
    }
    __syncthreads();
  }
}

template <typename T, int NT, int MINB, bool FUSED>
cudaError_t LuMediumLaunchNT(cudaStream_t s, const LuArgs<T>& args, LuOutput out) {
  int kcap = 0;
  if (out == LuOutput::kSolve) kcap = LuSolveCap<T>(args.n, args.k, kLuSmemLimit);
  if (out == LuOutput::kInverse) kcap = LuSolveCap<T>(args.n, args.n, kLuSmemLimit);
  size_t smem = LuMediumSmemBytes<T>(args.n, kcap);
  auto kern = LuMediumKernel<T, NT, MINB, FUSED>;
  const size_t optin = SmemOptin();  // cached per device (cuda/common.cuh)
  if (optin == 0) return cudaErrorInvalidDevice;
  if (kcap > 0 && smem > optin) {  // smaller parts (sm_80): fewer columns per chunk
    kcap = LuSolveCap<T>(args.n, out == LuOutput::kInverse ? args.n : args.k, optin);
    smem = LuMediumSmemBytes<T>(args.n, kcap);
  }
  cudaError_t e = cudaFuncSetAttribute(kern, cudaFuncAttributeMaxDynamicSharedMemorySize, int(smem));
  if (e != cudaSuccess) return e;
  kern<<<GridFor(args.batch), NT, smem, s>>>(args, int(out), kcap);
  return cudaGetLastError();
}

// Threads per block: one panel row each. MINB (register budget): the blocks per SM that the
// shared memory of the largest n of the class allows anyway (f32 64: 13 -> 8 for registers).
// FUSED: kSolve / kInverse / kSlogdet; else kFactor.
template <typename T, bool FUSED>
cudaError_t LuMediumRun(cudaStream_t s, const LuArgs<T>& args, LuOutput out) {
  constexpr bool f64 = sizeof(T) == 8;
  if (args.n <= 64) return LuMediumLaunchNT<T, 64, f64 ? 5 : 8, FUSED>(s, args, out);
  if (args.n <= 128) return LuMediumLaunchNT<T, 128, f64 ? 2 : 3, FUSED>(s, args, out);
  return LuMediumLaunchNT<T, 256, 1, FUSED>(s, args, out);
}

}  // namespace detail
}  // namespace batchla
