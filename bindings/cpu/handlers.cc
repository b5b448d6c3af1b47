// CPU XLA FFI handlers for the targets of bindings/TARGETS.md. Each handler validates its
// operands (naming the offending one), dispatches once on the dtype and runs the per-matrix
// kernel of this folder over the collapsed batch. Buffers are row-major; offsets are int64_t.
#include "bindings/cpu/handlers.h"

#include <algorithm>
#include <cstdint>
#include <string>
#include <vector>

#include "bindings/cpu/geqrf.h"
#include "bindings/cpu/getrf.h"
#include "bindings/cpu/getrs.h"
#include "bindings/cpu/interleaved.h"
#include "bindings/cpu/lu_solvers.h"
#include "bindings/cpu/orgqr.h"
#include "bindings/cpu/ormqr.h"
#include "bindings/cpu/parallel.h"
#include "bindings/cpu/posv.h"
#include "bindings/cpu/potrf.h"
#include "bindings/cpu/potrs.h"
#include "bindings/cpu/qr_solvers.h"
#include "bindings/cpu/trsm.h"
#include "bindings/ffi_common.h"
#include "bindings/validate.h"
#include "bindings/validate_interleaved.h"

namespace batchla_ffi::cpu {
namespace {

using ffi::AnyBuffer;
using ffi::Result;

using batchla::cpu::ParallelFor;

// The loop every solve handler shares, split over the thread pool: x_m = b_m, then
// solve(m, a_m, x_m) in place. `flops` estimates one matrix's work.
template <typename T, typename Solve>
void SolveBatch(ffi::ThreadPool& pool, AnyBuffer a, AnyBuffer b, Result<AnyBuffer> x,
                const MatrixShape& bs, double flops, Solve&& solve) {
  const int64_t nn = bs.rows * bs.rows, nk = bs.rows * bs.cols;
  const T* pa = DataAs<const T>(a);
  const T* pb = DataAs<const T>(b);
  T* px = DataAs<T>(x);
  ParallelFor(pool, bs.batch, flops, [&](int64_t begin, int64_t end) {
    for (int64_t m = begin; m < end; ++m) {
      if (pb != px) std::copy_n(pb + m * nk, nk, px + m * nk);  // skipped when XLA aliased b, x
      solve(m, pa + m * nn, px + m * nk);
    }
  });
}

// The lower triangle of (A + A^T) / 2 into l, so potrf can then run in place.
template <typename T>
void SymmetrizeLower(const T* a, T* l, int64_t n) {
  for (int64_t i = 0; i < n; ++i) {
    for (int64_t j = 0; j <= i; ++j) l[i * n + j] = (a[i * n + j] + a[j * n + i]) / T(2);
  }
}

ffi::Error PotrfImpl(ffi::ThreadPool pool, AnyBuffer a, Result<AnyBuffer> l, Result<AnyBuffer> info,
                     bool symmetrize) {
  constexpr const char* kOp = "batchla_potrf";
  auto as = CheckFactor(kOp, a, *l, "l", *info);
  if (!as) return as.error();
  return DispatchFloat(a.element_type(), kOp, [&](auto zero) {
    using T = decltype(zero);
    const int64_t n = as->rows, nn = n * n;
    const T* pa = DataAs<const T>(a);
    T* pl = DataAs<T>(l);
    int32_t* pinfo = DataAs<int32_t>(info);
    const double flops = double(n) * n * n / 3;
    ParallelFor(pool, as->batch, flops, [&](int64_t begin, int64_t end) {
      for (int64_t m = begin; m < end; ++m) {
        const T* am = pa + m * nn;
        if (symmetrize) {
          SymmetrizeLower(am, pl + m * nn, n);
          am = pl + m * nn;
        }
        pinfo[m] = batchla::cpu::PotrfLower(am, pl + m * nn, n);
      }
    });
    return ffi::Error::Success();
  });
}

ffi::Error TrsmImpl(ffi::ThreadPool pool, AnyBuffer a, AnyBuffer b, Result<AnyBuffer> x, bool lower, bool trans,
                    bool unit_diag) {
  constexpr const char* kOp = "batchla_trsm";
  auto bs = CheckSolve(kOp, a, "a", b, *x);
  if (!bs) return bs.error();
  return DispatchFloat(a.element_type(), kOp, [&](auto zero) {
    using T = decltype(zero);
    SolveBatch<T>(pool, a, b, x, *bs, double(bs->rows) * bs->rows * bs->cols, [&](int64_t, const T* am, T* xm) {
      batchla::cpu::TrsmInPlace(am, xm, bs->rows, bs->cols, lower, trans, unit_diag);
    });
    return ffi::Error::Success();
  });
}

ffi::Error PotrsImpl(ffi::ThreadPool pool, AnyBuffer c, AnyBuffer b, Result<AnyBuffer> x, bool lower) {
  constexpr const char* kOp = "batchla_potrs";
  auto bs = CheckSolve(kOp, c, "c", b, *x);
  if (!bs) return bs.error();
  return DispatchFloat(c.element_type(), kOp, [&](auto zero) {
    using T = decltype(zero);
    SolveBatch<T>(pool, c, b, x, *bs, 2.0 * bs->rows * bs->rows * bs->cols, [&](int64_t, const T* cm, T* xm) {
      batchla::cpu::PotrsInPlace(cm, xm, bs->rows, bs->cols, lower);
    });
    return ffi::Error::Success();
  });
}

ffi::Error PosvImpl(ffi::ThreadPool pool, AnyBuffer a, AnyBuffer b, Result<AnyBuffer> x, Result<AnyBuffer> info,
                    bool lower) {
  constexpr const char* kOp = "batchla_posv";
  auto bs = CheckSolve(kOp, a, "a", b, *x, &*info);
  if (!bs) return bs.error();
  return DispatchFloat(a.element_type(), kOp, [&](auto zero) {
    using T = decltype(zero);
    int32_t* pinfo = DataAs<int32_t>(info);
    const int64_t n = bs->rows;
    const double flops = double(n) * n * n / 3 + 2.0 * n * n * bs->cols;
    SolveBatch<T>(pool, a, b, x, *bs, flops, [&](int64_t m, const T* am, T* xm) {
      thread_local std::vector<T> work;  // the n x n factor, one per thread (host memory)
      work.resize(static_cast<size_t>(n * n));
      pinfo[m] = batchla::cpu::PosvInPlace(am, xm, work.data(), n, bs->cols, lower);
    });
    return ffi::Error::Success();
  });
}

// ---- Interleaved layout (..., rows, cols, c): each matrix is gathered into row-major scratch,
// handled by the same per-matrix routine as the standard target, and scattered back.

// Per-thread row-major scratch for one matrix (n x n), its right-hand side (n x k) and an
// n x n work matrix (posv's factor).
template <typename T>
struct InterleavedScratch {
  T* a;
  T* x;
  T* work;
};
template <typename T>
InterleavedScratch<T> ThreadInterleavedScratch(int64_t n, int64_t k) {
  thread_local std::vector<T> buf;
  buf.resize(static_cast<size_t>(2 * n * n + n * k));
  return {buf.data(), buf.data() + n * n, buf.data() + n * n + n * k};
}

// The loop the interleaved solves share: for every matrix m, gather a_m and b_m, run
// solve(m, a_m, x_m, work) in place on the scratch, scatter x_m. Gathering before scattering makes
// aliased b and x safe.
template <typename T, typename Solve>
void InterleavedSolveBatch(ffi::ThreadPool& pool, AnyBuffer a, AnyBuffer b, Result<AnyBuffer> x,
                           const InterleavedShape& bs, double flops, Solve&& solve) {
  const int64_t n = bs.rows, k = bs.cols, c = bs.c;
  const T* pa = DataAs<const T>(a);
  const T* pb = DataAs<const T>(b);
  T* px = DataAs<T>(x);
  ParallelFor(pool, bs.chunks * bs.c, flops, [&](int64_t begin, int64_t end) {
    for (int64_t m = begin; m < end; ++m) {
      auto s = ThreadInterleavedScratch<T>(n, k);
      batchla::cpu::GatherMatrix(pa, s.a, m, n, n, c);
      batchla::cpu::GatherMatrix(pb, s.x, m, n, k, c);
      solve(m, s.a, s.x, s.work);
      batchla::cpu::ScatterMatrix(s.x, px, m, n, k, c);
    }
  });
}

ffi::Error IlPotrfImpl(ffi::ThreadPool pool, AnyBuffer a, Result<AnyBuffer> l, Result<AnyBuffer> info,
                       bool symmetrize) {
  constexpr const char* kOp = "batchla_il_potrf";
  auto as = CheckInterleavedFactor(kOp, a, *l, "l", *info);
  if (!as) return as.error();
  return DispatchFloat(a.element_type(), kOp, [&](auto zero) {
    using T = decltype(zero);
    const int64_t n = as->rows, c = as->c;
    const T* pa = DataAs<const T>(a);
    T* pl = DataAs<T>(l);
    int32_t* pinfo = DataAs<int32_t>(info);
    ParallelFor(pool, as->chunks * c, double(n) * n * n / 3, [&](int64_t begin, int64_t end) {
      for (int64_t m = begin; m < end; ++m) {
        T* s = ThreadInterleavedScratch<T>(n, 0).a;
        batchla::cpu::GatherMatrix(pa, s, m, n, n, c);
        if (symmetrize) SymmetrizeLower(s, s, n);  // reads the upper triangle, writes the lower
        pinfo[m] = batchla::cpu::PotrfLower(s, s, n);
        batchla::cpu::ScatterMatrix(s, pl, m, n, n, c);
      }
    });
    return ffi::Error::Success();
  });
}

ffi::Error IlPotrsImpl(ffi::ThreadPool pool, AnyBuffer c, AnyBuffer b, Result<AnyBuffer> x, bool lower) {
  constexpr const char* kOp = "batchla_il_potrs";
  auto bs = CheckInterleavedSolve(kOp, c, "c", b, *x);
  if (!bs) return bs.error();
  return DispatchFloat(c.element_type(), kOp, [&](auto zero) {
    using T = decltype(zero);
    InterleavedSolveBatch<T>(pool, c, b, x, *bs, 2.0 * bs->rows * bs->rows * bs->cols,
                             [&](int64_t, const T* cm, T* xm, T*) {
                               batchla::cpu::PotrsInPlace(cm, xm, bs->rows, bs->cols, lower);
                             });
    return ffi::Error::Success();
  });
}

ffi::Error IlPosvImpl(ffi::ThreadPool pool, AnyBuffer a, AnyBuffer b, Result<AnyBuffer> x,
                      Result<AnyBuffer> info, bool lower) {
  constexpr const char* kOp = "batchla_il_posv";
  auto bs = CheckInterleavedSolve(kOp, a, "a", b, *x, &*info);
  if (!bs) return bs.error();
  return DispatchFloat(a.element_type(), kOp, [&](auto zero) {
    using T = decltype(zero);
    int32_t* pinfo = DataAs<int32_t>(info);
    const int64_t n = bs->rows;
    const double flops = double(n) * n * n / 3 + 2.0 * n * n * bs->cols;
    InterleavedSolveBatch<T>(pool, a, b, x, *bs, flops, [&](int64_t m, const T* am, T* xm, T* work) {
      pinfo[m] = batchla::cpu::PosvInPlace(am, xm, work, n, bs->cols, lower);
    });
    return ffi::Error::Success();
  });
}

ffi::Error IlTrsmImpl(ffi::ThreadPool pool, AnyBuffer a, AnyBuffer b, Result<AnyBuffer> x, bool lower,
                      bool trans, bool unit_diag) {
  constexpr const char* kOp = "batchla_il_trsm";
  auto bs = CheckInterleavedSolve(kOp, a, "a", b, *x);
  if (!bs) return bs.error();
  return DispatchFloat(a.element_type(), kOp, [&](auto zero) {
    using T = decltype(zero);
    InterleavedSolveBatch<T>(pool, a, b, x, *bs, double(bs->rows) * bs->rows * bs->cols,
                             [&](int64_t, const T* am, T* xm, T*) {
                               batchla::cpu::TrsmInPlace(am, xm, bs->rows, bs->cols, lower, trans, unit_diag);
                             });
    return ffi::Error::Success();
  });
}

// Element e of matrix m of each leading index, from lane m % c of chunk m / c.
ffi::Error FromInterleavedImpl(ffi::ThreadPool pool, AnyBuffer x, Result<AnyBuffer> out) {
  constexpr const char* kOp = "batchla_from_interleaved";
  auto xs = CheckFromInterleaved(kOp, x, *out);
  if (!xs) return xs.error();
  return DispatchFloat(x.element_type(), kOp, [&](auto zero) {
    using T = decltype(zero);
    const int64_t e_count = xs->elems, c = xs->c, count = xs->count;
    const T* px = DataAs<const T>(x);
    T* po = DataAs<T>(out);
    ParallelFor(pool, xs->lead * count, double(e_count), [&](int64_t begin, int64_t end) {
      for (int64_t lm = begin; lm < end; ++lm) {
        const int64_t lead = lm / count, m = lm % count;
        const T* src = px + lead * xs->chunks * c * e_count + batchla::cpu::InterleavedBase(m, 1, e_count, c);
        for (int64_t e = 0; e < e_count; ++e) po[lm * e_count + e] = src[e * c];
      }
    });
    return ffi::Error::Success();
  });
}

// Per-thread scratch of the LU ops: an n x n factor and n pivots (host memory, reused).
template <typename T>
struct LuScratch {
  T* lu;
  int32_t* pivots;
};
template <typename T>
LuScratch<T> ThreadLuScratch(int64_t n) {
  thread_local std::vector<T> lu;
  thread_local std::vector<int32_t> pivots;
  lu.resize(static_cast<size_t>(n * n));
  pivots.resize(static_cast<size_t>(n));
  return {lu.data(), pivots.data()};
}

ffi::Error GetrfImpl(ffi::ThreadPool pool, AnyBuffer a, Result<AnyBuffer> lu, Result<AnyBuffer> pivots,
                     Result<AnyBuffer> perm, Result<AnyBuffer> info) {
  constexpr const char* kOp = "batchla_getrf";
  auto as = CheckGetrf(kOp, a, *lu, *pivots, *perm, *info);
  if (!as) return as.error();
  return DispatchFloat(a.element_type(), kOp, [&](auto zero) {
    using T = decltype(zero);
    const int64_t n = as->rows, nn = n * n;
    const T* pa = DataAs<const T>(a);
    T* plu = DataAs<T>(lu);
    int32_t* ppiv = DataAs<int32_t>(pivots);
    int32_t* pperm = GetrfPerm(perm);  // nullptr: not wanted
    int32_t* pinfo = DataAs<int32_t>(info);
    ParallelFor(pool, as->batch, 2.0 * n * n * n / 3, [&](int64_t begin, int64_t end) {
      for (int64_t m = begin; m < end; ++m) {
        T* lum = plu + m * nn;
        if (pa != plu) std::copy_n(pa + m * nn, nn, lum);  // skipped when XLA aliased a, lu
        pinfo[m] = batchla::cpu::GetrfInPlace(lum, ppiv + m * n, n);
        if (pperm) batchla::cpu::PermFromPivots(ppiv + m * n, pperm + m * n, n);
      }
    });
    return ffi::Error::Success();
  });
}

ffi::Error GetrsImpl(ffi::ThreadPool pool, AnyBuffer lu, AnyBuffer perm, AnyBuffer b, Result<AnyBuffer> x,
                     bool trans) {
  constexpr const char* kOp = "batchla_getrs";
  auto bs = CheckGetrs(kOp, lu, perm, b, *x);
  if (!bs) return bs.error();
  return DispatchFloat(lu.element_type(), kOp, [&](auto zero) {
    using T = decltype(zero);
    const int64_t n = bs->rows, k = bs->cols;
    const int32_t* pperm = DataAs<const int32_t>(perm);
    SolveBatch<T>(pool, lu, b, x, *bs, 2.0 * n * n * k, [&](int64_t m, const T* lum, T* xm) {
      thread_local std::vector<T> work;  // B's rows while they are permuted, one per thread
      work.resize(static_cast<size_t>(n * k));
      batchla::cpu::GetrsInPlace(lum, pperm + m * n, xm, work.data(), n, k, trans);
    });
    return ffi::Error::Success();
  });
}

ffi::Error GesvImpl(ffi::ThreadPool pool, AnyBuffer a, AnyBuffer b, Result<AnyBuffer> x, Result<AnyBuffer> info) {
  constexpr const char* kOp = "batchla_gesv";
  auto bs = CheckSolve(kOp, a, "a", b, *x, &*info);
  if (!bs) return bs.error();
  return DispatchFloat(a.element_type(), kOp, [&](auto zero) {
    using T = decltype(zero);
    const int64_t n = bs->rows, k = bs->cols;
    int32_t* pinfo = DataAs<int32_t>(info);
    const double flops = 2.0 * n * n * n / 3 + 2.0 * n * n * k;
    SolveBatch<T>(pool, a, b, x, *bs, flops, [&](int64_t m, const T* am, T* xm) {
      auto s = ThreadLuScratch<T>(n);
      pinfo[m] = batchla::cpu::GesvInPlace(am, xm, s.lu, s.pivots, n, k);
    });
    return ffi::Error::Success();
  });
}

ffi::Error InverseImpl(ffi::ThreadPool pool, AnyBuffer a, Result<AnyBuffer> inv, Result<AnyBuffer> info) {
  constexpr const char* kOp = "batchla_inverse";
  auto as = CheckFactor(kOp, a, *inv, "inv", *info);
  if (!as) return as.error();
  return DispatchFloat(a.element_type(), kOp, [&](auto zero) {
    using T = decltype(zero);
    const int64_t n = as->rows, nn = n * n;
    const T* pa = DataAs<const T>(a);
    T* pinv = DataAs<T>(inv);
    int32_t* pinfo = DataAs<int32_t>(info);
    ParallelFor(pool, as->batch, 2.0 * n * n * n, [&](int64_t begin, int64_t end) {
      for (int64_t m = begin; m < end; ++m) {
        auto s = ThreadLuScratch<T>(n);  // a is copied first, so a and inv may alias
        pinfo[m] = batchla::cpu::InverseOf(pa + m * nn, pinv + m * nn, s.lu, s.pivots, n);
      }
    });
    return ffi::Error::Success();
  });
}

ffi::Error SlogdetImpl(ffi::ThreadPool pool, AnyBuffer a, Result<AnyBuffer> sign, Result<AnyBuffer> logabsdet) {
  constexpr const char* kOp = "batchla_slogdet";
  auto as = CheckSlogdet(kOp, a, *sign, *logabsdet);
  if (!as) return as.error();
  return DispatchFloat(a.element_type(), kOp, [&](auto zero) {
    using T = decltype(zero);
    const int64_t n = as->rows, nn = n * n;
    const T* pa = DataAs<const T>(a);
    T* psign = DataAs<T>(sign);
    T* plog = DataAs<T>(logabsdet);
    ParallelFor(pool, as->batch, 2.0 * n * n * n / 3, [&](int64_t begin, int64_t end) {
      for (int64_t m = begin; m < end; ++m) {
        auto s = ThreadLuScratch<T>(n);
        batchla::cpu::SlogdetOf(pa + m * nn, psign + m, plog + m, s.lu, s.pivots, n);
      }
    });
    return ffi::Error::Success();
  });
}

ffi::Error DetClosedImpl(ffi::ThreadPool pool, AnyBuffer a, Result<AnyBuffer> det) {
  constexpr const char* kOp = "batchla_det";
  auto as = CheckDetClosed(kOp, a, *det);
  if (!as) return as.error();
  return DispatchFloat(a.element_type(), kOp, [&](auto zero) {
    using T = decltype(zero);
    const int64_t n = as->rows, nn = n * n;
    const T* pa = DataAs<const T>(a);
    T* pd = DataAs<T>(det);
    ParallelFor(pool, as->batch, double(nn), [&](int64_t begin, int64_t end) {
      for (int64_t m = begin; m < end; ++m) pd[m] = batchla::cpu::DetClosed(pa + m * nn, n);
    });
    return ffi::Error::Success();
  });
}

// Per-thread scratch of the QR ops (host memory, reused), for an m x ncols factorization: taus
// (n), a matrix to factor (work_len), lstsq's R (rwork_len) and the Householder buffers.
template <typename T>
batchla::cpu::QrScratch<T> ThreadQrScratch(int64_t m, int64_t n, int64_t ncols,
                                           int64_t work_len = 0, int64_t rwork_len = 0) {
  thread_local std::vector<T> buf;
  buf.resize(static_cast<size_t>(n + work_len + rwork_len +
                                 batchla::cpu::HouseholderScratchLen(m, ncols)));
  T* p = buf.data();
  return {p, p + n, p + n + work_len,
          batchla::cpu::CarveHouseholderScratch(p + n + work_len + rwork_len, m, ncols)};
}

// Flops of n reflectors applied to an m x ncols matrix: sum_j 4 (m - j)(ncols - j).
double QrFlops(int64_t m, int64_t n, int64_t ncols) {
  const double dm = double(m), dn = double(n), dc = double(ncols);
  return 4.0 * (dm * dn * dc - (dm + dc) * dn * dn / 2 + dn * dn * dn / 3);
}

ffi::Error GeqrfImpl(ffi::ThreadPool pool, AnyBuffer a, Result<AnyBuffer> qr, Result<AnyBuffer> taus) {
  constexpr const char* kOp = "batchla_geqrf";
  auto as = CheckGeqrf(kOp, a, *qr, *taus);
  if (!as) return as.error();
  return DispatchFloat(a.element_type(), kOp, [&](auto zero) {
    using T = decltype(zero);
    const int64_t m = as->rows, n = as->cols, mn = m * n;
    const T* pa = DataAs<const T>(a);
    T* pqr = DataAs<T>(qr);
    T* ptaus = DataAs<T>(taus);
    ParallelFor(pool, as->batch, QrFlops(m, n, n), [&](int64_t begin, int64_t end) {
      for (int64_t b = begin; b < end; ++b) {
        T* qrb = pqr + b * mn;
        if (pa != pqr) std::copy_n(pa + b * mn, mn, qrb);  // skipped when XLA aliased a, qr
        auto s = ThreadQrScratch<T>(m, 0, n);
        batchla::cpu::HouseholderInPlace(qrb, n, m, n, n, ptaus + b * n, s.h);
      }
    });
    return ffi::Error::Success();
  });
}

ffi::Error OrgqrImpl(ffi::ThreadPool pool, AnyBuffer a, AnyBuffer taus, Result<AnyBuffer> q) {
  constexpr const char* kOp = "batchla_orgqr";
  auto qs = CheckOrgqr(kOp, a, taus, *q);
  if (!qs) return qs.error();
  return DispatchFloat(a.element_type(), kOp, [&](auto zero) {
    using T = decltype(zero);
    const int64_t m = qs->a.rows, n = qs->a.cols, k = qs->k, mn = m * n;
    const T* pa = DataAs<const T>(a);
    const T* ptaus = DataAs<const T>(taus);
    T* pq = DataAs<T>(q);
    ParallelFor(pool, qs->a.batch, QrFlops(m, k, n), [&](int64_t begin, int64_t end) {
      for (int64_t b = begin; b < end; ++b) {
        T* qb = pq + b * mn;
        if (pa != pq) std::copy_n(pa + b * mn, mn, qb);
        auto s = ThreadQrScratch<T>(m, 0, n);
        batchla::cpu::OrgqrInPlace(qb, ptaus + b * k, m, n, k, s.h);
      }
    });
    return ffi::Error::Success();
  });
}

ffi::Error OrmqrImpl(ffi::ThreadPool pool, AnyBuffer a, AnyBuffer taus, AnyBuffer c, Result<AnyBuffer> x,
                     bool trans) {
  constexpr const char* kOp = "batchla_ormqr";
  auto qs = CheckOrmqr(kOp, a, taus, c, *x);
  if (!qs) return qs.error();
  return DispatchFloat(a.element_type(), kOp, [&](auto zero) {
    using T = decltype(zero);
    const int64_t m = qs->a.rows, n = qs->a.cols, k = qs->k, p = qs->cols;
    const T* pa = DataAs<const T>(a);
    const T* ptaus = DataAs<const T>(taus);
    const T* pc = DataAs<const T>(c);
    T* px = DataAs<T>(x);
    ParallelFor(pool, qs->a.batch, 4.0 * m * k * p, [&](int64_t begin, int64_t end) {
      for (int64_t b = begin; b < end; ++b) {
        T* xb = px + b * m * p;
        if (pc != px) std::copy_n(pc + b * m * p, m * p, xb);  // skipped when XLA aliased c, x
        auto s = ThreadQrScratch<T>(m, 0, p);
        batchla::cpu::OrmqrInPlace(pa + b * m * n, ptaus + b * k, xb, m, n, k, p, trans, s.h);
      }
    });
    return ffi::Error::Success();
  });
}

ffi::Error QrImpl(ffi::ThreadPool pool, AnyBuffer a, Result<AnyBuffer> q, Result<AnyBuffer> r) {
  constexpr const char* kOp = "batchla_qr";
  auto as = CheckQr(kOp, a, &*q, *r);
  if (!as) return as.error();
  return DispatchFloat(a.element_type(), kOp, [&](auto zero) {
    using T = decltype(zero);
    const int64_t m = as->rows, n = as->cols;
    const T* pa = DataAs<const T>(a);
    T* pq = DataAs<T>(q);
    T* pr = DataAs<T>(r);
    ParallelFor(pool, as->batch, 2 * QrFlops(m, n, n), [&](int64_t begin, int64_t end) {
      for (int64_t b = begin; b < end; ++b) {
        auto s = ThreadQrScratch<T>(m, n, n);
        batchla::cpu::QrOf(pa + b * m * n, pq + b * m * n, pr + b * n * n, m, n, s);
      }
    });
    return ffi::Error::Success();
  });
}

ffi::Error QrRImpl(ffi::ThreadPool pool, AnyBuffer a, Result<AnyBuffer> r) {
  constexpr const char* kOp = "batchla_qr_r";
  auto as = CheckQr(kOp, a, nullptr, *r);
  if (!as) return as.error();
  return DispatchFloat(a.element_type(), kOp, [&](auto zero) {
    using T = decltype(zero);
    const int64_t m = as->rows, n = as->cols;
    const T* pa = DataAs<const T>(a);
    T* pr = DataAs<T>(r);
    ParallelFor(pool, as->batch, QrFlops(m, n, n), [&](int64_t begin, int64_t end) {
      for (int64_t b = begin; b < end; ++b) {
        auto s = ThreadQrScratch<T>(m, n, n, m * n);
        batchla::cpu::QrROf(pa + b * m * n, pr + b * n * n, m, n, s);
      }
    });
    return ffi::Error::Success();
  });
}

ffi::Error LstsqImpl(ffi::ThreadPool pool, AnyBuffer a, AnyBuffer b, Result<AnyBuffer> x,
                     Result<AnyBuffer> rdiag, Result<AnyBuffer> resid) {
  constexpr const char* kOp = "batchla_lstsq";
  auto qs = CheckLstsq(kOp, a, b, *x, *rdiag, *resid);
  if (!qs) return qs.error();
  return DispatchFloat(a.element_type(), kOp, [&](auto zero) {
    using T = decltype(zero);
    const int64_t m = qs->a.rows, n = qs->a.cols, k = qs->cols;
    const T* pa = DataAs<const T>(a);
    const T* pb = DataAs<const T>(b);
    T* px = DataAs<T>(x);
    T* prdiag = DataAs<T>(rdiag);
    T* presid = DataAs<T>(resid);
    ParallelFor(pool, qs->a.batch, QrFlops(m, n, n + k), [&](int64_t begin, int64_t end) {
      for (int64_t i = begin; i < end; ++i) {
        auto s = ThreadQrScratch<T>(m, n, n + k, m * (n + k), n * n);
        batchla::cpu::LstsqOf(pa + i * m * n, pb + i * m * k, px + i * n * k, prdiag + i * n,
                              presid + i * k, m, n, k, s);
      }
    });
    return ffi::Error::Success();
  });
}

}  // namespace
}  // namespace batchla_ffi::cpu

