// Standalone check + timing of LaunchPotrf / LaunchPosv (cuda/launch.h) against a float64 host
// reference. Exits non-zero on any failure. Build: tests/cuda/run_checks.sh check_potrf
// BATCHLA_CHECK_SANITIZE=1 (sanitize mode, tests/cuda/check_common.h): checks only, on the short
// size list of RunAll.
#include <cuda_runtime.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>

#include "tests/cuda/check_common.h"
#include "cuda/launch.h"

using batchla::LaunchPosv;
using batchla::LaunchPotrf;
using batchla::PosvMaxFusedN;


// SPD matrix: B B^T / n + diag, B uniform; rounded to T. Full symmetric.
template <typename T>
void MakeSpd(int n, T* out) {
  std::vector<double> B(size_t(n) * n), A(size_t(n) * n);
  for (auto& v : B) v = Rand();
  for (int i = 0; i < n; ++i)
    for (int j = 0; j <= i; ++j) {
      double s = 0;
      for (int p = 0; p < n; ++p) s += B[size_t(i) * n + p] * B[size_t(j) * n + p];
      s /= n;
      if (i == j) s += 0.5 + 0.5 * std::fabs(Rand());
      out[size_t(i) * n + j] = out[size_t(j) * n + i] = T(s);
    }
}

static bool IsNaN(double v) { return v != v; }

template <typename T>
double Norm1(const T* A, int rows, int cols) {  // max column sum
  double m = 0;
  for (int j = 0; j < cols; ++j) {
    double s = 0;
    for (int i = 0; i < rows; ++i) s += std::fabs(double(A[size_t(i) * cols + j]));
    m = std::max(m, s);
  }
  return m;
}

// potrf residual ||A - L L^T||_1 / (n ||A||_1 eps); also checks zeros above the diagonal.
template <typename T>
double PotrfResid(int n, const T* A, const T* L, bool* upper_ok) {
  std::vector<double> R(size_t(n) * n);
  *upper_ok = true;
  for (int i = 0; i < n; ++i)
    for (int j = i + 1; j < n; ++j)
      if (!(L[size_t(i) * n + j] == T(0)) || std::signbit(double(L[size_t(i) * n + j])) ) *upper_ok = false;
  for (int i = 0; i < n; ++i)
    for (int j = 0; j < n; ++j) {
      double s = 0;
      const int m = std::min(i, j);
      for (int p = 0; p <= m; ++p) s += double(L[size_t(i) * n + p]) * double(L[size_t(j) * n + p]);
      R[size_t(i) * n + j] = double(A[size_t(i) * n + j]) - s;
    }
  const double r = Norm1(R.data(), n, n), a = Norm1(A, n, n);
  const double v = r / (n * a * Eps<T>());
  return IsNaN(v) ? 1e300 : v;
}

template <typename T>
double SolveResid(int n, int k, const T* A, const T* B, const T* X) {
  std::vector<double> R(size_t(n) * k);
  for (int i = 0; i < n; ++i)
    for (int c = 0; c < k; ++c) {
      double s = double(B[size_t(i) * k + c]);
      for (int j = 0; j < n; ++j) s -= double(A[size_t(i) * n + j]) * double(X[size_t(j) * k + c]);
      R[size_t(i) * k + c] = s;
    }
  const double v = Norm1(R.data(), n, k) / (Norm1(A, n, n) * Norm1(X, n, k) * n * Eps<T>());
  return IsNaN(v) ? 1e300 : v;
}

template <typename T>
struct Dev {
  T* p = nullptr;
  size_t count = 0;
  // Poisoned from the start: every byte a kernel may read is defined (compute-sanitizer initcheck).
  explicit Dev(size_t c) : count(c) { CK(cudaMalloc(&p, std::max<size_t>(c, 1) * sizeof(T))); Poison(); }
  ~Dev() { cudaFree(p); }
  void Put(const std::vector<T>& h) { CK(cudaMemcpy(p, h.data(), h.size() * sizeof(T), cudaMemcpyHostToDevice)); }
  std::vector<T> Get() const {
    std::vector<T> h(count);
    CK(cudaMemcpy(h.data(), p, count * sizeof(T), cudaMemcpyDeviceToHost));
    return h;
  }
  void Poison() { CK(cudaMemset(p, 0x5a, std::max<size_t>(count, 1) * sizeof(T))); }
};

