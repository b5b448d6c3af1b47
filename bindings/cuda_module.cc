// XLA FFI handlers of the CUDA targets (bindings/TARGETS.md) and the nanobind module `_cuda` that
// hands their capsules to Python. Every handler follows one pattern: validate the operands with
// bindings/validate.h (as the CPU handlers do; errors name the operand), then Run(): dispatch once
// on the dtype through DispatchFloat, launch the kernel of cuda/launch.h on the call frame's
// stream, turn a CUDA error into ffi::Error::Internal.
// Buffers are row-major (JAX's default layout): (..., n, n) matrices, (..., n, k) right-hand sides.
#include <cuda_runtime.h>

#include <atomic>
#include <cstdint>
#include <cstdlib>
#include <string>
#include <utility>

#include "bindings/ffi_common.h"
#include "bindings/validate.h"
#include "bindings/validate_interleaved.h"
#include "cuda/launch.h"
#include "nanobind/nanobind.h"
#include "nanobind/stl/string.h"
#include "xla/ffi/api/ffi.h"

namespace batchla_ffi {
namespace {

using ffi::AnyBuffer;
using ffi::Result;

// Launch statistics for tests (tests/command_buffer_check.py): with JAX_BATCHLA_COUNT_LAUNCHES=1
// in the environment when the module loads, every handler call counts whether its stream was being
// captured into a CUDA graph (an XLA command buffer) or ran directly. Off: one predictable branch.
const bool kCountLaunches = [] {
  const char* v = std::getenv("JAX_BATCHLA_COUNT_LAUNCHES");
  return v != nullptr && v[0] == '1';
}();
std::atomic<int64_t> launches_direct{0}, launches_captured{0};

void CountLaunch(cudaStream_t stream) {
  cudaStreamCaptureStatus status = cudaStreamCaptureStatusNone;
  if (cudaStreamIsCapturing(stream, &status) != cudaSuccess) return;
  (status == cudaStreamCaptureStatusActive ? launches_captured : launches_direct)++;
}

// The one launch step shared by all handlers: dispatch once on the dtype, launch the kernel of
// cuda/launch.h (launch(T{}) returns its cudaError_t), report CUDA errors as Internal.
template <typename Launch>
ffi::Error Run(const char* op, cudaStream_t stream, ffi::DataType dtype, Launch&& launch) {
  if (kCountLaunches) CountLaunch(stream);
  return DispatchFloat(dtype, op, [&](auto zero) {
    cudaError_t e = launch(zero);
    if (e == cudaSuccess) e = cudaGetLastError();
    if (e != cudaSuccess)
      return ffi::Error::Internal(std::string("jax_batchla: ") + op + ": " + cudaGetErrorString(e));
    return ffi::Error::Success();
  });
}

ffi::Error PotrfImpl(cudaStream_t stream, AnyBuffer a, Result<AnyBuffer> l, Result<AnyBuffer> info,
                     bool symmetrize) {
  constexpr const char* kOp = "batchla_potrf";
  auto as = CheckFactor(kOp, a, *l, "l", *info);
  if (!as) return as.error();
  return Run(kOp, stream, a.element_type(), [&](auto zero) {
    using T = decltype(zero);
    return batchla::LaunchPotrf<T>(stream, DataAs<T>(a), DataAs<T>(l), DataAs<int32_t>(info),
                                   as->batch, static_cast<int>(as->rows), symmetrize);
  });
}

ffi::Error TrsmImpl(cudaStream_t stream, AnyBuffer a, AnyBuffer b, Result<AnyBuffer> x, bool lower,
                    bool trans, bool unit_diag) {
  constexpr const char* kOp = "batchla_trsm";
  auto bs = CheckSolve(kOp, a, "a", b, *x);
  if (!bs) return bs.error();
  return Run(kOp, stream, a.element_type(), [&](auto zero) {
    using T = decltype(zero);
    return batchla::LaunchTrsm<T>(stream, DataAs<T>(a), DataAs<T>(b), DataAs<T>(x), bs->batch,
                                  static_cast<int>(bs->rows), static_cast<int>(bs->cols), lower,
                                  trans, unit_diag);
  });
}

ffi::Error PotrsImpl(cudaStream_t stream, AnyBuffer c, AnyBuffer b, Result<AnyBuffer> x, bool lower) {
  constexpr const char* kOp = "batchla_potrs";
  auto bs = CheckSolve(kOp, c, "c", b, *x);
  if (!bs) return bs.error();
  return Run(kOp, stream, c.element_type(), [&](auto zero) {
    using T = decltype(zero);
    return batchla::LaunchPotrs<T>(stream, DataAs<T>(c), DataAs<T>(b), DataAs<T>(x), bs->batch,
                                   static_cast<int>(bs->rows), static_cast<int>(bs->cols), lower);
  });
}

ffi::Error PosvImpl(cudaStream_t stream, AnyBuffer a, AnyBuffer b, Result<AnyBuffer> x,
                    Result<AnyBuffer> info, bool lower) {
  constexpr const char* kOp = "batchla_posv";
  auto bs = CheckSolve(kOp, a, "a", b, *x, &*info);
  if (!bs) return bs.error();
  return Run(kOp, stream, a.element_type(), [&](auto zero) {
    using T = decltype(zero);
    return batchla::LaunchPosv<T>(stream, DataAs<T>(a), DataAs<T>(b), DataAs<T>(x),
                                  DataAs<int32_t>(info), bs->batch, static_cast<int>(bs->rows),
                                  static_cast<int>(bs->cols), lower);
  });
}

ffi::Error GetrfImpl(cudaStream_t stream, AnyBuffer a, Result<AnyBuffer> lu, Result<AnyBuffer> pivots,
                     Result<AnyBuffer> perm, Result<AnyBuffer> info) {
  constexpr const char* kOp = "batchla_getrf";
  auto as = CheckGetrf(kOp, a, *lu, *pivots, *perm, *info);
  if (!as) return as.error();
  return Run(kOp, stream, a.element_type(), [&](auto zero) {
    using T = decltype(zero);
    return batchla::LaunchGetrf<T>(stream, DataAs<T>(a), DataAs<T>(lu), DataAs<int32_t>(pivots),
                                   GetrfPerm(perm), DataAs<int32_t>(info), as->batch,
                                   static_cast<int>(as->rows));
  });
}

ffi::Error GetrsImpl(cudaStream_t stream, AnyBuffer lu, AnyBuffer perm, AnyBuffer b,
                     Result<AnyBuffer> x, bool trans) {
  constexpr const char* kOp = "batchla_getrs";
  auto bs = CheckGetrs(kOp, lu, perm, b, *x);
  if (!bs) return bs.error();
  return Run(kOp, stream, lu.element_type(), [&](auto zero) {
    using T = decltype(zero);
    return batchla::LaunchGetrs<T>(stream, DataAs<T>(lu), DataAs<int32_t>(perm), DataAs<T>(b),
                                   DataAs<T>(x), bs->batch, static_cast<int>(bs->rows),
                                   static_cast<int>(bs->cols), trans);
  });
}

ffi::Error GesvImpl(cudaStream_t stream, AnyBuffer a, AnyBuffer b, Result<AnyBuffer> x,
                    Result<AnyBuffer> info) {
  constexpr const char* kOp = "batchla_gesv";
  auto bs = CheckSolve(kOp, a, "a", b, *x, &*info);
  if (!bs) return bs.error();
  return Run(kOp, stream, a.element_type(), [&](auto zero) {
    using T = decltype(zero);
    return batchla::LaunchGesv<T>(stream, DataAs<T>(a), DataAs<T>(b), DataAs<T>(x),
                                  DataAs<int32_t>(info), bs->batch, static_cast<int>(bs->rows),
                                  static_cast<int>(bs->cols));
  });
}

// scratch: (..., 2n) int32 the lowering adds as a third result and drops (LaunchInverse's scratch:
// getrf's pivots and perm where the inverse is composed on the device).
ffi::Error InverseImpl(cudaStream_t stream, AnyBuffer a, Result<AnyBuffer> inv,
                       Result<AnyBuffer> info, Result<AnyBuffer> scratch) {
  constexpr const char* kOp = "batchla_inverse";
  auto as = CheckFactor(kOp, a, *inv, "inv", *info);
  if (!as) return as.error();
  if (auto e = VectorOperand(kOp, *scratch, "scratch", a, 2 * as->rows); e.failure()) return e;
  return Run(kOp, stream, a.element_type(), [&](auto zero) {
    using T = decltype(zero);
    return batchla::LaunchInverse<T>(stream, DataAs<T>(a), DataAs<T>(inv), DataAs<int32_t>(info),
                                     as->batch, static_cast<int>(as->rows), DataAs<int32_t>(scratch));
  });
}

// scratch: (..., SlogdetScratchElems(n)) of a's dtype the lowering adds as a third result and drops
// (the left-looking getrf class's factors; length 0 where the kernel keeps them on chip).
ffi::Error SlogdetImpl(cudaStream_t stream, AnyBuffer a, Result<AnyBuffer> sign,
                       Result<AnyBuffer> logabsdet, Result<AnyBuffer> scratch) {
  constexpr const char* kOp = "batchla_slogdet";
  auto as = CheckSlogdet(kOp, a, *sign, *logabsdet);
  if (!as) return as.error();
  const int n = static_cast<int>(as->rows);
  auto scratch_ok = DispatchFloat(a.element_type(), kOp, [&](auto zero) {
    using T = decltype(zero);
    return VectorOperand(kOp, *scratch, "scratch", a, batchla::SlogdetScratchElems<T>(n), /*float_like=*/true);
  });
  if (scratch_ok.failure()) return scratch_ok;
  return Run(kOp, stream, a.element_type(), [&](auto zero) {
    using T = decltype(zero);
    return batchla::LaunchSlogdet<T>(stream, DataAs<T>(a), DataAs<T>(sign), DataAs<T>(logabsdet),
                                     as->batch, n, DataAs<T>(scratch));
  });
}

ffi::Error DetClosedImpl(cudaStream_t stream, AnyBuffer a, Result<AnyBuffer> det) {
  constexpr const char* kOp = "batchla_det";
  auto as = CheckDetClosed(kOp, a, *det);
  if (!as) return as.error();
  return Run(kOp, stream, a.element_type(), [&](auto zero) {
    using T = decltype(zero);
    return batchla::LaunchDetClosed<T>(stream, DataAs<T>(a), DataAs<T>(det), as->batch, static_cast<int>(as->rows));
  });
}

// ---- QR family: sizes are checked up front so the error names them; batch 0 launches nothing --

// The QR launch step: `fused` selects QrFusedFits<T>(m, ncols) (qr, qr_r, lstsq), else
// QrSupported<T>(m, ncols) (geqrf, orgqr, ormqr); an unsupported size is InvalidArgument (the
// Python lowering asks qr_supported / qr_fused_fits first and composes or falls back instead).
template <typename Launch>
ffi::Error RunQr(const char* op, cudaStream_t stream, ffi::DataType dtype, int64_t batch, bool fused,
                 int64_t m, int64_t ncols, Launch&& launch) {
  auto size_ok = DispatchFloat(dtype, op, [&](auto zero) {
    using T = decltype(zero);
    const bool ok = fused ? batchla::QrFusedFits<T>(static_cast<int>(m), static_cast<int>(ncols))
                          : batchla::QrSupported<T>(static_cast<int>(m), static_cast<int>(ncols));
    if (ok) return ffi::Error::Success();
    return ShapeError(std::string(op) + ": the CUDA kernels do not handle m = " +
                      std::to_string(m) + ", " + (fused ? "ncols = " : "n = ") +
                      std::to_string(ncols) + " for this dtype");
  });
  if (size_ok.failure()) return size_ok;
  if (batch == 0) return ffi::Error::Success();
  return Run(op, stream, dtype, std::forward<Launch>(launch));
}

ffi::Error GeqrfImpl(cudaStream_t stream, AnyBuffer a, Result<AnyBuffer> qr, Result<AnyBuffer> taus) {
  constexpr const char* kOp = "batchla_geqrf";
  auto as = CheckGeqrf(kOp, a, *qr, *taus);
  if (!as) return as.error();
  return RunQr(kOp, stream, a.element_type(), as->batch, false, as->rows, as->cols, [&](auto zero) {
    using T = decltype(zero);
    return batchla::LaunchGeqrf<T>(stream, DataAs<T>(a), DataAs<T>(qr), DataAs<T>(taus), as->batch,
                                   static_cast<int>(as->rows), static_cast<int>(as->cols));
  });
}

ffi::Error OrgqrImpl(cudaStream_t stream, AnyBuffer a, AnyBuffer taus, Result<AnyBuffer> q) {
  constexpr const char* kOp = "batchla_orgqr";
  auto qs = CheckOrgqr(kOp, a, taus, *q);
  if (!qs) return qs.error();
  const MatrixShape& as = qs->a;
  return RunQr(kOp, stream, a.element_type(), as.batch, false, as.rows, as.cols, [&](auto zero) {
    using T = decltype(zero);
    return batchla::LaunchOrgqr<T>(stream, DataAs<T>(a), DataAs<T>(taus), DataAs<T>(q), as.batch,
                                   static_cast<int>(as.rows), static_cast<int>(as.cols),
                                   static_cast<int>(qs->k));
  });
}

ffi::Error OrmqrImpl(cudaStream_t stream, AnyBuffer a, AnyBuffer taus, AnyBuffer c,
                     Result<AnyBuffer> x, bool trans) {
  constexpr const char* kOp = "batchla_ormqr";
  auto qs = CheckOrmqr(kOp, a, taus, c, *x);
  if (!qs) return qs.error();
  const MatrixShape& as = qs->a;
  return RunQr(kOp, stream, a.element_type(), as.batch, false, as.rows, as.cols, [&](auto zero) {
    using T = decltype(zero);
    return batchla::LaunchOrmqr<T>(stream, DataAs<T>(a), DataAs<T>(taus), DataAs<T>(c),
                                   DataAs<T>(x), as.batch, static_cast<int>(as.rows),
                                   static_cast<int>(as.cols), static_cast<int>(qs->k),
                                   static_cast<int>(qs->cols), trans);
  });
}

// qr and qr_r share LaunchQr; qr_r passes q = nullptr (R only).
ffi::Error QrCommon(const char* op, cudaStream_t stream, AnyBuffer a, AnyBuffer* q, AnyBuffer r) {
  auto as = CheckQr(op, a, q, r);
  if (!as) return as.error();
  return RunQr(op, stream, a.element_type(), as->batch, true, as->rows, as->cols, [&](auto zero) {
    using T = decltype(zero);
    return batchla::LaunchQr<T>(stream, DataAs<T>(a), q ? DataAs<T>(*q) : nullptr, DataAs<T>(r),
                                as->batch, static_cast<int>(as->rows), static_cast<int>(as->cols));
  });
}

ffi::Error QrImpl(cudaStream_t stream, AnyBuffer a, Result<AnyBuffer> q, Result<AnyBuffer> r) {
  return QrCommon("batchla_qr", stream, a, &*q, *r);
}

ffi::Error QrRImpl(cudaStream_t stream, AnyBuffer a, Result<AnyBuffer> r) {
  return QrCommon("batchla_qr_r", stream, a, nullptr, *r);
}

ffi::Error LstsqImpl(cudaStream_t stream, AnyBuffer a, AnyBuffer b, Result<AnyBuffer> x,
                     Result<AnyBuffer> rdiag, Result<AnyBuffer> resid) {
  constexpr const char* kOp = "batchla_lstsq";
  auto qs = CheckLstsq(kOp, a, b, *x, *rdiag, *resid);
  if (!qs) return qs.error();
  const MatrixShape& as = qs->a;
  return RunQr(kOp, stream, a.element_type(), as.batch, true, as.rows, as.cols + qs->cols, [&](auto zero) {
    using T = decltype(zero);
    return batchla::LaunchLstsq<T>(stream, DataAs<T>(a), DataAs<T>(b), DataAs<T>(x),
                                   DataAs<T>(rdiag), DataAs<T>(resid), as.batch,
                                   static_cast<int>(as.rows), static_cast<int>(as.cols),
                                   static_cast<int>(qs->cols));
  });
}

// ---- interleaved layout: (..., rows, cols, c) buffers (bindings/TARGETS.md) ---------------------
ffi::Error IlPotrfImpl(cudaStream_t stream, AnyBuffer a, Result<AnyBuffer> l, Result<AnyBuffer> info,
                       bool symmetrize) {
  constexpr const char* kOp = "batchla_il_potrf";
  auto as = CheckInterleavedFactor(kOp, a, *l, "l", *info);
  if (!as) return as.error();
  return Run(kOp, stream, a.element_type(), [&](auto zero) {
    using T = decltype(zero);
    return batchla::LaunchIlPotrf<T>(stream, DataAs<T>(a), DataAs<T>(l), DataAs<int32_t>(info),
                                     as->chunks, as->c, static_cast<int>(as->rows), symmetrize);
  });
}

ffi::Error IlPotrsImpl(cudaStream_t stream, AnyBuffer l, AnyBuffer b, Result<AnyBuffer> x, bool lower) {
  constexpr const char* kOp = "batchla_il_potrs";
  auto bs = CheckInterleavedSolve(kOp, l, "l", b, *x);
  if (!bs) return bs.error();
  return Run(kOp, stream, l.element_type(), [&](auto zero) {
    using T = decltype(zero);
    return batchla::LaunchIlPotrs<T>(stream, DataAs<T>(l), DataAs<T>(b), DataAs<T>(x), bs->chunks,
                                     bs->c, static_cast<int>(bs->rows), static_cast<int>(bs->cols),
                                     lower);
  });
}

ffi::Error IlPosvImpl(cudaStream_t stream, AnyBuffer a, AnyBuffer b, Result<AnyBuffer> x,
                      Result<AnyBuffer> info, bool lower) {
  constexpr const char* kOp = "batchla_il_posv";
  auto bs = CheckInterleavedSolve(kOp, a, "a", b, *x, &*info);
  if (!bs) return bs.error();
  return Run(kOp, stream, a.element_type(), [&](auto zero) {
    using T = decltype(zero);
    return batchla::LaunchIlPosv<T>(stream, DataAs<T>(a), DataAs<T>(b), DataAs<T>(x),
                                    DataAs<int32_t>(info), bs->chunks, bs->c, static_cast<int>(bs->rows),
                                    static_cast<int>(bs->cols), lower);
  });
}

ffi::Error IlTrsmImpl(cudaStream_t stream, AnyBuffer a, AnyBuffer b, Result<AnyBuffer> x, bool lower,
                      bool trans, bool unit_diag) {
  constexpr const char* kOp = "batchla_il_trsm";
  auto bs = CheckInterleavedSolve(kOp, a, "a", b, *x);
  if (!bs) return bs.error();
  return Run(kOp, stream, a.element_type(), [&](auto zero) {
    using T = decltype(zero);
    return batchla::LaunchIlTrsm<T>(stream, DataAs<T>(a), DataAs<T>(b), DataAs<T>(x), bs->chunks,
                                    bs->c, static_cast<int>(bs->rows), static_cast<int>(bs->cols),
                                    lower, trans, unit_diag);
  });
}

ffi::Error FromInterleavedImpl(cudaStream_t stream, AnyBuffer x, Result<AnyBuffer> out) {
  constexpr const char* kOp = "batchla_from_interleaved";
  auto xs = CheckFromInterleaved(kOp, x, *out);
  if (!xs) return xs.error();
  return Run(kOp, stream, x.element_type(), [&](auto zero) {
    using T = decltype(zero);
    return batchla::LaunchFromInterleaved<T>(stream, DataAs<T>(x), DataAs<T>(out), xs->lead, xs->chunks,
                                             xs->elems, xs->c, xs->count);
  });
}

// The layout experiment of issue 6 (bench/NOTES.md, "interleaved: layout through XLA"): the
// contract of batchla_potrf, but the lowering asks XLA for batch-minor operands and results
// (minor_to_major (0, 2, 1) of (batch, n, n)), i.e. one interleaved chunk of c = batch matrices.
ffi::Error PotrfBatchMinorImpl(cudaStream_t stream, AnyBuffer a, Result<AnyBuffer> l,
                               Result<AnyBuffer> info, bool symmetrize) {
  constexpr const char* kOp = "batchla_potrf_batch_minor";
  auto as = CheckFactor(kOp, a, *l, "l", *info);
  if (!as) return as.error();
  return Run(kOp, stream, a.element_type(), [&](auto zero) {
    using T = decltype(zero);
    return batchla::LaunchIlPotrf<T>(stream, DataAs<T>(a), DataAs<T>(l), DataAs<int32_t>(info),
                                     as->batch > 0 ? 1 : 0, as->batch, static_cast<int>(as->rows),
                                     symmetrize);
  });
}

}  // namespace
}  // namespace batchla_ffi

