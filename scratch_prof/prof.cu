#include <cstdio>
#include "cuda/interleaved.cuh"
using namespace batchla::il;
template <class Body>
void Run(const char* name, int n, int warps) {
  const int64_t batch = (256ll << 20) / (4ll * n * n), c = 32, chunks = (batch + c - 1) / c;
  float *a, *out, *b; int32_t* info;
  cudaMalloc(&a, chunks * c * n * n * 4); cudaMalloc(&out, chunks * c * n * n * 4);
  cudaMalloc(&b, chunks * c * n * 4); cudaMalloc(&info, chunks * c * 4);
  cudaMemset(a, 0, chunks * c * n * n * 4);
  Args<float> g{a, b, out, info, nullptr, chunks, c, n, 1, kReadLower, false, false};
  cudaEvent_t e0, e1; cudaEventCreate(&e0); cudaEventCreate(&e1);
  for (int r = 0; r < 3; ++r) {
    cudaEventRecord(e0); Launch<float, Body>(0, g, warps); cudaEventRecord(e1); cudaEventSynchronize(e1);
    float ms; cudaEventElapsedTime(&ms, e0, e1); printf("%s n=%d %.1f us (%s)\n", name, n, ms * 1e3, cudaGetErrorString(cudaGetLastError()));
  }
  cudaFree(a); cudaFree(out); cudaFree(b); cudaFree(info);
}
int main() {
  Run<SharedBody<float, Op::kPotrf, 4, Order::kLeft, 20>>("shared-pad20", 20, 1);
  Run<FullBody<float, Op::kPotrf, 14, Order::kRight>>("full14", 14, 2);
  Run<SharedBody<float, Op::kPosv, 8, Order::kLeft, 24>>("posv-shared-pad24", 24, 1);
}
