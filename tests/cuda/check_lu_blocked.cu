// Standalone check + timing of the blocked LU size classes (batchla::detail::LuBlocked, n > 32):
// getrf factors / pivots / perm / info, fused gesv, inverse and slogdet, against a float64 host
// reference with LAPACK-style scaled residuals (<= 30). Exits non-zero on any failure.
// Links with the blocked LU files only:
//   nvcc -std=c++17 -O3 -arch=sm_90 --expt-relaxed-constexpr -I. -o chk \
//        tests/cuda/check_lu_blocked.cu cuda/lu_blocked*.cu
// Arguments: "quick" skips the timing tables; "time" runs only them ("time N...": those sizes).
// BATCHLA_CHECK_SANITIZE=1 (sanitize mode, tests/cuda/check_common.h): checks only, on the short
// size list of CheckAll.
#include <cuda_runtime.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>

#include "tests/cuda/check_common.h"
#include "cuda/lu_dispatch.h"

using batchla::detail::LuArgs;
using batchla::detail::LuBlocked;
using batchla::detail::LuBlockedFusedMaxN;
using batchla::detail::LuBlockedMaxN;
using batchla::detail::LuOutput;
using batchla::detail::LuSlogdetOnLeft;

static int g_ties = 0;

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

// ---- matrices ----------------------------------------------------------------------------------
enum Kind { kRandom, kSwapEveryStep, kZeroColumn, kNaN, kInf, kZero };
constexpr int kZeroCol = 5;  // kZeroColumn: column 5 is 0 -> info 6

template <typename T>
void MakeMatrix(Kind kind, int n, T* A) {
  const size_t nn = size_t(n) * n;
  for (size_t e = 0; e < nn; ++e) A[e] = T(Rand());
  if (kind == kSwapEveryStep) {  // rows of a column-diagonally-dominant M shifted by one: the
    std::vector<T> M(A, A + nn);  // pivot of every step j < n-1 is the last row
    for (int i = 0; i < n; ++i) M[size_t(i) * n + i] = T((n + 1) * (1.0 + 0.25 * std::fabs(Rand())));
    for (int i = 0; i < n; ++i)
      for (int j = 0; j < n; ++j) A[size_t(i) * n + j] = M[size_t((i + 1) % n) * n + j];
  } else if (kind == kZeroColumn) {
    for (int i = 0; i < n; ++i) A[size_t(i) * n + kZeroCol] = T(0);
  } else if (kind == kNaN) {
    A[size_t(n / 2) * n + 3] = T(NAN);
  } else if (kind == kInf) {
    A[size_t(7) * n + n / 3] = T(INFINITY);
  } else if (kind == kZero) {
    for (size_t e = 0; e < nn; ++e) A[e] = T(0);
  }
}

template <typename T>
double Norm1(const T* A, int rows, int cols) {
  double m = 0;
  for (int j = 0; j < cols; ++j) {
    double s = 0;
    for (int i = 0; i < rows; ++i) s += std::fabs(double(A[size_t(i) * cols + j]));
    m = std::max(m, s);
  }
  return m;
}
static double Clean(double v) { return v != v ? 1e300 : v; }

// Host partial-pivoting LU in double (LAPACK getf2 rule). Returns pivots; `lu` gets the factors.
template <typename T>
std::vector<int> HostLu(int n, const T* A, std::vector<double>& lu) {
  lu.assign(A, A + size_t(n) * n);
  std::vector<int> piv(n);
  for (int j = 0; j < n; ++j) {
    int p = j;
    double best = std::fabs(lu[size_t(j) * n + j]);
    for (int i = j + 1; i < n; ++i)
      if (std::fabs(lu[size_t(i) * n + j]) > best) best = std::fabs(lu[size_t(i) * n + j]), p = i;
    piv[j] = p;
    if (p != j)
      for (int c = 0; c < n; ++c) std::swap(lu[size_t(j) * n + c], lu[size_t(p) * n + c]);
    const double d = lu[size_t(j) * n + j];
    if (d != 0)
      for (int i = j + 1; i < n; ++i) lu[size_t(i) * n + j] /= d;
    for (int i = j + 1; i < n; ++i) {
      const double l = lu[size_t(i) * n + j];
      if (l != 0)
        for (int c = j + 1; c < n; ++c) lu[size_t(i) * n + c] -= l * lu[size_t(j) * n + c];
    }
  }
  return piv;
}