// Poison pattern 0x5a5a... is a finite, non-zero value in both f32 and f64.

template <typename T>
void CheckCase(int n, int64_t batch) {
  const size_t nn = size_t(n) * n;
  std::vector<T> A(nn * batch), Ain(nn * batch);
  for (int64_t b = 0; b < batch; ++b) MakeSpd<T>(n, A.data() + b * nn);
  // potrf input: strict upper triangle garbage (NaN) — must not be read.
  Ain = A;
  for (int64_t b = 0; b < batch; ++b)
    for (int i = 0; i < n; ++i)
      for (int j = i + 1; j < n; ++j) Ain[b * nn + size_t(i) * n + j] = std::nan("");
  Dev<T> da(nn * batch), dl(nn * batch);
  Dev<int32_t> dinfo(batch);
  da.Put(Ain);
  dl.Poison();
  dinfo.Poison();
  CK(LaunchPotrf<T>(0, da.p, dl.p, dinfo.p, batch, n, false));
  CK(cudaDeviceSynchronize());
  auto L = dl.Get();
  auto info = dinfo.Get();
  double worst = 0;
  for (int64_t b = 0; b < batch; ++b) {
    bool up = true;
    const double r = PotrfResid<T>(n, A.data() + b * nn, L.data() + b * nn, &up);
    worst = std::max(worst, r);
    if (!(r <= 30)) { FAIL("%s potrf n=%d batch=%lld mat %lld resid %.3g", Name<T>(), n, (long long)batch, (long long)b, r); break; }
    if (!up) { FAIL("%s potrf n=%d mat %lld: upper triangle not zero", Name<T>(), n, (long long)b); break; }
    if (info[b] != 0) { FAIL("%s potrf n=%d mat %lld: info %d", Name<T>(), n, (long long)b, info[b]); break; }
  }
  // in place (a == l)
  if (batch <= 33) {
    da.Put(Ain);
    CK(LaunchPotrf<T>(0, da.p, da.p, dinfo.p, batch, n, false));
    CK(cudaDeviceSynchronize());
    auto L2 = da.Get();
    if (std::memcmp(L2.data(), L.data(), L.size() * sizeof(T)) != 0)
      FAIL("%s potrf n=%d in-place result differs", Name<T>(), n);
  }
  // symmetrize: non-symmetric input As; the factor must be that of (As + As^T) / 2 computed as
  // (a_ij + a_ji) / T(2), bitwise the same as potrf of the host-symmetrized lower triangle.
  {
    std::vector<T> As = A, Asym(nn * batch);
    for (int64_t b = 0; b < batch; ++b)
      for (int i = 0; i < n; ++i)
        for (int j = 0; j < n; ++j)
          if (i != j) As[b * nn + size_t(i) * n + j] = T(double(A[b * nn + size_t(i) * n + j]) + 0.05 * Rand() / n);
    for (int64_t b = 0; b < batch; ++b)
      for (int i = 0; i < n; ++i)
        for (int j = 0; j < n; ++j)
          Asym[b * nn + size_t(i) * n + j] = (As[b * nn + size_t(i) * n + j] + As[b * nn + size_t(j) * n + i]) / T(2);
    Dev<T> dref(nn * batch);
    da.Put(As);
    dl.Poison();
    dinfo.Poison();
    CK(LaunchPotrf<T>(0, da.p, dl.p, dinfo.p, batch, n, true));
    CK(cudaDeviceSynchronize());
    auto Ls = dl.Get();
    auto infs = dinfo.Get();
    std::vector<T> Alow = Asym;  // lower triangle only, NaN above
    for (int64_t b = 0; b < batch; ++b)
      for (int i = 0; i < n; ++i)
        for (int j = i + 1; j < n; ++j) Alow[b * nn + size_t(i) * n + j] = std::nan("");
    da.Put(Alow);
    CK(LaunchPotrf<T>(0, da.p, dref.p, dinfo.p, batch, n, false));
    CK(cudaDeviceSynchronize());
    auto Lr = dref.Get();
    for (int64_t b = 0; b < batch; ++b) {
      bool up = true;
      const double r = PotrfResid<T>(n, Asym.data() + b * nn, Ls.data() + b * nn, &up);
      if (!(r <= 30) || !up || infs[b] != 0) {
        FAIL("%s potrf symmetrize n=%d batch=%lld mat %lld resid %.3g upper_ok %d info %d", Name<T>(), n,
             (long long)batch, (long long)b, r, int(up), infs[b]);
        break;
      }
    }
    if (std::memcmp(Ls.data(), Lr.data(), Ls.size() * sizeof(T)) != 0)
      FAIL("%s potrf symmetrize n=%d batch=%lld differs from potrf of the host-symmetrized matrix", Name<T>(), n,
           (long long)batch);
  }
  // posv: k = 1 and 3, lower and upper
  double worst_sv = 0;
  if (n <= PosvMaxFusedN<T>()) {
    for (int k : {1, 3}) {
      std::vector<T> B(size_t(n) * k * batch);
      for (auto& v : B) v = T(Rand());
      Dev<T> db(B.size()), dx(B.size());
      db.Put(B);
      for (bool lower : {true, false}) {
        std::vector<T> Ap = A;
        for (int64_t b = 0; b < batch; ++b)  // garbage in the triangle that must not be read
          for (int i = 0; i < n; ++i)
            for (int j = 0; j < n; ++j)
              if (lower ? j > i : j < i) Ap[b * nn + size_t(i) * n + j] = std::nan("");
        da.Put(Ap);
        dx.Poison();
        dinfo.Poison();
        CK(LaunchPosv<T>(0, da.p, db.p, dx.p, dinfo.p, batch, n, k, lower));
        CK(cudaDeviceSynchronize());
        auto X = dx.Get();
        auto inf2 = dinfo.Get();
        for (int64_t b = 0; b < batch; ++b) {
          const double r = SolveResid<T>(n, k, A.data() + b * nn, B.data() + b * n * k, X.data() + b * n * k);
          worst_sv = std::max(worst_sv, r);
          if (!(r <= 30) || inf2[b] != 0) {
            FAIL("%s posv n=%d k=%d lower=%d batch=%lld mat %lld resid %.3g info %d", Name<T>(), n, k,
                 int(lower), (long long)batch, (long long)b, r, inf2[b]);
            break;
          }
        }
      }
    }
  }
  if (batch > 1 && (n <= 8 || n % 16 == 0 || n >= 100))
    std::printf("  %s n=%3d batch=%5lld potrf resid %.3f  posv resid %.3f\n", Name<T>(), n,
                (long long)batch, worst, worst_sv);
}