namespace ffi = xla::ffi;

XLA_FFI_DEFINE_HANDLER_SYMBOL(BatchlaPotrfCpu, batchla_ffi::cpu::PotrfImpl,
                              ffi::Ffi::Bind()
                                  .Ctx<ffi::ThreadPool>()
                                  .Arg<ffi::AnyBuffer>()   // a
                                  .Ret<ffi::AnyBuffer>()   // l
                                  .Ret<ffi::AnyBuffer>()   // info
                                  .Attr<bool>("symmetrize"));

XLA_FFI_DEFINE_HANDLER_SYMBOL(BatchlaTrsmCpu, batchla_ffi::cpu::TrsmImpl,
                              ffi::Ffi::Bind()
                                  .Ctx<ffi::ThreadPool>()
                                  .Arg<ffi::AnyBuffer>()  // a
                                  .Arg<ffi::AnyBuffer>()  // b
                                  .Ret<ffi::AnyBuffer>()  // x
                                  .Attr<bool>("lower")
                                  .Attr<bool>("trans")
                                  .Attr<bool>("unit_diag"));

XLA_FFI_DEFINE_HANDLER_SYMBOL(BatchlaPotrsCpu, batchla_ffi::cpu::PotrsImpl,
                              ffi::Ffi::Bind()
                                  .Ctx<ffi::ThreadPool>()
                                  .Arg<ffi::AnyBuffer>()  // c
                                  .Arg<ffi::AnyBuffer>()  // b
                                  .Ret<ffi::AnyBuffer>()  // x
                                  .Attr<bool>("lower"));