// Checks one factored matrix: residual, |L| <= 1, pivots in range and consistent with perm,
// pivots equal to the host's (a differing pivot is accepted only as a near tie).
template <typename T>
double CheckFactor(int n, const T* A, const T* LU, const int32_t* piv, const int32_t* perm, const char* what) {
  const size_t nn = size_t(n) * n;
  std::vector<int> p2(n);
  for (int i = 0; i < n; ++i) p2[i] = i;
  for (int j = 0; j < n; ++j) {
    if (piv[j] < j || piv[j] >= n) { FAIL("%s %s n=%d: pivot[%d] = %d out of range", Name<T>(), what, n, j, piv[j]); return 1e300; }
    std::swap(p2[j], p2[piv[j]]);
  }
  for (int i = 0; i < n; ++i)
    if (p2[i] != perm[i]) { FAIL("%s %s n=%d: perm[%d] = %d, pivots give %d", Name<T>(), what, n, i, perm[i], p2[i]); return 1e300; }
  double lmax = 0;
  for (int i = 0; i < n; ++i)
    for (int j = 0; j < i; ++j) lmax = std::max(lmax, std::fabs(double(LU[size_t(i) * n + j])));
  if (!(lmax <= 1 + 4 * Eps<T>())) FAIL("%s %s n=%d: |L| max %.17g > 1", Name<T>(), what, n, lmax);
  std::vector<double> R(nn);
  for (int i = 0; i < n; ++i)
    for (int j = 0; j < n; ++j) {
      double s = 0;
      const int m = std::min(i - 1, j);
      for (int p = 0; p <= m; ++p) s += double(LU[size_t(i) * n + p]) * double(LU[size_t(p) * n + j]);
      if (j >= i) s += double(LU[size_t(i) * n + j]);
      R[size_t(i) * n + j] = double(A[size_t(perm[i]) * n + j]) - s;
    }
  const double r = Clean(Norm1(R.data(), n, n) / (n * Norm1(A, n, n) * Eps<T>()));
  if (!(r <= 30)) FAIL("%s %s n=%d: getrf residual %.3g", Name<T>(), what, n, r);
  std::vector<double> ref;
  const std::vector<int> hp = HostLu<T>(n, A, ref);
  // host state at the first differing step: rerun host LU to step j to compare the candidates
  for (int j = 0; j < n; ++j) {
    if (hp[j] == piv[j]) continue;
    std::vector<double> W(A, A + nn);
    for (int s = 0; s < j; ++s) {  // replay with the shared pivots
      for (int c = 0; c < n; ++c) std::swap(W[size_t(s) * n + c], W[size_t(hp[s]) * n + c]);
      const double d = W[size_t(s) * n + s];
      for (int i = s + 1; i < n; ++i) {
        const double l = d != 0 ? W[size_t(i) * n + s] / d : W[size_t(i) * n + s];
        W[size_t(i) * n + s] = l;
        for (int c = s + 1; c < n; ++c) W[size_t(i) * n + c] -= l * W[size_t(s) * n + c];
      }
    }
    const double a = std::fabs(W[size_t(hp[j]) * n + j]), b = std::fabs(W[size_t(piv[j]) * n + j]);
    if (std::fabs(a - b) <= 1e3 * Eps<T>() * a) ++g_ties;
    else FAIL("%s %s n=%d: pivot[%d] = %d, host %d (|%.6g| vs |%.6g|)", Name<T>(), what, n, j, piv[j], hp[j], b, a);
    break;
  }
  return r;
}

