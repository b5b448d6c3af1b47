// CPU XLA FFI handlers for the targets of bindings/TARGETS.md. Each handler validates its
// operands (naming the offending one), dispatches once on the dtype and runs the per-matrix
// kernel of this folder over the collapsed batch. Buffers are row-major; offsets are int64_t.
#include "bindings/cpu/handlers.h"

#include <algorithm>
#include <cstdint>
#include <string>
#include <vector>

#include "bindings/cpu/posv.h"
#include "bindings/cpu/potrf.h"
#include "bindings/cpu/potrs.h"
#include "bindings/cpu/trsm.h"
#include "bindings/ffi_common.h"
#include "bindings/validate.h"

namespace batchla_ffi::cpu {
namespace {

using ffi::AnyBuffer;
using ffi::Result;

// The loop every solve handler shares: x_m = b_m, then solve(m, a_m, x_m) in place.
template <typename T, typename Solve>
void SolveBatch(AnyBuffer a, AnyBuffer b, Result<AnyBuffer> x, const MatrixShape& bs, Solve&& solve) {
  const int64_t nn = bs.rows * bs.rows, nk = bs.rows * bs.cols;
  const T* pa = DataAs<const T>(a);
  const T* pb = DataAs<const T>(b);
  T* px = DataAs<T>(x);
  for (int64_t m = 0; m < bs.batch; ++m) {
    if (pb != px) std::copy_n(pb + m * nk, nk, px + m * nk);  // skipped when XLA aliased b and x
    solve(m, pa + m * nn, px + m * nk);
  }
}

// The lower triangle of (A + A^T) / 2 into l, so potrf can then run in place.
template <typename T>
void SymmetrizeLower(const T* a, T* l, int64_t n) {
  for (int64_t i = 0; i < n; ++i) {
    for (int64_t j = 0; j <= i; ++j) l[i * n + j] = (a[i * n + j] + a[j * n + i]) / T(2);
  }
}

ffi::Error PotrfImpl(AnyBuffer a, Result<AnyBuffer> l, Result<AnyBuffer> info, bool symmetrize) {
  constexpr const char* kOp = "batchla_potrf";
  auto as = CheckFactor(kOp, a, *l, "l", *info);
  if (!as) return as.error();
  return DispatchFloat(a.element_type(), kOp, [&](auto zero) {
    using T = decltype(zero);
    const int64_t n = as->rows, nn = n * n;
    const T* pa = DataAs<const T>(a);
    T* pl = DataAs<T>(l);
    int32_t* pinfo = DataAs<int32_t>(info);
    for (int64_t m = 0; m < as->batch; ++m) {
      const T* am = pa + m * nn;
      if (symmetrize) {
        SymmetrizeLower(am, pl + m * nn, n);
        am = pl + m * nn;
      }
      pinfo[m] = batchla::cpu::PotrfLower(am, pl + m * nn, n);
    }
    return ffi::Error::Success();
  });
}

ffi::Error TrsmImpl(AnyBuffer a, AnyBuffer b, Result<AnyBuffer> x, bool lower, bool trans,
                    bool unit_diag) {
  constexpr const char* kOp = "batchla_trsm";
  auto bs = CheckSolve(kOp, a, "a", b, *x);
  if (!bs) return bs.error();
  return DispatchFloat(a.element_type(), kOp, [&](auto zero) {
    using T = decltype(zero);
    SolveBatch<T>(a, b, x, *bs, [&](int64_t, const T* am, T* xm) {
      batchla::cpu::TrsmInPlace(am, xm, bs->rows, bs->cols, lower, trans, unit_diag);
    });
    return ffi::Error::Success();
  });
}

ffi::Error PotrsImpl(AnyBuffer c, AnyBuffer b, Result<AnyBuffer> x, bool lower) {
  constexpr const char* kOp = "batchla_potrs";
  auto bs = CheckSolve(kOp, c, "c", b, *x);
  if (!bs) return bs.error();
  return DispatchFloat(c.element_type(), kOp, [&](auto zero) {
    using T = decltype(zero);
    SolveBatch<T>(c, b, x, *bs, [&](int64_t, const T* cm, T* xm) {
      batchla::cpu::PotrsInPlace(cm, xm, bs->rows, bs->cols, lower);
    });
    return ffi::Error::Success();
  });
}

ffi::Error PosvImpl(AnyBuffer a, AnyBuffer b, Result<AnyBuffer> x, Result<AnyBuffer> info,
                    bool lower) {
  constexpr const char* kOp = "batchla_posv";
  auto bs = CheckSolve(kOp, a, "a", b, *x, &*info);
  if (!bs) return bs.error();
  return DispatchFloat(a.element_type(), kOp, [&](auto zero) {
    using T = decltype(zero);
    int32_t* pinfo = DataAs<int32_t>(info);
    // One n x n factor scratch per call (host memory, as jaxlib's LAPACK handlers do).
    std::vector<T> work(bs->batch > 0 ? static_cast<size_t>(bs->rows * bs->rows) : 0);
    SolveBatch<T>(a, b, x, *bs, [&](int64_t m, const T* am, T* xm) {
      pinfo[m] = batchla::cpu::PosvInPlace(am, xm, work.data(), bs->rows, bs->cols, lower);
    });
    return ffi::Error::Success();
  });
}

}  // namespace
}  // namespace batchla_ffi::cpu

namespace ffi = xla::ffi;

XLA_FFI_DEFINE_HANDLER_SYMBOL(BatchlaPotrfCpu, batchla_ffi::cpu::PotrfImpl,
                              ffi::Ffi::Bind()
                                  .Arg<ffi::AnyBuffer>()   // a
                                  .Ret<ffi::AnyBuffer>()   // l
                                  .Ret<ffi::AnyBuffer>()   // info
                                  .Attr<bool>("symmetrize"));

XLA_FFI_DEFINE_HANDLER_SYMBOL(BatchlaTrsmCpu, batchla_ffi::cpu::TrsmImpl,
                              ffi::Ffi::Bind()
                                  .Arg<ffi::AnyBuffer>()  // a
                                  .Arg<ffi::AnyBuffer>()  // b
                                  .Ret<ffi::AnyBuffer>()  // x
                                  .Attr<bool>("lower")
                                  .Attr<bool>("trans")
                                  .Attr<bool>("unit_diag"));

XLA_FFI_DEFINE_HANDLER_SYMBOL(BatchlaPotrsCpu, batchla_ffi::cpu::PotrsImpl,
                              ffi::Ffi::Bind()
                                  .Arg<ffi::AnyBuffer>()  // c
                                  .Arg<ffi::AnyBuffer>()  // b
                                  .Ret<ffi::AnyBuffer>()  // x
                                  .Attr<bool>("lower"));

XLA_FFI_DEFINE_HANDLER_SYMBOL(BatchlaPosvCpu, batchla_ffi::cpu::PosvImpl,
                              ffi::Ffi::Bind()
                                  .Arg<ffi::AnyBuffer>()  // a
                                  .Arg<ffi::AnyBuffer>()  // b
                                  .Ret<ffi::AnyBuffer>()  // x
                                  .Ret<ffi::AnyBuffer>()  // info
                                  .Attr<bool>("lower"));
