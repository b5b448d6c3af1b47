// Standalone check of LaunchDetClosed (cuda/det_closed.cu): every result bit-equal to the host's
// evaluation of jnp's closed forms (each product and sum rounded, in jnp's order), for batches that
// leave a partial tile, an array that is not 16-byte aligned (the scalar path), and NaN / inf /
// singular matrices among ordinary ones; then, unless in sanitize mode, the time of a 256 MiB batch
// against a device-to-device copy of the same bytes (read + write).
// Build + run: tests/cuda/run_checks.sh check_det_closed.
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <vector>

#include "bindings/cpu/lu_solvers.h"
#include "cuda/launch.h"
#include "tests/cuda/check_common.h"

using batchla::LaunchDetClosed;
// The expected values: the CPU handler's evaluation (jnp's formula rounded term by term; the host
// compile has no FMA to contract to: x86-64 without -mfma).
using batchla::cpu::DetClosed;

static bool SameBits(double a, double b) { return (std::isnan(a) && std::isnan(b)) || a == b; }

// offset: elements between the allocation (256-byte aligned) and the first matrix; 1 makes the
// array 4 / 8 bytes off a 16-byte boundary.
template <typename T>
void CheckCase(int n, int64_t batch, int offset) {
  const int64_t nn = int64_t(n) * n;
  std::vector<T> a(batch * nn);
  for (auto& v : a) v = T(Rand() * 4);
  if (batch > 7) {
    for (int64_t e = 0; e < nn; ++e) a[3 * nn + e] = T(NAN);  // matrix 3: NaN
    a[4 * nn] = T(INFINITY);                                  // matrix 4: an inf entry
    for (int64_t e = 0; e < nn; ++e) a[5 * nn + e] = T(0);    // matrix 5: zero
    for (int j = 0; j < n; ++j) a[(batch - 1) * nn + n + j] = a[(batch - 1) * nn + j];  // last: two equal rows
  }
  T *da = nullptr, *dd = nullptr;
  CK(cudaMalloc(&da, (batch * nn + offset + 1) * sizeof(T)));
  CK(cudaMalloc(&dd, (batch + 1) * sizeof(T)));
  CK(cudaMemcpy(da + offset, a.data(), batch * nn * sizeof(T), cudaMemcpyHostToDevice));
  CK(cudaMemset(dd, 0xff, (batch + 1) * sizeof(T)));  // NaN everywhere: unwritten results show
  CK(LaunchDetClosed<T>(0, da + offset, dd, batch, n));
  CK(cudaDeviceSynchronize());
  std::vector<T> d(batch + 1);
  CK(cudaMemcpy(d.data(), dd, (batch + 1) * sizeof(T), cudaMemcpyDeviceToHost));
  int64_t bad = 0;
  for (int64_t m = 0; m < batch; ++m) {
    const T want = DetClosed(a.data() + m * nn, n);
    if (!SameBits(d[m], want)) {
      if (bad < 5) FAIL("%s n=%d batch=%lld offset=%d: matrix %lld det %.17g, want %.17g", Name<T>(), n,
                        (long long)batch, offset, (long long)m, double(d[m]), double(want));
      ++bad;
    }
  }
  uint64_t tail = 0;  // the element past the batch must stay untouched (0xff bytes)
  std::memcpy(&tail, &d[batch], sizeof(T));
  if (tail != (sizeof(T) == 8 ? ~uint64_t(0) : uint64_t(0xffffffffu)))
    FAIL("%s n=%d batch=%lld: wrote past the batch", Name<T>(), n, (long long)batch);
  std::printf("%s n=%d batch=%-8lld offset=%d: %s\n", Name<T>(), n, (long long)batch, offset,
              bad ? "FAIL" : "bit-equal");
  CK(cudaFree(da));
  CK(cudaFree(dd));
}

// us per call of a 256 MiB input, best of 20, and the fraction of a device copy of the same bytes.
template <typename T>
void Time(int n) {
  const int64_t nn = int64_t(n) * n, batch = (int64_t(256) << 20) / int64_t(nn * sizeof(T));
  const size_t bytes = size_t(batch) * (nn + 1) * sizeof(T);  // read a, write det
  T *da = nullptr, *dd = nullptr, *copy = nullptr;
  CK(cudaMalloc(&da, batch * nn * sizeof(T)));
  CK(cudaMalloc(&dd, batch * sizeof(T)));
  CK(cudaMalloc(&copy, bytes / 2 + 256));
  CK(cudaMemset(da, 0, batch * nn * sizeof(T)));
  cudaEvent_t t0, t1;
  CK(cudaEventCreate(&t0));
  CK(cudaEventCreate(&t1));
  auto best = [&](auto&& launch) {
    float ms_best = 1e30f;
    for (int r = 0; r < 20; ++r) {
      CK(cudaEventRecord(t0));
      launch();
      CK(cudaEventRecord(t1));
      CK(cudaEventSynchronize(t1));
      float ms = 0;
      CK(cudaEventElapsedTime(&ms, t0, t1));
      ms_best = ms < ms_best ? ms : ms_best;
    }
    return ms_best;
  };
  const float det_ms = best([&] { CK(LaunchDetClosed<T>(0, da, dd, batch, n)); });
  // The copy moves bytes / 2 in and out: the same bytes read + written as the det.
  const float copy_ms = best([&] { CK(cudaMemcpyAsync(copy, da, bytes / 2, cudaMemcpyDeviceToDevice)); });
  std::printf("time %s n=%d batch=%lld: %.1f us, %.0f GB/s; copy of the same bytes %.1f us: fraction %.3f\n",
              Name<T>(), n, (long long)batch, det_ms * 1e3, bytes / (det_ms * 1e6), copy_ms * 1e3,
              copy_ms / det_ms);
  CK(cudaFree(da));
  CK(cudaFree(dd));
  CK(cudaFree(copy));
}

int main() {
  // Tiles: float32 1024 (n = 2) / 256 (n = 3) matrices, float64 512 / 256. The batches leave a
  // partial tile, fill whole tiles and reach the grid-stride loop's second pass only at large sizes.
  const int64_t batches[] = {0, 1, 7, 37, 255, 256, 257, 1023, 1024, 1025, 2500, 100003};
  for (int n = 2; n <= 3; ++n) {
    for (int64_t b : batches) {
      const int64_t batch = SanitizeBatch(b);
      for (int offset = 0; offset <= 1; ++offset) {
        CheckCase<float>(n, batch, offset);
        CheckCase<double>(n, batch, offset);
      }
    }
  }
  if (!SanitizeMode()) {
    for (int n = 2; n <= 3; ++n) {
      Time<float>(n);
      Time<double>(n);
    }
  }
  if (g_fail) {
    std::printf("check_det_closed: %d failures\n", g_fail);
    return 1;
  }
  std::printf("check_det_closed: all passed\n");
  return 0;
}