template <typename T>
double SolveResid(int n, int k, const T* A, const T* B, const T* X) {  // B null: identity
  std::vector<double> R(size_t(n) * k);
  for (int i = 0; i < n; ++i)
    for (int c = 0; c < k; ++c) {
      double s = B ? double(B[size_t(i) * k + c]) : (i == c ? 1.0 : 0.0);
      for (int j = 0; j < n; ++j) s -= double(A[size_t(i) * n + j]) * double(X[size_t(j) * k + c]);
      R[size_t(i) * k + c] = s;
    }
  return Clean(Norm1(R.data(), n, k) / (Norm1(A, n, n) * Norm1(X, n, k) * n * Eps<T>()));
}

// ---- launches ----------------------------------------------------------------------------------
template <typename T>
struct Outs {  // device outputs of every kind, poisoned before each launch
  Dev<T> lu, x, inv, sign, logdet;
  Dev<int32_t> piv, perm, info, scratch;
  bool slogdet_on_chip = false;  // kSlogdet without scratch (the on-chip classes) where the left class could take it
  Outs(int64_t batch, int n, int k)
      : lu(batch * n * n), x(batch * n * std::max(k, 1)), inv(batch * n * n), sign(batch), logdet(batch),
        piv(batch * n), perm(batch * n), info(batch), scratch(batch * 2 * n) {}
};

template <typename T>
cudaError_t Launch(LuOutput out, const T* a, const T* b, int k, Outs<T>& o, int64_t batch, int n, T* x_override = nullptr) {
  LuArgs<T> args;
  args.a = a, args.batch = batch, args.n = n;
  switch (out) {
    case LuOutput::kFactor: args.lu = o.lu.p, args.pivots = o.piv.p, args.perm = o.perm.p, args.info = o.info.p; break;
    case LuOutput::kSolve: args.b = b, args.x = x_override ? x_override : o.x.p, args.k = k, args.info = o.info.p; break;
    case LuOutput::kInverse: args.inv = o.inv.p, args.info = o.info.p, args.scratch = o.scratch.p; break;
    case LuOutput::kSlogdet:
      args.sign = o.sign.p, args.logabsdet = o.logdet.p;
      if (!o.slogdet_on_chip && LuSlogdetOnLeft<T>(n)) args.lu = o.lu.p;  // the factors' scratch, as LaunchSlogdet
      break;
  }
  return LuBlocked<T>(0, args, out);
}

// How many matrices of a batch the host checks (its work is ~n^3 per matrix).
static int64_t Sample(int n, int64_t batch) {
  const int64_t budget = std::max<int64_t>(2, int64_t(3e7 / (double(n) * n * n)));
  return std::min(batch, budget);
}
static int64_t Pick(int64_t s, int64_t cnt, int64_t batch) {  // spread the sample over the batch
  return cnt >= batch ? s : (s * (batch - 1)) / std::max<int64_t>(cnt - 1, 1);
}