// ---- handler symbols (bindings/TARGETS.md) ------------------------------------------------------
namespace ffi = xla::ffi;
using Stream = ffi::PlatformStream<cudaStream_t>;

XLA_FFI_DEFINE_HANDLER_SYMBOL(BatchlaPotrfCuda, batchla_ffi::PotrfImpl,
                              ffi::Ffi::Bind()
                                  .Ctx<Stream>()
                                  .Arg<ffi::AnyBuffer>()   // a
                                  .Ret<ffi::AnyBuffer>()  // l
                                  .Ret<ffi::AnyBuffer>()  // info
                                  .Attr<bool>("symmetrize"),
                              {ffi::Traits::kCmdBufferCompatible});

XLA_FFI_DEFINE_HANDLER_SYMBOL(BatchlaTrsmCuda, batchla_ffi::TrsmImpl,
                              ffi::Ffi::Bind()
                                  .Ctx<Stream>()
                                  .Arg<ffi::AnyBuffer>()  // a
                                  .Arg<ffi::AnyBuffer>()  // b
                                  .Ret<ffi::AnyBuffer>()  // x
                                  .Attr<bool>("lower")
                                  .Attr<bool>("trans")
                                  .Attr<bool>("unit_diag"),
                              {ffi::Traits::kCmdBufferCompatible});

