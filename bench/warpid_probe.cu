// Which hardware warp slot (%warpid; its scheduler is the slot mod 4) each warp of each resident
// block gets: 3 blocks of 128 threads with 69 KB of shared memory a SM, as the QR panel class at
// f32 n = 128 (bench/NOTES.md "Panel class v8"). Build: nvcc -arch=sm_90 -o probe bench/warpid_probe.cu
#include <cstdio>
#include <vector>
__global__ void K(int* out) {
  extern __shared__ char smem[];
  if ((threadIdx.x & 31) == 0) {
    unsigned smid, wid; asm volatile("mov.u32 %0, %%smid;" : "=r"(smid)); asm volatile("mov.u32 %0, %%warpid;" : "=r"(wid));
    int i = blockIdx.x * 4 + threadIdx.x / 32; out[3 * i] = smid; out[3 * i + 1] = wid; out[3*i+2] = blockIdx.x;
    smem[threadIdx.x] = 1;
  }
  long long t0 = clock64(); while (clock64() - t0 < 2000000) {}
}
int main() {
  int nb = 132 * 3; int* d; cudaMalloc(&d, nb * 4 * 3 * 4);
  cudaFuncSetAttribute(K, cudaFuncAttributeMaxDynamicSharedMemorySize, 69 * 1024);
  K<<<nb, 128, 69 * 1024>>>(d); cudaDeviceSynchronize();
  std::vector<int> h(nb * 12); cudaMemcpy(h.data(), d, h.size() * 4, cudaMemcpyDeviceToHost);
  for (int s : {0, 1, 7}) { printf("SM %d:", s); for (int i = 0; i < nb * 4; ++i) if (h[3*i] == s) printf(" b%d.w%d->%d", h[3*i+2], i % 4, h[3*i+1]); printf("\n"); }
}