template <typename T>
void CheckCase(int n, int64_t batch, bool fused) {
  const size_t nn = size_t(n) * n;
  std::vector<T> A(nn * batch);
  for (int64_t b = 0; b < batch; ++b) MakeMatrix<T>(b == 1 ? kSwapEveryStep : kRandom, n, A.data() + b * nn);
  const int kmax = 13;
  std::vector<T> B(size_t(n) * kmax * batch);
  for (auto& v : B) v = T(Rand());
  Dev<T> da(nn * batch), db(B.size());
  da.Put(A);
  db.Put(B);
  Outs<T> o(batch, n, kmax);
  const int64_t cnt = Sample(n, batch);
  double worst = 0;
  // getrf
  o.lu.Poison(), o.piv.Poison(), o.perm.Poison(), o.info.Poison();
  CK(Launch<T>(LuOutput::kFactor, da.p, nullptr, 0, o, batch, n));
  CK(cudaDeviceSynchronize());
  const auto LU = o.lu.Get();
  const auto piv = o.piv.Get(), perm = o.perm.Get(), info = o.info.Get();
  for (int64_t s = 0; s < cnt; ++s) {
    const int64_t b = Pick(s, cnt, batch);
    worst = std::max(worst, CheckFactor<T>(n, A.data() + b * nn, LU.data() + b * nn, piv.data() + b * n,
                                           perm.data() + b * n, "getrf"));
    if (info[b] != 0) FAIL("%s getrf n=%d mat %lld: info %d", Name<T>(), n, (long long)b, info[b]);
  }
  if (batch > 1) {  // the swap-every-step matrix: pivots n-1 for every j < n-1
    bool ok = true;
    for (int j = 0; j + 1 < n; ++j) ok = ok && piv[size_t(n) + j] == n - 1;
    if (!ok) FAIL("%s getrf n=%d: swap-every-step matrix has unexpected pivots", Name<T>(), n);
  }
  if (batch <= 3) {  // in place: lu == a gives the same bits
    Dev<T> dc(nn * batch);
    dc.Put(A);
    LuArgs<T> args;
    args.a = dc.p, args.lu = dc.p, args.batch = batch, args.n = n;
    args.pivots = o.piv.p, args.perm = o.perm.p, args.info = o.info.p;
    CK(LuBlocked<T>(0, args, LuOutput::kFactor));
    CK(cudaDeviceSynchronize());
    if (std::memcmp(dc.Get().data(), LU.data(), LU.size() * sizeof(T)) != 0)
      FAIL("%s getrf n=%d: in-place result differs", Name<T>(), n);
  }
  double wsolve = 0, winv = 0, wdet = 0;
  if (fused) {
    for (int k : {0, 1, 5, 13}) {
      o.x.Poison(), o.info.Poison();
      CK(Launch<T>(LuOutput::kSolve, da.p, db.p, k, o, batch, n));
      CK(cudaDeviceSynchronize());
      const auto X = o.x.Get();
      const auto inf = o.info.Get();
      for (int64_t b = 0; b < batch; ++b)
        if (inf[b] != 0) { FAIL("%s gesv n=%d k=%d mat %lld info %d", Name<T>(), n, k, (long long)b, inf[b]); break; }
      if (k == 0) continue;
      for (int64_t s = 0; s < cnt; ++s) {
        const int64_t b = Pick(s, cnt, batch);
        const double r = SolveResid<T>(n, k, A.data() + b * nn, B.data() + b * n * k, X.data() + b * n * k);
        wsolve = std::max(wsolve, r);
        if (!(r <= 30)) { FAIL("%s gesv n=%d k=%d mat %lld resid %.3g", Name<T>(), n, k, (long long)b, r); break; }
      }
      if ((k == 1 || k == 5) && batch <= 3) {  // x aliases b (k = 1: warp class, 5: medium)
        Dev<T> dbx(B.size());
        dbx.Put(B);
        CK(Launch<T>(LuOutput::kSolve, da.p, dbx.p, k, o, batch, n, dbx.p));
        CK(cudaDeviceSynchronize());
        const auto X2 = dbx.Get();
        if (std::memcmp(X2.data(), X.data(), size_t(n) * k * batch * sizeof(T)) != 0)
          FAIL("%s gesv n=%d: aliased x == b differs", Name<T>(), n);
      }
    }
    o.inv.Poison(), o.info.Poison();
    CK(Launch<T>(LuOutput::kInverse, da.p, nullptr, 0, o, batch, n));
    CK(cudaDeviceSynchronize());
    const auto INV = o.inv.Get();
    for (int64_t s = 0; s < cnt; ++s) {
      const int64_t b = Pick(s, cnt, batch);
      const double r = SolveResid<T>(n, n, A.data() + b * nn, nullptr, INV.data() + b * nn);
      winv = std::max(winv, r);
      if (!(r <= 30)) { FAIL("%s inverse n=%d mat %lld resid %.3g", Name<T>(), n, (long long)b, r); break; }
    }
  }
  // slogdet: on the left class with scratch where it takes n, and on chip where the fused classes do
  for (bool on_chip : {false, true}) {
    if (on_chip ? !fused : !LuSlogdetOnLeft<T>(n)) continue;
    o.slogdet_on_chip = on_chip;
    o.sign.Poison(), o.logdet.Poison();
    CK(Launch<T>(LuOutput::kSlogdet, da.p, nullptr, 0, o, batch, n));
    CK(cudaDeviceSynchronize());
    const auto SG = o.sign.Get(), LD = o.logdet.Get();
    for (int64_t b = 0; b < batch; ++b) {  // against the GPU's own factors (same kernel code)
      double ls = 0;
      int par = 0;
      for (int i = 0; i < n; ++i) {
        const double d = LU[b * nn + size_t(i) * n + i];
        ls += std::log(std::fabs(d));
        par += (piv[b * n + i] != i) + (d < 0);
      }
      const double sg = (par & 1) ? -1 : 1;
      const double err = std::fabs(double(LD[b]) - ls) / (n * Eps<T>() * (1 + std::fabs(ls)));
      wdet = std::max(wdet, err);
      if (double(SG[b]) != sg || !(err <= 30)) {
        FAIL("%s slogdet n=%d mat %lld: (%g, %.10g) vs (%g, %.10g)", Name<T>(), n, (long long)b, double(SG[b]),
             double(LD[b]), sg, ls);
        break;
      }
    }
  }
  o.slogdet_on_chip = false;
  std::printf("  %s n=%3d batch=%3lld (checked %3lld) getrf %6.3f  gesv %6.3f  inv %6.3f  slogdet %6.3f\n", Name<T>(),
              n, (long long)batch, (long long)cnt, worst, wsolve, winv, wdet);
}