XLA_FFI_DEFINE_HANDLER_SYMBOL(BatchlaPotrsCuda, batchla_ffi::PotrsImpl,
                              ffi::Ffi::Bind()
                                  .Ctx<Stream>()
                                  .Arg<ffi::AnyBuffer>()  // c
                                  .Arg<ffi::AnyBuffer>()  // b
                                  .Ret<ffi::AnyBuffer>()  // x
                                  .Attr<bool>("lower"),
                              {ffi::Traits::kCmdBufferCompatible});

XLA_FFI_DEFINE_HANDLER_SYMBOL(BatchlaPosvCuda, batchla_ffi::PosvImpl,
                              ffi::Ffi::Bind()
                                  .Ctx<Stream>()
                                  .Arg<ffi::AnyBuffer>()  // a
                                  .Arg<ffi::AnyBuffer>()  // b
                                  .Ret<ffi::AnyBuffer>()  // x
                                  .Ret<ffi::AnyBuffer>()  // info
                                  .Attr<bool>("lower"),
                              {ffi::Traits::kCmdBufferCompatible});

XLA_FFI_DEFINE_HANDLER_SYMBOL(BatchlaGetrfCuda, batchla_ffi::GetrfImpl,
                              ffi::Ffi::Bind()
                                  .Ctx<Stream>()
                                  .Arg<ffi::AnyBuffer>()  // a
                                  .Ret<ffi::AnyBuffer>()  // lu
                                  .Ret<ffi::AnyBuffer>()  // pivots
                                  .Ret<ffi::AnyBuffer>()  // perm
                                  .Ret<ffi::AnyBuffer>(), // info
                              {ffi::Traits::kCmdBufferCompatible});