// A non-SPD and a NaN matrix mixed into a batch: info, NaN pattern, neighbours bit-identical.
template <typename T>
void CheckFailures(int n) {
  const int64_t batch = 7;
  const size_t nn = size_t(n) * n;
  std::vector<T> A(nn * batch);
  for (int64_t b = 0; b < batch; ++b) MakeSpd<T>(n, A.data() + b * nn);
  std::vector<T> Abad = A;
  const int p = n / 2, q = n - 1;
  T* m2 = Abad.data() + 2 * nn;  // pivot p exactly -1
  for (int j = 0; j < n; ++j) m2[size_t(p) * n + j] = m2[size_t(j) * n + p] = T(0);
  m2[size_t(p) * n + p] = T(-1);
  T* m4 = Abad.data() + 4 * nn;  // NaN at (q, 0) (lower) -> pivot q
  m4[size_t(q) * n] = m4[q] = std::nan("");
  const int want2 = p + 1, want4 = (n == 1) ? 1 : q + 1;
  Dev<T> da(nn * batch), dl(nn * batch), dl0(nn * batch);
  Dev<int32_t> di(batch), di0(batch);
  da.Put(A);
  CK(LaunchPotrf<T>(0, da.p, dl0.p, di0.p, batch, n, false));
  da.Put(Abad);
  dl.Poison();
  CK(LaunchPotrf<T>(0, da.p, dl.p, di.p, batch, n, false));
  CK(cudaDeviceSynchronize());
  auto L = dl.Get(), L0 = dl0.Get();
  auto inf = di.Get();
  for (int64_t b = 0; b < batch; ++b) {
    const int want = b == 2 ? want2 : b == 4 ? want4 : 0;
    if (inf[b] != want) FAIL("%s potrf n=%d fail-batch mat %lld info %d want %d", Name<T>(), n, (long long)b, inf[b], want);
    if (want == 0) {
      if (std::memcmp(L.data() + b * nn, L0.data() + b * nn, nn * sizeof(T)) != 0)
        FAIL("%s potrf n=%d neighbour %lld differs from clean run", Name<T>(), n, (long long)b);
    } else {
      for (int i = 0; i < n; ++i)
        for (int j = 0; j < n; ++j) {
          const double v = double(L[b * nn + size_t(i) * n + j]);
          if (j <= i ? !IsNaN(v) : !(v == 0)) {
            FAIL("%s potrf n=%d failed mat %lld (%d,%d) = %g", Name<T>(), n, (long long)b, i, j, v);
            i = n;
            break;
          }
        }
    }
  }
  if (n <= PosvMaxFusedN<T>()) {
    const int k = 2;
    std::vector<T> B(size_t(n) * k * batch);
    for (auto& v : B) v = T(Rand());
    Dev<T> db(B.size()), dx(B.size()), dx0(B.size());
    db.Put(B);
    da.Put(A);
    CK(LaunchPosv<T>(0, da.p, db.p, dx0.p, di0.p, batch, n, k, true));
    da.Put(Abad);
    dx.Poison();
    CK(LaunchPosv<T>(0, da.p, db.p, dx.p, di.p, batch, n, k, true));
    CK(cudaDeviceSynchronize());
    auto X = dx.Get(), X0 = dx0.Get();
    inf = di.Get();
    const size_t nk = size_t(n) * k;
    for (int64_t b = 0; b < batch; ++b) {
      const int want = b == 2 ? want2 : b == 4 ? want4 : 0;
      if (inf[b] != want) FAIL("%s posv n=%d mat %lld info %d want %d", Name<T>(), n, (long long)b, inf[b], want);
      if (want == 0) {
        if (std::memcmp(X.data() + b * nk, X0.data() + b * nk, nk * sizeof(T)) != 0)
          FAIL("%s posv n=%d neighbour %lld differs", Name<T>(), n, (long long)b);
      } else {
        for (size_t e = 0; e < nk; ++e)
          if (!IsNaN(double(X[b * nk + e]))) { FAIL("%s posv n=%d failed mat %lld x not NaN", Name<T>(), n, (long long)b); break; }
      }
    }
  }
}