XLA_FFI_DEFINE_HANDLER_SYMBOL(BatchlaPosvCpu, batchla_ffi::cpu::PosvImpl,
                              ffi::Ffi::Bind()
                                  .Ctx<ffi::ThreadPool>()
                                  .Arg<ffi::AnyBuffer>()  // a
                                  .Arg<ffi::AnyBuffer>()  // b
                                  .Ret<ffi::AnyBuffer>()  // x
                                  .Ret<ffi::AnyBuffer>()  // info
                                  .Attr<bool>("lower"));

XLA_FFI_DEFINE_HANDLER_SYMBOL(BatchlaGetrfCpu, batchla_ffi::cpu::GetrfImpl,
                              ffi::Ffi::Bind()
                                  .Ctx<ffi::ThreadPool>()
                                  .Arg<ffi::AnyBuffer>()  // a
                                  .Ret<ffi::AnyBuffer>()  // lu
                                  .Ret<ffi::AnyBuffer>()  // pivots
                                  .Ret<ffi::AnyBuffer>()  // perm
                                  .Ret<ffi::AnyBuffer>());  // info

XLA_FFI_DEFINE_HANDLER_SYMBOL(BatchlaGetrsCpu, batchla_ffi::cpu::GetrsImpl,
                              ffi::Ffi::Bind()
                                  .Ctx<ffi::ThreadPool>()
                                  .Arg<ffi::AnyBuffer>()  // lu
                                  .Arg<ffi::AnyBuffer>()  // perm
                                  .Arg<ffi::AnyBuffer>()  // b
                                  .Ret<ffi::AnyBuffer>()  // x
                                  .Attr<bool>("trans"));