XLA_FFI_DEFINE_HANDLER_SYMBOL(BatchlaGetrsCuda, batchla_ffi::GetrsImpl,
                              ffi::Ffi::Bind()
                                  .Ctx<Stream>()
                                  .Arg<ffi::AnyBuffer>()  // lu
                                  .Arg<ffi::AnyBuffer>()  // perm
                                  .Arg<ffi::AnyBuffer>()  // b
                                  .Ret<ffi::AnyBuffer>()  // x
                                  .Attr<bool>("trans"),
                              {ffi::Traits::kCmdBufferCompatible});

XLA_FFI_DEFINE_HANDLER_SYMBOL(BatchlaGesvCuda, batchla_ffi::GesvImpl,
                              ffi::Ffi::Bind()
                                  .Ctx<Stream>()
                                  .Arg<ffi::AnyBuffer>()  // a
                                  .Arg<ffi::AnyBuffer>()  // b
                                  .Ret<ffi::AnyBuffer>()  // x
                                  .Ret<ffi::AnyBuffer>(), // info
                              {ffi::Traits::kCmdBufferCompatible});

XLA_FFI_DEFINE_HANDLER_SYMBOL(BatchlaInverseCuda, batchla_ffi::InverseImpl,
                              ffi::Ffi::Bind()
                                  .Ctx<Stream>()
                                  .Arg<ffi::AnyBuffer>()  // a
                                  .Ret<ffi::AnyBuffer>()  // inv
                                  .Ret<ffi::AnyBuffer>()  // info
                                  .Ret<ffi::AnyBuffer>(), // scratch
                              {ffi::Traits::kCmdBufferCompatible});