// ---- timing -------------------------------------------------------------------------------------
template <typename T>
__global__ void FillSpd(T* a, int64_t batch, int n, T* b, int k) {
  const int64_t nn = int64_t(n) * n, total = nn * batch;
  for (int64_t e = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; e < total; e += int64_t(gridDim.x) * blockDim.x) {
    const int64_t r = e % nn;
    const int i = int(r / n), j = int(r % n);
    uint32_t h = uint32_t(e * 2654435761u) ^ uint32_t(i * 40503 + j * 977);
    h ^= h >> 13; h *= 0x5bd1e995u; h ^= h >> 15;
    const T off = T(int(h % 2001) - 1000) * T(1e-3) / T(n);
    a[e] = i == j ? T(2) : off * T(i + j + 1 <= 2 * n ? 1 : 1);  // symmetric not needed (lower only)
  }
  if (b) {
    const int64_t tb = int64_t(n) * k * batch;
    for (int64_t e = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; e < tb; e += int64_t(gridDim.x) * blockDim.x)
      b[e] = T(1) + T(e % 7) * T(0.1);
  }
}

template <typename T>
void Time(int n) {
  const double bytes_in = 256.0 * 1024 * 1024;
  const int64_t batch = int64_t(bytes_in / (double(n) * n * sizeof(T)));
  const size_t nn = size_t(n) * n;
  T *a, *l, *b = nullptr, *x = nullptr;
  int32_t* info;
  CK(cudaMalloc(&a, nn * batch * sizeof(T)));
  CK(cudaMalloc(&l, nn * batch * sizeof(T)));
  CK(cudaMalloc(&info, batch * sizeof(int32_t)));
  const bool sv = n <= PosvMaxFusedN<T>();
  if (sv) {
    CK(cudaMalloc(&b, size_t(n) * batch * sizeof(T)));
    CK(cudaMalloc(&x, size_t(n) * batch * sizeof(T)));
  }
  FillSpd<T><<<4096, 256>>>(a, batch, n, b, 1);
  CK(cudaGetLastError());
  cudaEvent_t e0, e1;
  CK(cudaEventCreate(&e0));
  CK(cudaEventCreate(&e1));
  auto median = [&](auto&& fn) {
    for (int w = 0; w < 3; ++w) CK(fn());
    std::vector<float> ts;
    for (int r = 0; r < 10; ++r) {
      CK(cudaEventRecord(e0));
      CK(fn());
      CK(cudaEventRecord(e1));
      CK(cudaEventSynchronize(e1));
      float ms;
      CK(cudaEventElapsedTime(&ms, e0, e1));
      ts.push_back(ms);
    }
    std::sort(ts.begin(), ts.end());
    return ts[ts.size() / 2] * 1e-3;
  };
  const double t = median([&] { return LaunchPotrf<T>(0, a, l, info, batch, n, false); });
  const double by = 2.0 * nn * sizeof(T) * batch, fl = double(n) * n * n / 3.0 * batch;
  const double roof = std::max(by / 4.24e12, fl / 67e12);
  std::printf("  %s potrf n=%3d batch=%8lld  %9.1f us  %7.1f GB/s  %7.1f GFLOP/s  roofline %.3f\n", Name<T>(), n,
              (long long)batch, t * 1e6, by / t * 1e-9, fl / t * 1e-9, roof / t);
  const double ts = median([&] { return LaunchPotrf<T>(0, a, l, info, batch, n, true); });
  std::printf("  %s potrf n=%3d batch=%8lld  %9.1f us  %7.1f GB/s  %7.1f GFLOP/s  roofline %.3f (symmetrize)\n",
              Name<T>(), n, (long long)batch, ts * 1e6, by / ts * 1e-9, fl / ts * 1e-9, roof / ts);
  if (sv) {
    const double t2 = median([&] { return LaunchPosv<T>(0, a, b, x, info, batch, n, 1, true); });
    const double by2 = (double(nn) + 2.0 * n) * sizeof(T) * batch, fl2 = fl + 2.0 * n * n * batch;
    const double roof2 = std::max(by2 / 4.24e12, fl2 / 67e12);
    std::printf("  %s posv  n=%3d batch=%8lld  %9.1f us  %7.1f GB/s  %7.1f GFLOP/s  roofline %.3f (k=1)\n", Name<T>(),
                n, (long long)batch, t2 * 1e6, by2 / t2 * 1e-9, fl2 / t2 * 1e-9, roof2 / t2);
  }
  int32_t bad = 0;
  {
    std::vector<int32_t> h(batch);
    CK(cudaMemcpy(h.data(), info, batch * sizeof(int32_t), cudaMemcpyDeviceToHost));
    for (auto v : h) bad += v != 0;
  }
  if (bad) FAIL("%s timing n=%d: %d matrices reported failure", Name<T>(), n, bad);
  cudaFree(a); cudaFree(l); cudaFree(info); cudaFree(b); cudaFree(x);
  cudaEventDestroy(e0); cudaEventDestroy(e1);
}

