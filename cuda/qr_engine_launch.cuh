// Host side of the QR engine class (cuda/qr_engine.cuh): picks the block shape per size, shared-
// memory or in-place-global working storage, and launches a block per matrix. Included once per
// scalar type by cuda/qr_engine_f32.cu / qr_engine_f64.cu, which define BATCHLA_QR_ENGINE_T.
#pragma once

#include "cuda/qr_engine.cuh"
#include "cuda/tuning.h"

namespace batchla {
namespace detail {
namespace {

using qr_engine::Scratch;
using qr_engine::SmemLd;

// Shared memory of a block: the scratch, plus the m x ncols working matrix when it is on chip.
template <typename T, int kThreads, int kNB>
size_t SmemBytes(int m, int ncols, bool in_smem) {
  return sizeof(Scratch<T, kThreads, kNB>) + (in_smem ? size_t(m) * SmemLd(ncols) * sizeof(T) : 0);
}

// One block shape (threads, panel width, rows per lane of the one-warp panel: 0 = never) of the
// engine: its kernels and its shared memory.
template <typename T, int kThreads, int kNB, int kRowsPerLane = 0>
struct Shape {
  static bool OnChip(int m, int ncols) {
    return SmemBytes<T, kThreads, kNB>(m, ncols, true) <= SmemOptin();
  }
  static cudaError_t Factor(cudaStream_t stream, const QrArgs<T>& args, QrOutput out) {
    const int ncols = QrColumns(args, out);
    const bool on_chip = OnChip(args.m, ncols);
    if (!on_chip && out != QrOutput::kGeqrf) return cudaErrorInvalidValue;  // fused needs the chip
    const size_t smem = SmemBytes<T, kThreads, kNB>(args.m, ncols, on_chip);
    return on_chip ? LaunchBlocks(qr_engine::FactorKernel<T, kThreads, kNB, kRowsPerLane, true>, kThreads, smem,
                                  stream, args.batch, args, out)
                   : LaunchBlocks(qr_engine::FactorKernel<T, kThreads, kNB, kRowsPerLane, false>, kThreads, smem,
                                  stream, args.batch, args, out);
  }
  static cudaError_t Orgqr(cudaStream_t stream, const T* a, const T* taus, T* q, int64_t batch,
                           int m, int n, int k) {
    const bool on_chip = OnChip(m, n);
    const size_t smem = SmemBytes<T, kThreads, kNB>(m, n, on_chip);
    return on_chip ? LaunchBlocks(qr_engine::OrgqrKernel<T, kThreads, kNB, true>, kThreads, smem,
                                  stream, batch, a, taus, q, batch, m, n, k)
                   : LaunchBlocks(qr_engine::OrgqrKernel<T, kThreads, kNB, false>, kThreads, smem,
                                  stream, batch, a, taus, q, batch, m, n, k);
  }
  static cudaError_t Ormqr(cudaStream_t stream, const T* a, const T* taus, const T* c, T* x,
                           int64_t batch, int m, int n, int k, int p, bool trans) {
    const bool on_chip = OnChip(m, p);
    const size_t smem = SmemBytes<T, kThreads, kNB>(m, p, on_chip);
    if (on_chip)
      return LaunchBlocks(qr_engine::OrmqrKernel<T, kThreads, kNB, true>, kThreads, smem, stream,
                          batch, a, taus, c, x, batch, m, n, k, p, trans);
    // p is unbounded (vmap folds a batch of right-hand sides into it): int64 indices past 2^31
    if (int64_t(m) * p > INT32_MAX)
      return LaunchBlocks(qr_engine::OrmqrKernel<T, kThreads, kNB, false, int64_t>, kThreads, smem,
                          stream, batch, a, taus, c, x, batch, m, n, k, p, trans);
    return LaunchBlocks(qr_engine::OrmqrKernel<T, kThreads, kNB, false>, kThreads, smem, stream,
                        batch, a, taus, c, x, batch, m, n, k, p, trans);
  }
};

// Block shapes by matrix height (H200 sweep, bench/NOTES.md "geqrf engine"): short matrices are
// latency-bound (a barrier per column), so small blocks with narrow panels keep more of them
// resident; tall ones are bound by the trailing update, which wants wide blocks and panels, and
// matrices of more than 256 columns wider panels still (tuning.h, kQrEngineHugeNB).
using T_ = BATCHLA_QR_ENGINE_T;
constexpr bool kF32 = sizeof(T_) == 4;
using Short = Shape<T_, kF32 ? 64 : 128, kF32 ? 8 : 4, 2>;
using Medium = Shape<T_, 256, tuning::kQrEngineMediumNB, 5>;
using Tall = Shape<T_, 256, kF32 ? tuning::kQrEngineTallNBF32 : tuning::kQrEngineTallNBF64>;
using Huge = Shape<T_, 256, tuning::kQrEngineHugeNB>;
constexpr int kShortMaxM = 64, kMediumMaxM = 160;
// Past the medium heights: wide matrices (their trailing updates are wide) take the huge shape.
bool Wide(int cols) { return cols > tuning::kQrEngineHugeMinCols; }

}  // namespace

template <>
bool QrEngineFusedFits<T_>(int m, int ncols) {
  if (m < 1 || ncols < 1) return false;
  return m <= kShortMaxM    ? Short::OnChip(m, ncols)
         : m <= kMediumMaxM ? Medium::OnChip(m, ncols)
         : Wide(ncols)      ? Huge::OnChip(m, ncols)
                            : Tall::OnChip(m, ncols);
}

template <>
cudaError_t QrEngine<T_>(cudaStream_t stream, const QrArgs<T_>& args, QrOutput out) {
  if (args.m <= kShortMaxM) return Short::Factor(stream, args, out);
  if (args.m <= kMediumMaxM) return Medium::Factor(stream, args, out);
  if (Wide(QrColumns(args, out))) return Huge::Factor(stream, args, out);
  return Tall::Factor(stream, args, out);
}

// orgqr / ormqr run where the fused kernels do not (large sizes), with the tall or huge shape.
template <>
cudaError_t QrEngineOrgqr<T_>(cudaStream_t stream, const T_* a, const T_* taus, T_* q,
                              int64_t batch, int m, int n, int k) {
  return Wide(n) ? Huge::Orgqr(stream, a, taus, q, batch, m, n, k)
                 : Tall::Orgqr(stream, a, taus, q, batch, m, n, k);
}

template <>
cudaError_t QrEngineOrmqr<T_>(cudaStream_t stream, const T_* a, const T_* taus, const T_* c, T_* x,
                              int64_t batch, int m, int n, int k, int p, bool trans) {
  return Wide(n) ? Huge::Ormqr(stream, a, taus, c, x, batch, m, n, k, p, trans)
                 : Tall::Ormqr(stream, a, taus, c, x, batch, m, n, k, p, trans);
}

}  // namespace detail
}  // namespace batchla