XLA_FFI_DEFINE_HANDLER_SYMBOL(BatchlaGesvCpu, batchla_ffi::cpu::GesvImpl,
                              ffi::Ffi::Bind()
                                  .Ctx<ffi::ThreadPool>()
                                  .Arg<ffi::AnyBuffer>()  // a
                                  .Arg<ffi::AnyBuffer>()  // b
                                  .Ret<ffi::AnyBuffer>()  // x
                                  .Ret<ffi::AnyBuffer>());  // info

XLA_FFI_DEFINE_HANDLER_SYMBOL(BatchlaInverseCpu, batchla_ffi::cpu::InverseImpl,
                              ffi::Ffi::Bind()
                                  .Ctx<ffi::ThreadPool>()
                                  .Arg<ffi::AnyBuffer>()  // a
                                  .Ret<ffi::AnyBuffer>()  // inv
                                  .Ret<ffi::AnyBuffer>());  // info

XLA_FFI_DEFINE_HANDLER_SYMBOL(BatchlaSlogdetCpu, batchla_ffi::cpu::SlogdetImpl,
                              ffi::Ffi::Bind()
                                  .Ctx<ffi::ThreadPool>()
                                  .Arg<ffi::AnyBuffer>()  // a
                                  .Ret<ffi::AnyBuffer>()  // sign
                                  .Ret<ffi::AnyBuffer>());  // logabsdet