// Singular / NaN / Inf matrices inside a good batch: neighbours bit-identical to a clean run,
// valid pivots everywhere, LAPACK info on the exactly singular ones.
template <typename T>
void CheckBad(int n, bool fused) {
  const int64_t batch = 33;
  const size_t nn = size_t(n) * n;
  std::vector<T> A(nn * batch), Abad;
  for (int64_t b = 0; b < batch; ++b) MakeMatrix<T>(kRandom, n, A.data() + b * nn);
  std::vector<T> B(size_t(n) * 3 * batch);
  for (auto& v : B) v = T(Rand());
  Abad = A;
  const int64_t bad[4] = {3, 7, 11, 20};
  const Kind kinds[4] = {kZeroColumn, kNaN, kInf, kZero};
  for (int t = 0; t < 4; ++t) MakeMatrix<T>(kinds[t], n, Abad.data() + bad[t] * nn);
  auto is_bad = [&](int64_t b) { return b == 3 || b == 7 || b == 11 || b == 20; };
  Dev<T> dgood(nn * batch), dbad(nn * batch), db(B.size());
  dgood.Put(A), dbad.Put(Abad), db.Put(B);
  Outs<T> o(batch, n, 3);
  std::vector<LuOutput> outs = {LuOutput::kFactor};
  if (fused) outs.insert(outs.end(), {LuOutput::kSolve, LuOutput::kInverse});
  if (fused || LuSlogdetOnLeft<T>(n)) outs.push_back(LuOutput::kSlogdet);
  for (LuOutput out : outs) {
    std::vector<std::vector<char>> res[2];
    for (int run = 0; run < 2; ++run) {
      o.lu.Poison(), o.piv.Poison(), o.perm.Poison(), o.info.Poison(), o.x.Poison(), o.inv.Poison();
      o.sign.Poison(), o.logdet.Poison();
      CK(Launch<T>(out, run ? dbad.p : dgood.p, db.p, 3, o, batch, n));
      CK(cudaDeviceSynchronize());
      auto bytes = [](const auto& v) { return std::vector<char>((const char*)v.data(), (const char*)(v.data() + v.size())); };
      switch (out) {
        case LuOutput::kFactor: res[run] = {bytes(o.lu.Get()), bytes(o.piv.Get()), bytes(o.perm.Get()), bytes(o.info.Get())}; break;
        case LuOutput::kSolve: res[run] = {bytes(o.x.Get()), bytes(o.info.Get())}; break;
        case LuOutput::kInverse: res[run] = {bytes(o.inv.Get()), bytes(o.info.Get())}; break;
        case LuOutput::kSlogdet: res[run] = {bytes(o.sign.Get()), bytes(o.logdet.Get())}; break;
      }
    }
    for (size_t a = 0; a < res[0].size(); ++a) {
      const size_t per = res[0][a].size() / batch;
      for (int64_t b = 0; b < batch; ++b)
        if (!is_bad(b) && std::memcmp(res[0][a].data() + b * per, res[1][a].data() + b * per, per) != 0) {
          FAIL("%s n=%d out %d: neighbour %lld of bad matrices changed (array %zu)", Name<T>(), n, int(out), (long long)b, a);
          break;
        }
    }
    if (out == LuOutput::kFactor) {
      const int32_t* piv = reinterpret_cast<const int32_t*>(res[1][1].data());
      const int32_t* info = reinterpret_cast<const int32_t*>(res[1][3].data());
      for (int64_t b = 0; b < batch; ++b)
        for (int j = 0; j < n; ++j)
          if (piv[b * n + j] < j || piv[b * n + j] >= n) { FAIL("%s n=%d bad batch: mat %lld pivot[%d] = %d", Name<T>(), n, (long long)b, j, piv[b * n + j]); break; }
      if (info[3] != kZeroCol + 1) FAIL("%s n=%d zero-column matrix: info %d, want %d", Name<T>(), n, info[3], kZeroCol + 1);
      if (info[20] != 1) FAIL("%s n=%d zero matrix: info %d, want 1", Name<T>(), n, info[20]);
      for (int j = 0; j < n; ++j)
        if (piv[20 * n + j] != j) { FAIL("%s n=%d zero matrix: pivot[%d] = %d", Name<T>(), n, j, piv[20 * n + j]); break; }
    }
    if (out == LuOutput::kSolve || out == LuOutput::kInverse) {
      const int32_t* info = reinterpret_cast<const int32_t*>(res[1][1].data());
      if (info[3] != kZeroCol + 1 || info[20] != 1) FAIL("%s n=%d out %d: singular info %d %d", Name<T>(), n, int(out), info[3], info[20]);
    }
    if (out == LuOutput::kSlogdet) {
      const T* sg = reinterpret_cast<const T*>(res[1][0].data());
      const T* ld = reinterpret_cast<const T*>(res[1][1].data());
      for (int64_t b : {int64_t(3), int64_t(20)})
        if (!(sg[b] == T(0) && ld[b] == -T(INFINITY))) FAIL("%s n=%d slogdet singular mat %lld: (%g, %g)", Name<T>(), n, (long long)b, double(sg[b]), double(ld[b]));
      if (!(ld[7] != ld[7])) FAIL("%s n=%d slogdet NaN matrix: logabsdet %g", Name<T>(), n, double(ld[7]));
    }
  }
}