XLA_FFI_DEFINE_HANDLER_SYMBOL(BatchlaSlogdetCuda, batchla_ffi::SlogdetImpl,
                              ffi::Ffi::Bind()
                                  .Ctx<Stream>()
                                  .Arg<ffi::AnyBuffer>()  // a
                                  .Ret<ffi::AnyBuffer>()  // sign
                                  .Ret<ffi::AnyBuffer>()  // logabsdet
                                  .Ret<ffi::AnyBuffer>(), // scratch
                              {ffi::Traits::kCmdBufferCompatible});

XLA_FFI_DEFINE_HANDLER_SYMBOL(BatchlaDetCuda, batchla_ffi::DetClosedImpl,
                              ffi::Ffi::Bind()
                                  .Ctx<Stream>()
                                  .Arg<ffi::AnyBuffer>()   // a
                                  .Ret<ffi::AnyBuffer>(),  // det
                              {ffi::Traits::kCmdBufferCompatible});

XLA_FFI_DEFINE_HANDLER_SYMBOL(BatchlaGeqrfCuda, batchla_ffi::GeqrfImpl,
                              ffi::Ffi::Bind()
                                  .Ctx<Stream>()
                                  .Arg<ffi::AnyBuffer>()  // a
                                  .Ret<ffi::AnyBuffer>()  // qr
                                  .Ret<ffi::AnyBuffer>(), // taus
                              {ffi::Traits::kCmdBufferCompatible});