XLA_FFI_DEFINE_HANDLER_SYMBOL(BatchlaDetCpu, batchla_ffi::cpu::DetClosedImpl,
                              ffi::Ffi::Bind()
                                  .Ctx<ffi::ThreadPool>()
                                  .Arg<ffi::AnyBuffer>()   // a
                                  .Ret<ffi::AnyBuffer>());  // det

XLA_FFI_DEFINE_HANDLER_SYMBOL(BatchlaGeqrfCpu, batchla_ffi::cpu::GeqrfImpl,
                              ffi::Ffi::Bind()
                                  .Ctx<ffi::ThreadPool>()
                                  .Arg<ffi::AnyBuffer>()  // a
                                  .Ret<ffi::AnyBuffer>()  // qr
                                  .Ret<ffi::AnyBuffer>());  // taus

XLA_FFI_DEFINE_HANDLER_SYMBOL(BatchlaOrgqrCpu, batchla_ffi::cpu::OrgqrImpl,
                              ffi::Ffi::Bind()
                                  .Ctx<ffi::ThreadPool>()
                                  .Arg<ffi::AnyBuffer>()  // a
                                  .Arg<ffi::AnyBuffer>()  // taus
                                  .Ret<ffi::AnyBuffer>());  // q

XLA_FFI_DEFINE_HANDLER_SYMBOL(BatchlaOrmqrCpu, batchla_ffi::cpu::OrmqrImpl,
                              ffi::Ffi::Bind()
                                  .Ctx<ffi::ThreadPool>()
                                  .Arg<ffi::AnyBuffer>()  // a
                                  .Arg<ffi::AnyBuffer>()  // taus
                                  .Arg<ffi::AnyBuffer>()  // c
                                  .Ret<ffi::AnyBuffer>()  // x
                                  .Attr<bool>("trans"));