template <typename T>
void RunAll(bool timing) {
  std::printf("== %s correctness (PosvMaxFusedN = %d)\n", Name<T>(), PosvMaxFusedN<T>());
  std::vector<int> ns;
  // Sanitize mode: every tiny (1..8) and small (9..32) instantiation, wide at 33 and 64, grid at
  // 65, left (potrf) at 100 and 128 (its n <= 128 band), 233 and 300 (its two 256-thread bands),
  // medium (the fused posv) up to PosvMaxFusedN (both dtypes). Batches 1 and 33; 1 and 3 above 64 and 1
  // from 233 (a block per matrix; racecheck pays per shared-memory access). Not reached there: the
  // medium maxima 160 / 232.
  if (SanitizeMode()) {
    for (int n = 1; n <= 33; ++n) ns.push_back(n);
    for (int n : {64, 65, 100, 128, 233, 300}) ns.push_back(n);
  } else {
    for (int n = 1; n <= 40; ++n) ns.push_back(n);
    for (int n : {47, 63, 64, 65, 80, 96, 100, 128, 161, 200, 233, 256, 384, 512}) ns.push_back(n);
  }
  if (PosvMaxFusedN<T>() > 128 && !SanitizeMode()) ns.push_back(PosvMaxFusedN<T>());
  for (int n : ns) {
    std::vector<int64_t> bs = {1, 33};
    if (n <= 40 && !SanitizeMode()) bs.push_back(1000);
    if (n >= 200) bs = {1, 3};
    if (SanitizeMode() && n > 64) bs = n <= 128 ? std::vector<int64_t>{1, 3} : std::vector<int64_t>{1};
    for (int64_t b : bs) CheckCase<T>(n, b);
    if (!SanitizeMode() || n <= 65) CheckFailures<T>(n);  // 7 matrices
  }
  // batch 0 launches nothing; too-large fused posv is refused
  if (LaunchPotrf<T>(0, nullptr, nullptr, nullptr, 0, 16, false) != cudaSuccess) FAIL("batch 0 potrf");
  if (LaunchPosv<T>(0, nullptr, nullptr, nullptr, nullptr, 0, 16, 1, true) != cudaSuccess) FAIL("batch 0 posv");
  if (LaunchPosv<T>(0, nullptr, nullptr, nullptr, nullptr, 4, PosvMaxFusedN<T>() + 1, 1, true) != cudaErrorInvalidValue)
    FAIL("posv above PosvMaxFusedN not refused");
  cudaGetLastError();
  if (timing) {
    std::printf("== %s timing (256 MiB of input, median of 10)\n", Name<T>());
    for (int n : {2, 4, 8, 16, 32, 48, 64, 128, 256, 512}) Time<T>(n);
  }
}