XLA_FFI_DEFINE_HANDLER_SYMBOL(BatchlaOrgqrCuda, batchla_ffi::OrgqrImpl,
                              ffi::Ffi::Bind()
                                  .Ctx<Stream>()
                                  .Arg<ffi::AnyBuffer>()  // a
                                  .Arg<ffi::AnyBuffer>()  // taus
                                  .Ret<ffi::AnyBuffer>(), // q
                              {ffi::Traits::kCmdBufferCompatible});

XLA_FFI_DEFINE_HANDLER_SYMBOL(BatchlaOrmqrCuda, batchla_ffi::OrmqrImpl,
                              ffi::Ffi::Bind()
                                  .Ctx<Stream>()
                                  .Arg<ffi::AnyBuffer>()  // a
                                  .Arg<ffi::AnyBuffer>()  // taus
                                  .Arg<ffi::AnyBuffer>()  // c
                                  .Ret<ffi::AnyBuffer>()  // x
                                  .Attr<bool>("trans"),
                              {ffi::Traits::kCmdBufferCompatible});

XLA_FFI_DEFINE_HANDLER_SYMBOL(BatchlaQrCuda, batchla_ffi::QrImpl,
                              ffi::Ffi::Bind()
                                  .Ctx<Stream>()
                                  .Arg<ffi::AnyBuffer>()  // a
                                  .Ret<ffi::AnyBuffer>()  // q
                                  .Ret<ffi::AnyBuffer>(), // r
                              {ffi::Traits::kCmdBufferCompatible});

XLA_FFI_DEFINE_HANDLER_SYMBOL(BatchlaQrRCuda, batchla_ffi::QrRImpl,
                              ffi::Ffi::Bind()
                                  .Ctx<Stream>()
                                  .Arg<ffi::AnyBuffer>()  // a
                                  .Ret<ffi::AnyBuffer>(), // r
                              {ffi::Traits::kCmdBufferCompatible});

