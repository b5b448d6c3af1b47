// The QR entry points of cuda/launch.h: argument checks, empty-size short cuts, and the choice of
// size class (cuda/qr_dispatch.h).
#include "cuda/launch.h"
#include "cuda/qr_dispatch.h"
#include "cuda/tuning.h"

namespace batchla {
namespace detail {
namespace {

// The first class that takes the shape: tile (kR only), small, panel, else the engine.
template <typename T>
cudaError_t Factor(cudaStream_t stream, const QrArgs<T>& args, QrOutput out) {
  const int ncols = QrColumns(args, out);
  if (QrTileTakes<T>(args.m, args.n, out)) return QrTile(stream, args);
  if (QrSmallFits<T>(args.m, ncols)) return QrSmall(stream, args, out);
  if (QrPanelTakes<T>(args.m, ncols, out)) return QrPanel(stream, args, out);
  return QrEngine(stream, args, out);
}

}  // namespace
}  // namespace detail

template <typename T>
bool QrSupported(int m, int n) {
  return 0 <= n && n <= m && m <= tuning::kQrMaxM && n <= tuning::kQrMaxN;
}

template <typename T>
bool QrFusedFits(int m, int ncols) {
  return detail::QrSmallFits<T>(m, ncols) || detail::QrEngineFusedFits<T>(m, ncols);
}

template <typename T>
cudaError_t LaunchGeqrf(cudaStream_t stream, const T* a, T* qr, T* taus, int64_t batch, int m,
                        int n) {
  if (!QrSupported<T>(m, n) || batch < 0) return cudaErrorInvalidValue;
  if (batch == 0 || n == 0) return cudaSuccess;
  detail::QrArgs<T> args;
  args.a = a, args.batch = batch, args.m = m, args.n = n, args.qr = qr, args.taus = taus;
  return detail::Factor(stream, args, detail::QrOutput::kGeqrf);
}

template <typename T>
cudaError_t LaunchOrgqr(cudaStream_t stream, const T* a, const T* taus, T* q, int64_t batch, int m,
                        int n, int k) {
  if (!QrSupported<T>(m, n) || k < 0 || k > n || batch < 0) return cudaErrorInvalidValue;
  if (batch == 0 || n == 0) return cudaSuccess;
  return detail::QrEngineOrgqr(stream, a, taus, q, batch, m, n, k);
}

template <typename T>
cudaError_t LaunchOrmqr(cudaStream_t stream, const T* a, const T* taus, const T* c, T* x,
                        int64_t batch, int m, int n, int k, int p, bool trans) {
  if (!QrSupported<T>(m, n) || k < 0 || k > n || p < 0 || batch < 0) return cudaErrorInvalidValue;
  if (batch == 0 || m == 0 || p == 0) return cudaSuccess;
  return detail::QrEngineOrmqr(stream, a, taus, c, x, batch, m, n, k, p, trans);
}

template <typename T>
cudaError_t LaunchQr(cudaStream_t stream, const T* a, T* q, T* r, int64_t batch, int m, int n) {
  if (n < 0 || m < n || batch < 0) return cudaErrorInvalidValue;
  if (batch == 0 || n == 0) return cudaSuccess;
  if (!QrFusedFits<T>(m, n)) return cudaErrorInvalidValue;
  detail::QrArgs<T> args;
  args.a = a, args.batch = batch, args.m = m, args.n = n, args.q = q, args.r = r;
  return detail::Factor(stream, args, q ? detail::QrOutput::kQr : detail::QrOutput::kR);
}

template <typename T>
cudaError_t LaunchLstsq(cudaStream_t stream, const T* a, const T* b, T* x, T* rdiag, T* resid,
                        int64_t batch, int m, int n, int k) {
  if (n < 0 || m < n || k < 0 || batch < 0) return cudaErrorInvalidValue;
  if (batch == 0 || (n == 0 && k == 0)) return cudaSuccess;
  if (!QrFusedFits<T>(m, n + k)) return cudaErrorInvalidValue;
  detail::QrArgs<T> args;
  args.a = a, args.batch = batch, args.m = m, args.n = n, args.b = b, args.k = k;
  args.x = x, args.rdiag = rdiag, args.resid = resid;
  return detail::Factor(stream, args, detail::QrOutput::kLstsq);
}

#define BATCHLA_INSTANTIATE(T)                                                                     \
  template bool QrSupported<T>(int, int);                                                          \
  template bool QrFusedFits<T>(int, int);                                                          \
  template cudaError_t LaunchGeqrf<T>(cudaStream_t, const T*, T*, T*, int64_t, int, int);          \
  template cudaError_t LaunchOrgqr<T>(cudaStream_t, const T*, const T*, T*, int64_t, int, int,     \
                                      int);                                                        \
  template cudaError_t LaunchOrmqr<T>(cudaStream_t, const T*, const T*, const T*, T*, int64_t,     \
                                      int, int, int, int, bool);                                   \
  template cudaError_t LaunchQr<T>(cudaStream_t, const T*, T*, T*, int64_t, int, int);             \
  template cudaError_t LaunchLstsq<T>(cudaStream_t, const T*, const T*, T*, T*, T*, int64_t, int,  \
                                      int, int);
BATCHLA_INSTANTIATE(float)
BATCHLA_INSTANTIATE(double)
#undef BATCHLA_INSTANTIATE

}  // namespace batchla