// ---- timing --------------------------------------------------------------------------------------
template <typename T>
void Time(int n) {
  const size_t nn = size_t(n) * n;
  const int64_t batch = int64_t((256ull << 20) / (nn * sizeof(T)));
  std::vector<T> A(nn * batch), B(size_t(n) * batch);
  for (auto& v : A) v = T(Rand());
  for (auto& v : B) v = T(Rand());
  Dev<T> da(A.size()), db(B.size());
  da.Put(A), db.Put(B);
  Outs<T> o(batch, n, 1);
  const bool fused = n <= LuBlockedFusedMaxN<T>();
  std::vector<LuOutput> outs = {LuOutput::kFactor};
  if (fused) outs.insert(outs.end(), {LuOutput::kSolve, LuOutput::kInverse});
  if (fused || LuSlogdetOnLeft<T>(n)) outs.push_back(LuOutput::kSlogdet);
  const char* names[4] = {"getrf", "gesv1", "inv", "slogdet"};
  cudaEvent_t e0, e1;
  CK(cudaEventCreate(&e0));
  CK(cudaEventCreate(&e1));
  for (LuOutput out : outs) {
    o.lu.Poison(), o.x.Poison(), o.inv.Poison();
    CK(Launch<T>(out, da.p, db.p, 1, o, batch, n));
    CK(cudaDeviceSynchronize());
    if (out == LuOutput::kFactor) {  // sample of the timing batch
      const auto LU = o.lu.Get();
      const auto piv = o.piv.Get(), perm = o.perm.Get();
      for (int64_t b : {int64_t(0), batch / 2, batch - 1})
        CheckFactor<T>(n, A.data() + b * nn, LU.data() + b * nn, piv.data() + b * n, perm.data() + b * n, "getrf(timing batch)");
    } else if (out == LuOutput::kSolve) {
      const auto X = o.x.Get();
      for (int64_t b : {int64_t(0), batch - 1}) {
        const double r = SolveResid<T>(n, 1, A.data() + b * nn, B.data() + b * n, X.data() + b * n);
        if (!(r <= 30)) FAIL("%s gesv timing batch n=%d mat %lld resid %.3g", Name<T>(), n, (long long)b, r);
      }
    }
    std::vector<float> ts;
    for (int rep = 0; rep < 7; ++rep) {
      CK(cudaEventRecord(e0));
      CK(Launch<T>(out, da.p, db.p, 1, o, batch, n));
      CK(cudaEventRecord(e1));
      CK(cudaEventSynchronize(e1));
      float ms = 0;
      CK(cudaEventElapsedTime(&ms, e0, e1));
      ts.push_back(ms);
    }
    std::sort(ts.begin(), ts.end());
    const double t = ts[ts.size() / 2] * 1e-3;
    const double mat = double(nn) * sizeof(T), f3 = double(n) * n * n;
    double bytes = 0, flops = 2 * f3 / 3;
    switch (out) {
      case LuOutput::kFactor: bytes = 2 * mat + 8.0 * n; break;
      case LuOutput::kSolve: bytes = mat + 2.0 * n * sizeof(T); flops += 2.0 * n * n; break;
      case LuOutput::kInverse: bytes = 2 * mat; flops += 2 * f3; break;
      case LuOutput::kSlogdet: bytes = mat; break;
    }
    bytes *= batch, flops *= batch;
    const double roof = std::max(bytes / 4.24e12, flops / 67e12) / t;
    std::printf("| %s | %3d | %-7s | %6lld | %9.1f | %7.1f | %8.1f | %.3f |\n", Name<T>(), n, names[int(out)],
                (long long)batch, t * 1e6, bytes / t * 1e-9, flops / t * 1e-9, roof);
  }
  cudaEventDestroy(e0), cudaEventDestroy(e1);
}