// Usage: check_potrf [--no-timing | --timing-only [MIN_N [MAX_N]] | --blocked]
//   --timing-only MIN_N MAX_N: time only MIN_N <= n <= MAX_N (adds 72, 80, 96, 112, 160, 232, 384 when MIN_N >= 32)
//   --blocked: correctness for n = 63..512 only, then timing of n >= 64 (blocked classes)
int main(int argc, char** argv) {
  g_rng = 0x12345678abcdefull;  // the matrices this check has always used
  std::setvbuf(stdout, nullptr, _IONBF, 0);
  const bool no_timing = (argc > 1 && std::strcmp(argv[1], "--no-timing") == 0) || SanitizeMode();
  const bool timing_only = argc > 1 && std::strcmp(argv[1], "--timing-only") == 0;
  const bool blocked = argc > 1 && std::strcmp(argv[1], "--blocked") == 0;
  const int min_n = timing_only && argc > 2 ? std::atoi(argv[2]) : blocked ? 64 : 0;
  const int max_n = timing_only && argc > 3 ? std::atoi(argv[3]) : 1 << 30;
  std::vector<int> tn = {2, 4, 8, 16, 32, 48, 64, 128, 256, 512};
  if (min_n >= 32) tn = {32, 48, 64, 72, 80, 96, 112, 128, 160, 232, 256, 384, 512};
  if (blocked) {
    for (int n : {63, 64, 65, 100, 128, 129, 161, 200, 233, 256, 300, 512}) {
      for (int64_t b : {int64_t(1), int64_t(n >= 200 ? 3 : 33)}) { CheckCase<float>(n, b); CheckCase<double>(n, b); }
      CheckFailures<float>(n);
      CheckFailures<double>(n);
    }
    for (int n : {160, 232}) { CheckCase<float>(n, 3); CheckCase<double>(n, 3); CheckFailures<float>(n); CheckFailures<double>(n); }
  }
  if (timing_only || blocked) {
    for (int n : tn) if (n >= min_n && n <= max_n) Time<float>(n);
    for (int n : tn) if (n >= min_n && n <= max_n) Time<double>(n);
  } else {
    RunAll<float>(!no_timing);
    RunAll<double>(!no_timing);
  }
  if (g_fail) {
    std::printf("check_potrf: %d FAILURES\n", g_fail);
    return 1;
  }
  std::printf("check_potrf: all passed\n");
  return 0;
}