XLA_FFI_DEFINE_HANDLER_SYMBOL(BatchlaLstsqCuda, batchla_ffi::LstsqImpl,
                              ffi::Ffi::Bind()
                                  .Ctx<Stream>()
                                  .Arg<ffi::AnyBuffer>()  // a
                                  .Arg<ffi::AnyBuffer>()  // b
                                  .Ret<ffi::AnyBuffer>()  // x
                                  .Ret<ffi::AnyBuffer>()  // rdiag
                                  .Ret<ffi::AnyBuffer>(), // resid
                              {ffi::Traits::kCmdBufferCompatible});

XLA_FFI_DEFINE_HANDLER_SYMBOL(BatchlaIlPotrfCuda, batchla_ffi::IlPotrfImpl,
                              ffi::Ffi::Bind()
                                  .Ctx<Stream>()
                                  .Arg<ffi::AnyBuffer>()  // a
                                  .Ret<ffi::AnyBuffer>()  // l
                                  .Ret<ffi::AnyBuffer>()  // info
                                  .Attr<bool>("symmetrize"),
                              {ffi::Traits::kCmdBufferCompatible});

XLA_FFI_DEFINE_HANDLER_SYMBOL(BatchlaIlPotrsCuda, batchla_ffi::IlPotrsImpl,
                              ffi::Ffi::Bind()
                                  .Ctx<Stream>()
                                  .Arg<ffi::AnyBuffer>()  // l
                                  .Arg<ffi::AnyBuffer>()  // b
                                  .Ret<ffi::AnyBuffer>()  // x
                                  .Attr<bool>("lower"),
                              {ffi::Traits::kCmdBufferCompatible});

XLA_FFI_DEFINE_HANDLER_SYMBOL(BatchlaIlPosvCuda, batchla_ffi::IlPosvImpl,
                              ffi::Ffi::Bind()
                                  .Ctx<Stream>()
                                  .Arg<ffi::AnyBuffer>()  // a
                                  .Arg<ffi::AnyBuffer>()  // b
                                  .Ret<ffi::AnyBuffer>()  // x
                                  .Ret<ffi::AnyBuffer>()  // info
                                  .Attr<bool>("lower"),
                              {ffi::Traits::kCmdBufferCompatible});

XLA_FFI_DEFINE_HANDLER_SYMBOL(BatchlaFromInterleavedCuda, batchla_ffi::FromInterleavedImpl,
                              ffi::Ffi::Bind()
                                  .Ctx<Stream>()
                                  .Arg<ffi::AnyBuffer>()  // x (..., chunks, rows, cols, c)
                                  .Ret<ffi::AnyBuffer>(),  // out (..., count, rows, cols)
                              {ffi::Traits::kCmdBufferCompatible});

XLA_FFI_DEFINE_HANDLER_SYMBOL(BatchlaIlTrsmCuda, batchla_ffi::IlTrsmImpl,
                              ffi::Ffi::Bind()
                                  .Ctx<Stream>()
                                  .Arg<ffi::AnyBuffer>()  // a
                                  .Arg<ffi::AnyBuffer>()  // b
                                  .Ret<ffi::AnyBuffer>()  // x
                                  .Attr<bool>("lower")
                                  .Attr<bool>("trans")
                                  .Attr<bool>("unit_diag"),
                              {ffi::Traits::kCmdBufferCompatible});

XLA_FFI_DEFINE_HANDLER_SYMBOL(BatchlaPotrfBatchMinorCuda, batchla_ffi::PotrfBatchMinorImpl,
                              ffi::Ffi::Bind()
                                  .Ctx<Stream>()
                                  .Arg<ffi::AnyBuffer>()  // a
                                  .Ret<ffi::AnyBuffer>()  // l
                                  .Ret<ffi::AnyBuffer>()  // info
                                  .Attr<bool>("symmetrize"),
                              {ffi::Traits::kCmdBufferCompatible});

namespace {

template <typename Fn>
nanobind::capsule Capsule(Fn* fn) {
  return nanobind::capsule(reinterpret_cast<void*>(fn));
}

// Binds `name(dtype_name, *args)` to f32(args) or f64(args): the one switch from a dtype name to
// the kernel instance, for the size limits and predicates the Python lowerings ask.
template <typename R, typename... A, typename... Names>
void DefByDtype(nanobind::module_& m, const char* name, R (*f32)(A...), R (*f64)(A...), Names... arg_names) {
  m.def(
      name,
      [name, f32, f64](const std::string& dtype_name, A... args) -> R {
        if (dtype_name == "float32") return f32(args...);
        if (dtype_name == "float64") return f64(args...);
        throw nanobind::value_error((std::string(name) + ": dtype must be 'float32' or 'float64', got '" +
                                     dtype_name + "'").c_str());
      },
      nanobind::arg("dtype_name"), nanobind::arg(arg_names)...);
}

// The QR predicates take int sizes; sizes past int are simply not supported.
template <typename T>
bool QrSupportedAnySize(int64_t rows, int64_t cols) {
  return rows >= 0 && cols >= 0 && rows <= INT32_MAX && cols <= INT32_MAX &&
         batchla::QrSupported<T>(static_cast<int>(rows), static_cast<int>(cols));
}
template <typename T>
bool QrFusedFitsAnySize(int64_t rows, int64_t cols) {
  return rows >= 0 && cols >= 0 && rows <= INT32_MAX && cols <= INT32_MAX &&
         batchla::QrFusedFits<T>(static_cast<int>(rows), static_cast<int>(cols));
}

}  // namespace