XLA_FFI_DEFINE_HANDLER_SYMBOL(BatchlaQrCpu, batchla_ffi::cpu::QrImpl,
                              ffi::Ffi::Bind()
                                  .Ctx<ffi::ThreadPool>()
                                  .Arg<ffi::AnyBuffer>()  // a
                                  .Ret<ffi::AnyBuffer>()  // q
                                  .Ret<ffi::AnyBuffer>());  // r

XLA_FFI_DEFINE_HANDLER_SYMBOL(BatchlaQrRCpu, batchla_ffi::cpu::QrRImpl,
                              ffi::Ffi::Bind()
                                  .Ctx<ffi::ThreadPool>()
                                  .Arg<ffi::AnyBuffer>()  // a
                                  .Ret<ffi::AnyBuffer>());  // r

XLA_FFI_DEFINE_HANDLER_SYMBOL(BatchlaLstsqCpu, batchla_ffi::cpu::LstsqImpl,
                              ffi::Ffi::Bind()
                                  .Ctx<ffi::ThreadPool>()
                                  .Arg<ffi::AnyBuffer>()  // a
                                  .Arg<ffi::AnyBuffer>()  // b
                                  .Ret<ffi::AnyBuffer>()  // x
                                  .Ret<ffi::AnyBuffer>()  // rdiag
                                  .Ret<ffi::AnyBuffer>());  // resid

