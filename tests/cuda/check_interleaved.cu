// Standalone check of the interleaved-layout solvers through the library's entry points
// (cuda/launch.h, the variants of cuda/interleaved_tuning.h): every n in 1..72, f32 and f64,
// several chunk sizes c (including c not a multiple of 32), every op and flag. Outputs are
// poisoned with NaN before each launch; unread triangles of the inputs are NaN too, so a kernel
// that reads them fails. One non-SPD / NaN matrix per batch must leave every other bit-identical.
// Usage: check_interleaved [--quick]   (exit 1 on any failure)
// BATCHLA_CHECK_SANITIZE=1 (sanitize mode, tests/cuda/check_common.h): only the n that launch a
// kernel no smaller n launched (NewKernelAt: every kFull n, which is template<int N>, and the first
// n of each other variant with and without a partial tile), 2 chunks of 32 instead of 3; chunk
// sizes 1 / 37 / 64 / 128 on n = 3, 17, 33, 64 (a kFull, kShared, padded kShared and kTile variant).
#include <array>
#include <cstdlib>
#include <cstring>
#include <set>
#include <string>
#include <vector>

#include "cuda/interleaved_tuning.h"  // the variant per (dtype, op, n): which n sanitize mode needs
#include "cuda/launch.h"
#include "tests/cuda/il_check.h"

using namespace ilcheck;

