// Internal contract between cuda/qr.cu (the QR entry points of launch.h) and the QR size classes:
//   small   m <= tuning::kQrSmallMaxM, ncols <= tuning::kQrSmallMaxCols (64, 64)
//           cuda/qr_small*.{cuh,cu}   QrSmall<T>
//           (a lane per column, the column in registers; a warp per unit for ncols <= 32, a pair
//           of warps above; fused outputs only)
//   tile    kR, tuning::kQrTileMinN <= n <= m <= kQrTileMaxM (9, 32)  cuda/qr_tile.{cuh,cu}
//           (the matrix in registers on a 2 x (L / 2) lane grid, both dimensions cyclic; L = 8
//           for m <= 20, 16 above: four or two matrices a warp)   QrTile<T>
//   panel   kR / kGeqrf, tuning::kQrPanelMinM < m <= kQrPanelMaxM    cuda/qr_panel*.{cuh,cu}
//           (a block per matrix in shared memory; one warp factors 16-column panels in
//           registers, every thread updates one trailing column)   QrPanel<T>
//   engine  everything else QrSupported accepts      cuda/qr_engine*.{cuh,cu}  QrEngine<T>
//           (a block per matrix, blocked Householder with compact-WY panels; the matrix in
//           shared memory when it fits, else worked on in place in the output buffer; the block
//           shape is picked by height in cuda/qr_engine_launch.cuh)
// Semantics of every output: cuda/launch.h. Storage is ROW-MAJOR; offsets int64_t.
#pragma once

#include <cstdint>
#include <cuda_runtime.h>

namespace batchla {
namespace detail {

// What a factorization kernel writes once a matrix is factored.
enum class QrOutput : int {
  kGeqrf = 0,  // qr (m x n) and taus (n), as LAPACK geqrf
  kR = 1,      // r (n x n), zeros below the diagonal
  kQr = 2,     // q (m x n) and r (n x n)
  kLstsq = 3,  // x (n x k), rdiag (n), resid (k) from the factorization of [a | b]
};

// dlarfg's safe range for the sum of squares of x (the reflector's column below the diagonal,
// and alpha^2 + ||x||^2): inside it the plain sum loses nothing to underflow or overflow (kLo =
// the type's smallest normal / eps). Outside it (0 included: all of x may have underflowed) every
// QR class recomputes ||x|| from x / max|x| (LAPACK dnrm2's scaling) and takes LAPACK's scaled
// reflector form.
template <typename T>
struct DlarfgRange;
template <>
struct DlarfgRange<float> {
  static constexpr float kLo = 9.8607613e-32f, kHi = 1.0e37f;
};
template <>
struct DlarfgRange<double> {
  static constexpr double kLo = 1.0020841800044864e-292, kHi = 1.0e307;
};

// One argument pack for every QR factorization launch; unused outputs are null.
template <typename T>
struct QrArgs {
  const T* a = nullptr;  // batch x m x n
  int64_t batch = 0;     // > 0 when a size class is called
  int m = 0, n = 0;      // m >= n >= 1 when a size class is called
  T* qr = nullptr;       // kGeqrf: batch x m x n (may alias a)
  T* taus = nullptr;     // kGeqrf: batch x n
  T* q = nullptr;        // kQr: batch x m x n
  T* r = nullptr;        // kR, kQr: batch x n x n
  const T* b = nullptr;  // kLstsq: batch x m x k
  int k = 0;             // kLstsq: rhs columns, >= 0
  T* x = nullptr;        // kLstsq: batch x n x k
  T* rdiag = nullptr;    // kLstsq: batch x n
  T* resid = nullptr;    // kLstsq: batch x k
};

// ncols = n for kGeqrf / kR / kQr, n + k for kLstsq.
template <typename T>
int QrColumns(const QrArgs<T>& args, QrOutput out) {
  return out == QrOutput::kLstsq ? args.n + args.k : args.n;
}

// Small class: 1 <= m <= kQrSmallMaxM (64) and 1 <= ncols <= kQrSmallMaxCols (64), every output kind.
template <typename T>
bool QrSmallFits(int m, int ncols);
template <typename T>
cudaError_t QrSmall(cudaStream_t stream, const QrArgs<T>& args, QrOutput out);

// Tile class: kR where QrTileTakes (it is checked before the small class, which also fits).
template <typename T>
bool QrTileTakes(int m, int n, QrOutput out);
template <typename T>
cudaError_t QrTile(cudaStream_t stream, const QrArgs<T>& args);

// Panel class: kR / kGeqrf where its size range and shared memory take the matrix.
template <typename T>
bool QrPanelTakes(int m, int ncols, QrOutput out);
template <typename T>
cudaError_t QrPanel(cudaStream_t stream, const QrArgs<T>& args, QrOutput out);

// Engine: kGeqrf for every size QrSupported accepts; kR / kQr / kLstsq only where
// QrEngineFusedFits<T>(m, ncols) (the matrix fits in shared memory).
template <typename T>
bool QrEngineFusedFits(int m, int ncols);
template <typename T>
cudaError_t QrEngine(cudaStream_t stream, const QrArgs<T>& args, QrOutput out);
// orgqr / ormqr (launch.h) for every size QrSupported accepts.
template <typename T>
cudaError_t QrEngineOrgqr(cudaStream_t stream, const T* a, const T* taus, T* q, int64_t batch,
                          int m, int n, int k);
template <typename T>
cudaError_t QrEngineOrmqr(cudaStream_t stream, const T* a, const T* taus, const T* c, T* x,
                          int64_t batch, int m, int n, int k, int p, bool trans);

}  // namespace detail
}  // namespace batchla
