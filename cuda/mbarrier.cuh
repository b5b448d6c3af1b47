// mbarrier helpers and the bulk copies that complete on them (shared by the getrs / trsm sweeps
// and the QR tile class's stage).
#pragma once

#include <cstdint>
#include <cuda_runtime.h>

namespace batchla {
namespace detail {

// ---- mbarrier helpers (sm_80+): a shared-memory barrier object whose phases complete when
// `count` arrivals have happened; arrive releases and wait acquires at CTA scope, a protocol
// compute-sanitizer's racecheck models (a plain flag in shared memory it does not).
__device__ __forceinline__ void MbarInit(uint64_t* bar, unsigned count) {
  const unsigned a = static_cast<unsigned>(__cvta_generic_to_shared(bar));
  asm volatile("mbarrier.init.shared.b64 [%0], %1;\n" ::"r"(a), "r"(count) : "memory");
}
__device__ __forceinline__ void MbarArrive(uint64_t* bar) {
  const unsigned a = static_cast<unsigned>(__cvta_generic_to_shared(bar));
  asm volatile("{\n .reg .b64 state;\n mbarrier.arrive.shared.b64 state, [%0];\n}\n" ::"r"(a) : "memory");
}
// Waits until the phase with parity `parity` (0 for the first phase, then alternating) completed.
__device__ __forceinline__ void MbarWait(uint64_t* bar, unsigned parity) {
  const unsigned a = static_cast<unsigned>(__cvta_generic_to_shared(bar));
  unsigned done = 0;
  for (;;) {
    asm volatile("{\n .reg .pred p;\n mbarrier.test_wait.parity.shared.b64 p, [%1], %2;\n"
                 " selp.u32 %0, 1, 0, p;\n}\n"
                 : "=r"(done) : "r"(a), "r"(parity) : "memory");
    if (done) return;
    __nanosleep(20);
  }
}

// ---- bulk copies (sm_90: the copy engine behind TMA, no tensor map) ----------------------------
// Whether the device code being compiled has them (true in host code: a launch may prepare for
// them, and the kernel compiled for an older architecture ignores that).
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ < 900
constexpr bool kHasBulkCopy = false;
#else
constexpr bool kHasBulkCopy = true;
#endif
// Makes an mbarrier's initialization visible to the bulk copies (the async proxy) completing on it.
__device__ __forceinline__ void MbarInitFence() {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  asm volatile("fence.mbarrier_init.release.cluster;\n" ::: "memory");
#endif
}
// Orders the shared-memory accesses this thread has seen (after a block barrier: the block's)
// before its next bulk copy: a stage that threads have read may then be refilled.
__device__ __forceinline__ void FenceProxyAsync() {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  asm volatile("fence.proxy.async.shared::cta;\n" ::: "memory");
#endif
}
// One thread copies `bytes` (a multiple of 16; both addresses 16-byte aligned) from global `src`
// to shared `dst`; the copy's completion counts on `bar` as transaction bytes, announced first by
// MbarArriveExpectTx on the same barrier (one arrival). Waiters: MbarTryWait with the phase's
// parity.
__device__ __forceinline__ void MbarArriveExpectTx(uint64_t* bar, unsigned bytes) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  const unsigned a = static_cast<unsigned>(__cvta_generic_to_shared(bar));
  asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;\n" ::"r"(a), "r"(bytes) : "memory");
#endif
}
__device__ __forceinline__ void BulkCopyToShared(void* dst, const void* src, unsigned bytes, uint64_t* bar) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  const unsigned d = static_cast<unsigned>(__cvta_generic_to_shared(dst));
  const unsigned b = static_cast<unsigned>(__cvta_generic_to_shared(bar));
  asm volatile("cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes [%0], [%1], %2, [%3];\n"
               ::"r"(d), "l"(src), "r"(bytes), "r"(b) : "memory");
#endif
}
// Waits for the phase with parity `parity` (try_wait suspends the warp in hardware for a while).
__device__ __forceinline__ void MbarTryWait(uint64_t* bar, unsigned parity) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  const unsigned a = static_cast<unsigned>(__cvta_generic_to_shared(bar));
  unsigned done = 0;
  do {
    asm volatile("{\n .reg .pred p;\n mbarrier.try_wait.parity.shared::cta.b64 p, [%1], %2;\n"
                 " selp.u32 %0, 1, 0, p;\n}\n"
                 : "=r"(done) : "r"(a), "r"(parity) : "memory");
  } while (!done);
#else
  MbarWait(bar, parity);
#endif
}

}  // namespace detail
}  // namespace batchla