namespace {

template <typename T>
struct Dev {  // a device copy of a host vector
  T* p = nullptr;
  size_t count = 0;
  explicit Dev(const std::vector<T>& h) : count(h.size()) {
    CK(cudaMalloc(&p, (count ? count : 1) * sizeof(T)));
    if (count) CK(cudaMemcpy(p, h.data(), count * sizeof(T), cudaMemcpyHostToDevice));
  }
  explicit Dev(size_t n) : count(n) {
    CK(cudaMalloc(&p, (n ? n : 1) * sizeof(T)));
    CK(cudaMemset(p, 0xff, (n ? n : 1) * sizeof(T)));  // NaN for floats, -1 for info
  }
  ~Dev() { cudaFree(p); }
  std::vector<T> Host() const {
    std::vector<T> h(count);
    if (count) CK(cudaMemcpy(h.data(), p, count * sizeof(T), cudaMemcpyDeviceToHost));
    return h;
  }
};

// One triangle of every matrix replaced by NaN: the op must not read it.
std::vector<double> PoisonTriangle(std::vector<double> a, int64_t batch, int n, bool keep_lower,
                                   bool poison_diag = false) {
  for (int64_t b = 0; b < batch; ++b)
    for (int i = 0; i < n; ++i)
      for (int j = 0; j < n; ++j) {
        const bool kept = keep_lower ? j <= i : j >= i;
        if (!kept || (poison_diag && i == j)) a[(b * n + i) * n + j] = NAN;
      }
  return a;
}

// a + E with E antisymmetric (E(i, j) = -E(j, i), zero diagonal): its symmetric part is a, so a
// symmetrizing factorization must give a's factor, and one that reads a wrong mirror does not.
std::vector<double> AddSkew(std::vector<double> a, int64_t batch, int n) {
  for (int64_t b = 0; b < batch; ++b)
    for (int i = 0; i < n; ++i)
      for (int j = 0; j < i; ++j) {
        const double e = 0.25 * ((i * 7 + j * 3 + int(b % 5)) % 5 - 2);
        a[(b * n + i) * n + j] += e;
        a[(b * n + j) * n + i] -= e;
      }
  return a;
}

template <typename T>
void Worst(const char* what, int n, int64_t c, double r, double& worst) {
  if (!(r <= 30.0)) FAIL("%s %s n=%d c=%lld residual %.3g", Name<T>(), what, n, (long long)c, r);
  if (r > worst || r != r) worst = r;
}

template <typename T>
double CheckOne(int n, int64_t c, int64_t chunks, int k) {
  const int64_t batch = chunks * c;
  const double eps = Eps<T>();
  double worst = 0;
  const std::vector<double> a = SpdBatch<T>(batch, n);
  const std::vector<double> b = RandomBatch(batch * n * k);
  const std::vector<T> b_il = ToInterleaved<T>(b, batch, n, k, c);
  const int64_t nn = int64_t(n) * n, nk = int64_t(n) * k;

  // potrf, plain and symmetrized (the upper triangle is NaN for the plain one; an antisymmetric
  // part added for the symmetrized one).
  for (bool sym : {false, true}) {
    Dev<T> da(ToInterleaved<T>(sym ? AddSkew(a, batch, n) : PoisonTriangle(a, batch, n, true), batch, n, n, c));
    Dev<T> dl(static_cast<size_t>(batch * nn));
    Dev<int32_t> dinfo(static_cast<size_t>(batch));
    CK(batchla::LaunchIlPotrf<T>(0, da.p, dl.p, dinfo.p, chunks, c, n, sym));
    const auto l = FromInterleaved(dl.Host(), batch, n, n, c);
    const auto info = dinfo.Host();
    for (int64_t m = 0; m < batch; ++m) {
      if (info[m] != 0) FAIL("%s potrf n=%d info[%lld]=%d", Name<T>(), n, (long long)m, info[m]);
      Worst<T>(sym ? "potrf sym" : "potrf", n, c, PotrfResidual(&a[m * nn], &l[m * nn], n, eps), worst);
    }
    if (sym) continue;
    // potrs from that factor, as lower and (transposed) as upper.
    for (bool lower : {true, false}) {
      std::vector<double> f = l;
      if (!lower)
        for (int64_t m = 0; m < batch; ++m)
          for (int i = 0; i < n; ++i)
            for (int j = 0; j < n; ++j) f[m * nn + i * n + j] = l[m * nn + j * n + i];
      Dev<T> df(ToInterleaved<T>(PoisonTriangle(f, batch, n, lower), batch, n, n, c));
      Dev<T> db(b_il);
      Dev<T> dx(static_cast<size_t>(batch * nk));
      CK(batchla::LaunchIlPotrs<T>(0, df.p, db.p, dx.p, chunks, c, n, k, lower));
      const auto x = FromInterleaved(dx.Host(), batch, n, k, c);
      for (int64_t m = 0; m < batch; ++m)
        Worst<T>(lower ? "potrs lower" : "potrs upper", n, c,
                 SolveResidual(&a[m * nn], &b[m * nk], &x[m * nk], n, k, eps), worst);
    }
  }

  // posv from either triangle, then one non-SPD and one NaN matrix: they alone fail.
  for (bool lower : {true, false}) {
    for (bool bad : {false, true}) {
      std::vector<double> ab = PoisonTriangle(a, batch, n, lower);
      const int64_t m_neg = 5 % batch, m_nan = (batch - 2 + batch) % batch;
      if (bad) {
        ab[m_neg * nn + (n - 1) * n + (n - 1)] = -1.0;  // last pivot negative
        ab[m_nan * nn] = NAN;
      }
      Dev<T> da(ToInterleaved<T>(ab, batch, n, n, c));
      Dev<T> db(b_il);
      Dev<T> dx(static_cast<size_t>(batch * nk));
      Dev<int32_t> dinfo(static_cast<size_t>(batch));
      if (!batchla::IlPosvFused<T>(n)) {  // the library composes potrf + potrs there: so does the check
        Dev<T> dl(static_cast<size_t>(batch * nn));
        std::vector<double> at = ab;
        if (!lower)
          for (int64_t m = 0; m < batch; ++m)
            for (int i = 0; i < n; ++i)
              for (int j = 0; j < n; ++j) at[m * nn + i * n + j] = ab[m * nn + j * n + i];
        Dev<T> dat(ToInterleaved<T>(at, batch, n, n, c));
        CK(batchla::LaunchIlPotrf<T>(0, dat.p, dl.p, dinfo.p, chunks, c, n, false));
        CK(batchla::LaunchIlPotrs<T>(0, dl.p, db.p, dx.p, chunks, c, n, k, true));
      } else {
        CK(batchla::LaunchIlPosv<T>(0, da.p, db.p, dx.p, dinfo.p, chunks, c, n, k, lower));
      }
      const auto x = FromInterleaved(dx.Host(), batch, n, k, c);
      const auto info = dinfo.Host();
      for (int64_t m = 0; m < batch; ++m) {
        const bool failed = bad && (m == m_neg || m == m_nan);
        const int want = !failed ? 0 : (m == m_nan ? 1 : n);
        if (info[m] != want)
          FAIL("%s posv n=%d bad=%d info[%lld]=%d want %d", Name<T>(), n, bad, (long long)m, info[m], want);
        if (failed) {
          for (int64_t e = 0; e < nk; ++e)
            if (x[m * nk + e] == x[m * nk + e]) {
              FAIL("%s posv n=%d matrix %lld failed but x not all NaN", Name<T>(), n, (long long)m);
              break;
            }
        } else {
          Worst<T>(lower ? "posv lower" : "posv upper", n, c,
                   SolveResidual(&a[m * nn], &b[m * nk], &x[m * nk], n, k, eps), worst);
        }
      }
    }
  }

  // trsm, every flag; a random matrix with a dominant diagonal, the unread parts NaN.
  std::vector<double> t = RandomBatch(batch * nn);
  for (int64_t m = 0; m < batch; ++m)
    for (int i = 0; i < n; ++i) t[m * nn + i * n + i] = double(T(n + 1 + Rand()));
  for (int flags = 0; flags < 8; ++flags) {
    const bool lower = flags & 1, trans = flags & 2, unit = flags & 4;
    Dev<T> da(ToInterleaved<T>(PoisonTriangle(t, batch, n, lower, unit), batch, n, n, c));
    Dev<T> db(b_il);
    Dev<T> dx(static_cast<size_t>(batch * nk));
    CK(batchla::LaunchIlTrsm<T>(0, da.p, db.p, dx.p, chunks, c, n, k, lower, trans, unit));
    const auto x = FromInterleaved(dx.Host(), batch, n, k, c);
    const std::string what = std::string("trsm") + (lower ? " L" : " U") + (trans ? "T" : "N") + (unit ? "u" : "");
    for (int64_t m = 0; m < batch; ++m) {
      const auto op = TriangularOp(&t[m * nn], n, lower, trans, unit);
      Worst<T>(what.c_str(), n, c, SolveResidual(op.data(), &b[m * nk], &x[m * nk], n, k, eps), worst);
    }
  }
  return worst;
}

// Whether n runs a kernel (per op: variant, and for runtime-n variants whether the last tile is
// partial) that no n in `seen` ran; adds n's kernels to `seen`.
template <typename T>
bool NewKernelAt(int n, std::set<std::array<int, 8>>& seen) {
  namespace il = batchla::il;
  const int dtype = sizeof(T) == 4 ? 0 : 1;
  bool fresh = false;
  for (int op = 0; op < il::kNumOps; ++op) {
    const il::Variant v = n <= il::kTunedMaxN ? il::kTuned[dtype][op][n] : il::kTileDefault[dtype];
    const int shape = v.kind == il::Kind::kFull ? n : int(v.nb > 0 && n % v.nb != 0);
    fresh |= seen.insert({op, int(v.kind), int(v.order), v.nb, v.warps, v.pad, v.alt, shape}).second;
  }
  return fresh;
}

template <typename T>
void CheckAll(bool quick) {
  const bool san = SanitizeMode();
  const int64_t chunks = san ? 2 : 3;
  std::printf("%s: worst scaled residual per n (c = 32, %lld chunks, k = 2; all ops and flags)\n", Name<T>(),
              (long long)chunks);
  std::set<std::array<int, 8>> seen;
  const char* nmin_env = std::getenv("BATCHLA_CHECK_NMIN");  // e.g. a sanitizer run of the block kinds only
  const char* nmax_env = std::getenv("BATCHLA_CHECK_NMAX");
  const int nmin = nmin_env ? std::atoi(nmin_env) : 1, nmax = nmax_env ? std::atoi(nmax_env) : 72;
  for (int n = nmin; n <= nmax; n += (quick && n > 8 ? 7 : 1)) {
    if (san && !NewKernelAt<T>(n, seen)) continue;
    const double w = CheckOne<T>(n, 32, chunks, 2);
    std::printf("  n=%2d %.2f%s", n, w, n % 6 == 0 ? "\n" : "");
  }
  std::printf("\n%s: other chunk sizes and k\n", Name<T>());
  for (int n : san ? std::vector<int>{3, 17, 33, 64} : std::vector<int>{1, 3, 8, 16, 17, 25, 33, 64}) {
    for (int64_t c : {1, 37, 64, 128}) {
      const double w = CheckOne<T>(n, c, c == 1 ? 5 : 2, c == 37 ? 1 : 3);
      std::printf("  n=%d c=%lld %.2f\n", n, (long long)c, w);
    }
  }
  // batch 0 launches nothing and succeeds
  CK(batchla::LaunchIlPotrf<T>(0, nullptr, nullptr, nullptr, 0, 32, 5, false));
  CK(batchla::LaunchIlPosv<T>(0, nullptr, nullptr, nullptr, nullptr, 0, 32, 5, 1, true));
}

}  // namespace

// BATCHLA_CHECK_DTYPE=float32 / float64 checks one scalar type only, BATCHLA_CHECK_NMIN=k /
// BATCHLA_CHECK_NMAX=k the first list from / up to n = k (a sanitizer run of one type or kind:
// racecheck takes minutes per type); unset: both types, every n.
int main(int argc, char** argv) {
  const bool quick = argc > 1 && std::strcmp(argv[1], "--quick") == 0;
  const char* only = std::getenv("BATCHLA_CHECK_DTYPE");
  if (!only || !std::strcmp(only, "float32")) CheckAll<float>(quick);
  if (!only || !std::strcmp(only, "float64")) CheckAll<double>(quick);
  CK(cudaDeviceSynchronize());
  std::printf("%s (%d failures)\n", g_fail ? "FAIL" : "PASS", g_fail);
  return g_fail ? 1 : 0;
}