template <typename T>
void CheckAll() {
  std::printf("== %s correctness (LuBlockedMaxN %d, FusedMaxN %d)\n", Name<T>(), LuBlockedMaxN<T>(), LuBlockedFusedMaxN<T>());
  // Sanitize mode (racecheck pays per shared-memory access: ~40 s per matrix of n = 129 in the
  // medium class, so one matrix from 65 on): warp class at 33 and 64 (f32 every output, f64
  // inverse / gesv k <= 1); getrf / slogdet on the tile class's three rows a lane at 65 and 72 (and
  // the inverse's getri after it); f64 getrf on the left class's three-pass band at 96; getrf on
  // the left class at 100 (128-thread band) and 233 (256);
  // the fused outputs on the medium class at 65 and 100 (the <= 128 register budget). Not reached
  // there: the medium class above 128 (its 1-block-per-SM build), the left class above 256 (its
  // 8-pass band) and the large class (getrf now only where the left class does not fit).
  const std::vector<int> sizes = SanitizeMode() ? std::vector<int>{17, 33, 64, 65, 72, 96, 100, 233}
      : std::vector<int>{17, 20, 24, 31, 32, 33, 34, 35, 36, 37, 38, 39, 40, 48, 63, 64, 65, 72, 79, 80, 81, 88, 96, 100,
                         127, 128, 129, 160, 161, 200, 232, 233, 256, 300, 384, 511, 512};
  for (int n : sizes) {
    const bool fused = n <= LuBlockedFusedMaxN<T>();
    for (int64_t batch : {1, 3, 33}) {
      if (n > 256 && batch == 33) continue;  // host reference time; 3 covers the grid-stride path
      if (SanitizeMode() && batch > (n <= 64 ? 33 : 1)) continue;
      CheckCase<T>(n, batch, fused);
    }
  }
  // (sanitize: n = 33 only; its gesv k = 3 is the medium class for f64)
  const std::vector<int> bad = SanitizeMode() ? std::vector<int>{33}
                                              : std::vector<int>{33, 64, 72, 96, 100, 160, 233, 512};
  for (int n : bad) CheckBad<T>(n, n <= LuBlockedFusedMaxN<T>());
  // invalid sizes / kinds are refused, not launched
  {
    LuArgs<T> args;
    args.batch = 1, args.n = LuBlockedMaxN<T>() + 1;
    if (LuBlocked<T>(0, args, LuOutput::kFactor) != cudaErrorInvalidValue) FAIL("%s n > max not refused", Name<T>());
    args.n = LuBlockedFusedMaxN<T>() + 1;
    if (LuBlocked<T>(0, args, LuOutput::kSolve) != cudaErrorInvalidValue) FAIL("%s fused n > max not refused", Name<T>());
    if (LuBlocked<T>(0, args, LuOutput::kSlogdet) != cudaErrorInvalidValue)  // no scratch for the left class
      FAIL("%s slogdet n > fused max without scratch not refused", Name<T>());
    cudaGetLastError();
  }
}

int main(int argc, char** argv) {
  const bool quick = (argc > 1 && std::strcmp(argv[1], "quick") == 0) || SanitizeMode();
  const bool time_only = argc > 1 && std::strcmp(argv[1], "time") == 0;
  if (!time_only) {
    CheckAll<float>();
    CheckAll<double>();
  }
  if (!quick) {
    std::printf("\n| dtype | n | output | batch | time us | GB/s | GFLOP/s | roofline |\n|---|---|---|---|---|---|---|---|\n");
    std::vector<int> f32 = {64, 96, 128, 256, 512}, f64 = {64, 128, 256, 512};
    if (time_only && argc > 2) {  // "time N...": these sizes only, both dtypes
      f32.clear();
      for (int a = 2; a < argc; ++a) f32.push_back(std::atoi(argv[a]));
      f64 = f32;
    }
    for (int n : f32) Time<float>(n);
    for (int n : f64) Time<double>(n);
  }
  if (g_fail) {
    std::printf("check_lu_blocked: %d FAILURES (near-tie pivots: %d)\n", g_fail, g_ties);
    return 1;
  }
  std::printf("check_lu_blocked: all passed (near-tie pivot differences accepted: %d)\n", g_ties);
  return 0;
}