NB_MODULE(_cuda, m) {
  namespace nb = nanobind;
  m.doc() = "jax_batchla CUDA FFI targets (see bindings/TARGETS.md)";
  m.def(
      "launch_counts",
      []() -> nb::tuple {
        return nb::make_tuple(batchla_ffi::launches_direct.load(), batchla_ffi::launches_captured.load());
      },
      "(direct, captured): handler calls whose stream ran directly / was being captured into a CUDA "
      "graph, counted only when JAX_BATCHLA_COUNT_LAUNCHES=1 was set when the module loaded.");
  m.def("registrations", []() {
    nb::dict d;
    d["batchla_potrf"] = Capsule(BatchlaPotrfCuda);
    d["batchla_trsm"] = Capsule(BatchlaTrsmCuda);
    d["batchla_potrs"] = Capsule(BatchlaPotrsCuda);
    d["batchla_posv"] = Capsule(BatchlaPosvCuda);
    d["batchla_getrf"] = Capsule(BatchlaGetrfCuda);
    d["batchla_getrs"] = Capsule(BatchlaGetrsCuda);
    d["batchla_gesv"] = Capsule(BatchlaGesvCuda);
    d["batchla_inverse"] = Capsule(BatchlaInverseCuda);
    d["batchla_slogdet"] = Capsule(BatchlaSlogdetCuda);
    d["batchla_det"] = Capsule(BatchlaDetCuda);
    d["batchla_geqrf"] = Capsule(BatchlaGeqrfCuda);
    d["batchla_orgqr"] = Capsule(BatchlaOrgqrCuda);
    d["batchla_ormqr"] = Capsule(BatchlaOrmqrCuda);
    d["batchla_qr"] = Capsule(BatchlaQrCuda);
    d["batchla_qr_r"] = Capsule(BatchlaQrRCuda);
    d["batchla_lstsq"] = Capsule(BatchlaLstsqCuda);
    d["batchla_il_potrf"] = Capsule(BatchlaIlPotrfCuda);
    d["batchla_il_potrs"] = Capsule(BatchlaIlPotrsCuda);
    d["batchla_il_posv"] = Capsule(BatchlaIlPosvCuda);
    d["batchla_il_trsm"] = Capsule(BatchlaIlTrsmCuda);
    d["batchla_from_interleaved"] = Capsule(BatchlaFromInterleavedCuda);
    d["batchla_potrf_batch_minor"] = Capsule(BatchlaPotrfBatchMinorCuda);
    return d;
  });
  // Size limits and predicates of the kernels, per dtype name, for the Python lowerings.
  DefByDtype(m, "posv_max_fused_n", batchla::PosvMaxFusedN<float>, batchla::PosvMaxFusedN<double>);
  DefByDtype(m, "potrf_max_n", batchla::PotrfMaxN<float>, batchla::PotrfMaxN<double>);
  DefByDtype(m, "getrf_max_n", batchla::GetrfMaxN<float>, batchla::GetrfMaxN<double>);
  DefByDtype(m, "lu_fused_max_n", batchla::LuFusedMaxN<float>, batchla::LuFusedMaxN<double>);
  DefByDtype(m, "lu_fused_wins", batchla::LuFusedWins<float>, batchla::LuFusedWins<double>, "output", "n");
  DefByDtype(m, "slogdet_scratch_elems", batchla::SlogdetScratchElems<float>, batchla::SlogdetScratchElems<double>,
             "n");
  // The chunk the autotuner found fastest for n (cuda/interleaved_tuning.h); whether the fused
  // il_posv handles n (else the lowering composes il_potrf + il_potrs).
  DefByDtype(m, "il_default_chunk", batchla::IlDefaultChunk<float>, batchla::IlDefaultChunk<double>, "n");
  DefByDtype(m, "il_posv_fused", batchla::IlPosvFused<float>, batchla::IlPosvFused<double>, "n");
  DefByDtype(m, "qr_supported", QrSupportedAnySize<float>, QrSupportedAnySize<double>, "m", "n");
  DefByDtype(m, "qr_fused_fits", QrFusedFitsAnySize<float>, QrFusedFitsAnySize<double>, "m", "ncols");
}