XLA_FFI_DEFINE_HANDLER_SYMBOL(BatchlaIlPotrfCpu, batchla_ffi::cpu::IlPotrfImpl,
                              ffi::Ffi::Bind()
                                  .Ctx<ffi::ThreadPool>()
                                  .Arg<ffi::AnyBuffer>()  // a (..., n, n, c)
                                  .Ret<ffi::AnyBuffer>()  // l
                                  .Ret<ffi::AnyBuffer>()  // info (..., c)
                                  .Attr<bool>("symmetrize"));

XLA_FFI_DEFINE_HANDLER_SYMBOL(BatchlaIlPotrsCpu, batchla_ffi::cpu::IlPotrsImpl,
                              ffi::Ffi::Bind()
                                  .Ctx<ffi::ThreadPool>()
                                  .Arg<ffi::AnyBuffer>()  // c (..., n, n, c)
                                  .Arg<ffi::AnyBuffer>()  // b (..., n, k, c)
                                  .Ret<ffi::AnyBuffer>()  // x
                                  .Attr<bool>("lower"));

XLA_FFI_DEFINE_HANDLER_SYMBOL(BatchlaIlPosvCpu, batchla_ffi::cpu::IlPosvImpl,
                              ffi::Ffi::Bind()
                                  .Ctx<ffi::ThreadPool>()
                                  .Arg<ffi::AnyBuffer>()  // a (..., n, n, c)
                                  .Arg<ffi::AnyBuffer>()  // b (..., n, k, c)
                                  .Ret<ffi::AnyBuffer>()  // x
                                  .Ret<ffi::AnyBuffer>()  // info (..., c)
                                  .Attr<bool>("lower"));

XLA_FFI_DEFINE_HANDLER_SYMBOL(BatchlaFromInterleavedCpu, batchla_ffi::cpu::FromInterleavedImpl,
                              ffi::Ffi::Bind()
                                  .Ctx<ffi::ThreadPool>()
                                  .Arg<ffi::AnyBuffer>()  // x (..., chunks, rows, cols, c)
                                  .Ret<ffi::AnyBuffer>());  // out (..., count, rows, cols)

XLA_FFI_DEFINE_HANDLER_SYMBOL(BatchlaIlTrsmCpu, batchla_ffi::cpu::IlTrsmImpl,
                              ffi::Ffi::Bind()
                                  .Ctx<ffi::ThreadPool>()
                                  .Arg<ffi::AnyBuffer>()  // a (..., n, n, c)
                                  .Arg<ffi::AnyBuffer>()  // b (..., n, k, c)
                                  .Ret<ffi::AnyBuffer>()  // x
                                  .Attr<bool>("lower")
                                  .Attr<bool>("trans")
                                  .Attr<bool>("unit_diag"));
