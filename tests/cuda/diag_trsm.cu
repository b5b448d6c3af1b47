// TEMPORARY diagnostics for the trsm kernels (not a check; removed after tuning).
#include <cuda_runtime.h>
#include <algorithm>
#include <cstdio>
#include <vector>
#include "cuda/trsm_kernels.cuh"

using namespace batchla::trsm_detail;
#define CK(x) do { cudaError_t e_ = (x); if (e_ != cudaSuccess) { printf("err %s line %d\n", cudaGetErrorString(e_), __LINE__); exit(1);} } while (0)

__global__ void Spin(long long cycles) { long long t0 = clock64(); while (clock64() - t0 < cycles) {} }

template <typename T>
__global__ void SweepCost(T* out, int n, long long* cyc) {
  __shared__ T As[32 * 33];
  for (int e = threadIdx.x; e < 32 * 33; e += 32) As[e] = T(0.01) * (e % 7) + (e % 34 == 0 ? T(2) : T(0));
  __syncwarp();
  SweepPass sp{true, false, false};
  T xi = T(threadIdx.x);
  long long t0 = clock64();
  for (int r = 0; r < 100; ++r) xi = SweepGroup(As, 33, n, threadIdx.x, 0, true, sp, xi);
  long long t1 = clock64();
  T m[32];
  for (int j = 0; j < 32; ++j) m[j] = As[threadIdx.x * 33 + j];
  T rr[1] = {xi};
  for (int r = 0; r < 100; ++r) TileSweep<T, 1>(m, T(0.5), true, n, threadIdx.x, rr);
  long long t2 = clock64();
  out[threadIdx.x] = rr[0];
  if (threadIdx.x == 0) { cyc[0] = (t1 - t0) / 100; cyc[1] = (t2 - t1) / 100; }
}

template <typename F>
float TimeIt(F f) {
  cudaEvent_t e0, e1;
  cudaEventCreate(&e0); cudaEventCreate(&e1);
  std::vector<float> v;
  for (int it = 0; it < 8; ++it) {
    Spin<<<1, 1>>>(40000);
    cudaEventRecord(e0); f(); cudaEventRecord(e1); cudaEventSynchronize(e1);
    float ms; cudaEventElapsedTime(&ms, e0, e1); if (it >= 2) v.push_back(ms);
  }
  std::sort(v.begin(), v.end());
  CK(cudaGetLastError());
  return v[v.size() / 2] * 1000.f;
}

template <typename T>
void Run(const char* tn) {
  const size_t budget = size_t(256) << 20;
  T *a, *b, *x;
  CK(cudaMalloc(&a, budget)); CK(cudaMalloc(&b, budget)); CK(cudaMalloc(&x, budget));
  CK(cudaMemset(a, 0, budget)); CK(cudaMemset(b, 0, budget));
  {
    T* o; long long* c; CK(cudaMalloc(&o, 256)); CK(cudaMalloc(&c, 16));
    for (int n : {4, 16, 32}) {
      SweepCost<T><<<1, 32>>>(o, n, c); CK(cudaDeviceSynchronize());
      long long h[2]; CK(cudaMemcpy(h, c, 16, cudaMemcpyDeviceToHost));
      printf("%s sweep n=%d: group %lld cyc (%.1f/step), tile %lld cyc (%.1f/step)\n", tn, n, h[0], double(h[0]) / n, h[1], double(h[1]) / n);
    }
  }
  SolvePlan trsm{1, {{true, false, false}, {true, false, false}}};
  SolvePlan potrs{2, {{true, false, false}, {false, true, false}}};
  SolvePlan none{0, {{true, false, false}, {true, false, false}}};
  // small kernel: memory phase only (npasses = 0) vs trsm vs potrs, several chunk sizes
  for (int n : {4, 16, 32}) {
    const int64_t batch = budget / ((n * n + n) * sizeof(T));
    const int ld = n | 1;
    const int per = (n * ld + n) * sizeof(T);
    const int groups = (32 / n) * 4;
    for (int mult : {1, 2, 4, 8}) {
      int mats = groups * mult;
      if (mats * per > 48 * 1024) continue;
      const int64_t chunks = (batch + mats - 1) / mats;
      float t[3];
      const SolvePlan* plans[3] = {&none, &trsm, &potrs};
      for (int p = 0; p < 3; ++p)
        t[p] = TimeIt([&] { SmallSolveKernel<T><<<unsigned(chunks), 128, mats * per>>>(a, b, x, batch, n, 1, mats, ld, *plans[p]); });
      const double bytes = double(batch) * (n * n + 2 * n) * sizeof(T);
      printf("%s small n=%d mats=%d smem=%d: copy-only %.1f us (%.2f) trsm %.1f (%.2f) potrs %.1f (%.2f)\n", tn, n, mats, mats * per,
             t[0], bytes / t[0] / 4.24e6, t[1], bytes / t[1] / 4.24e6, t[2], bytes / t[2] / 4.24e6);
    }
  }
  // tile kernel: single matrix latency and full batch vs stages
  for (int n : {64, 256, 512}) {
    const int64_t batch = budget / ((size_t(n) * n + n) * sizeof(T));
    const int nt = (n + 31) / 32;
    for (int st : {2, 4, 6, 8}) {
      const size_t smem = (size_t(st) * TileCfg<T>::kElems + nt * 32) * sizeof(T);
      if (smem > 48 * 1024) continue;
      float t1 = TimeIt([&] { TileSolveKernel<T, 1><<<dim3(1, 1), 32, smem>>>(a, b, x, 1, n, 1, st, true, trsm); });
      float tp1 = TimeIt([&] { TileSolveKernel<T, 1><<<dim3(1, 1), 32, smem>>>(a, b, x, 1, n, 1, st, true, potrs); });
      float tb = TimeIt([&] { TileSolveKernel<T, 1><<<dim3(unsigned(batch), 1), 32, smem>>>(a, b, x, batch, n, 1, st, true, trsm); });
      float tpb = TimeIt([&] { TileSolveKernel<T, 1><<<dim3(unsigned(batch), 1), 32, smem>>>(a, b, x, batch, n, 1, st, true, potrs); });
      const double bytes = double(batch) * (double(n) * n + 2 * n) * sizeof(T);
      printf("%s tile n=%d stages=%d: 1 matrix trsm %.1f us potrs %.1f us | batch %lld trsm %.1f (%.2f) potrs %.1f (%.2f)\n", tn, n, st, t1, tp1,
             (long long)batch, tb, bytes / tb / 4.24e6, tpb, bytes / tpb / 4.24e6);
    }
  }
  cudaFree(a); cudaFree(b); cudaFree(x);
}

int main() {
  Run<float>("f32");
  Run<double>("f64");
  return 0;
}
