// Batched LU, large class (factor only): one block of kLuLargeThreads per matrix, factored in place
// in the output buffer (row-major, global memory, leading dimension n). Per 32-wide panel:
// the panel (rows [k, n)) is copied to shared memory P (row stride 33) and factored there with
// two rows per thread (LuPanel); the left columns get the row permutation; the right columns are
// processed in strips of LuLargeStrip(n) columns: permutation + U12 solve per column (U12 also kept in
// shared Us), then the strip's trailing update C -= L21 U12 from shared operands.
#pragma once

#include "cuda/lu_blocked.cuh"
#include "cuda/lu_blocked_layout.cuh"

namespace batchla {
namespace detail {

// R: panel rows per thread (n <= R * kLuLargeThreads); MINB: blocks per SM the registers allow.
template <typename T, int R, int MINB>
__global__ void __launch_bounds__(kLuLargeThreads, MINB) LuLargeKernel(LuArgs<T> args) {
  constexpr int NT = kLuLargeThreads, NB = kLuNB, LDP = kLuLargeLdp;
  extern __shared__ __align__(16) unsigned char smraw[];
  const int n = args.n, tid = threadIdx.x, S = LuLargeStrip(n);
  T* P = reinterpret_cast<T*>(smraw);
  T* Us = reinterpret_cast<T*>(smraw + LuLargeUsOff<T>(n));
  int* piv = reinterpret_cast<int*>(smraw + LuLargeIntOff<T>(n));
  int* perm = piv + n;
  int* rowsrc = perm + n;
  auto* sh = reinterpret_cast<LuShared<T>*>(smraw + LuLargeIntOff<T>(n) + RoundUp(3 * n * 4, 16));
  const int64_t nn = static_cast<int64_t>(n) * n;
  for (int64_t mat = blockIdx.x; mat < args.batch; mat += gridDim.x) {
    T* A = args.lu + mat * nn;
    if (args.a != args.lu) LuCopy<T, NT>(args.a + mat * nn, n, A, n, n, n);  // a == lu: in place
    for (int i = tid; i < n; i += NT) perm[i] = i;
    if (tid == 0) sh->info = 0, sh->dcount = 0;
    __syncthreads();
    for (int k = 0; k < n; k += NB) {
      const int w = min(NB, n - k), m = n - k;
      LuCopy<T, NT>(A + static_cast<int64_t>(k) * n + k, n, P, LDP, m, w);
      __syncthreads();
      LuPanel<T, R, NT>(P, LDP, m, w, k, piv, rowsrc, sh);
      __syncthreads();
      int newperm[R];
#pragma unroll
      for (int q = 0; q < R; ++q) {
        const int r = tid + q * NT;
        newperm[q] = r < m ? perm[k + rowsrc[r]] : 0;
      }
      LuCopy<T, NT>(P, LDP, A + static_cast<int64_t>(k) * n + k, n, m, w);
      for (int c = tid; c < k; c += NT) LuColumnSwapSolve<T, false>(A, n, k, w, c, rowsrc, sh, P, LDP, nullptr, 0);
      for (int j0 = k + w; j0 < n; j0 += S) {
        const int sc = min(S, n - j0);
        for (int c = tid; c < sc; c += NT)
          LuColumnSwapSolve<T, true>(A, n, k, w, j0 + c, rowsrc, sh, P, LDP, Us + c, S);
        __syncthreads();
        LuTrailing<T, NT, true>(A + static_cast<int64_t>(k + w) * n + j0, n, m - w, sc, P + w * LDP, LDP, Us, S);
        __syncthreads();
      }
      __syncthreads();
#pragma unroll
      for (int q = 0; q < R; ++q) {
        const int r = tid + q * NT;
        if (r < m) perm[k + r] = newperm[q];
      }
      if (tid == 0) sh->dcount = 0;
      __syncthreads();
    }
    for (int i = tid; i < n; i += NT) {
      args.pivots[mat * n + i] = piv[i];
      if (args.perm) args.perm[mat * n + i] = perm[i];
    }
    if (tid == 0) args.info[mat] = sh->info;
    __syncthreads();
  }
}

template <typename T, int R, int MINB>
cudaError_t LuLargeLaunchR(cudaStream_t s, const LuArgs<T>& args) {
  const size_t smem = LuLargeSmemBytes<T>(args.n);
  auto kern = LuLargeKernel<T, R, MINB>;
  cudaError_t e = cudaFuncSetAttribute(kern, cudaFuncAttributeMaxDynamicSharedMemorySize, int(smem));
  if (e != cudaSuccess) return e;
  kern<<<GridFor(args.batch), kLuLargeThreads, smem, s>>>(args);
  return cudaGetLastError();
}

// One panel row per thread up to 256 rows; two blocks per SM where shared memory allows it
// (f32 up to 256, f64 up to 128; f64 256 needs 135 KB).
template <typename T>
cudaError_t LuLargeLaunch(cudaStream_t s, const LuArgs<T>& args) {
  if (args.n <= kLuLargeThreads / 2) return LuLargeLaunchR<T, 1, 2>(s, args);
  if (args.n <= kLuLargeThreads) return LuLargeLaunchR<T, 1, sizeof(T) == 8 ? 1 : 2>(s, args);
  return LuLargeLaunchR<T, kLuLargeRows, 1>(s, args);
}

}  // namespace detail
}  // namespace batchla
