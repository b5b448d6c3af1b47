// Host side of the QR engine class (cuda/qr_engine.cuh): picks shared-memory or in-place-global
// working storage per size and launches a block per matrix.
#include "cuda/qr_engine.cuh"

namespace batchla {
namespace detail {
namespace {

using qr_engine::kThreads;
using qr_engine::Scratch;
using qr_engine::SmemLd;

// Shared memory of a block: the scratch, plus the m x ncols working matrix when it is on chip.
template <typename T>
size_t SmemBytes(int m, int ncols, bool in_smem) {
  return sizeof(Scratch<T>) + (in_smem ? size_t(m) * SmemLd(ncols) * sizeof(T) : 0);
}

template <typename T>
bool FitsOnChip(int m, int ncols) {
  return SmemBytes<T>(m, ncols, true) <= SmemOptin();
}

template <typename Kernel, typename... Args>
cudaError_t LaunchBlocks(Kernel kernel, size_t smem, cudaStream_t stream, int64_t batch,
                         Args... args) {
  if (smem > 48 * 1024) {
    const cudaError_t e =
        cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, int(smem));
    if (e != cudaSuccess) return e;
  }
  kernel<<<GridFor(batch), kThreads, smem, stream>>>(args...);
  return cudaGetLastError();
}

}  // namespace

template <typename T>
bool QrEngineFusedFits(int m, int ncols) {
  return m >= 1 && ncols >= 1 && FitsOnChip<T>(m, ncols);
}

template <typename T>
cudaError_t QrEngine(cudaStream_t stream, const QrArgs<T>& args, QrOutput out) {
  const int ncols = QrColumns(args, out);
  if (FitsOnChip<T>(args.m, ncols))
    return LaunchBlocks(qr_engine::FactorKernel<T, true>, SmemBytes<T>(args.m, ncols, true), stream,
                        args.batch, args, out);
  if (out != QrOutput::kGeqrf) return cudaErrorInvalidValue;  // fused outputs need the chip
  return LaunchBlocks(qr_engine::FactorKernel<T, false>, SmemBytes<T>(args.m, ncols, false), stream,
                      args.batch, args, out);
}

template <typename T>
cudaError_t QrEngineOrgqr(cudaStream_t stream, const T* a, const T* taus, T* q, int64_t batch,
                          int m, int n, int k) {
  if (FitsOnChip<T>(m, n))
    return LaunchBlocks(qr_engine::OrgqrKernel<T, true>, SmemBytes<T>(m, n, true), stream, batch,
                        a, taus, q, batch, m, n, k);
  return LaunchBlocks(qr_engine::OrgqrKernel<T, false>, SmemBytes<T>(m, n, false), stream, batch,
                      a, taus, q, batch, m, n, k);
}

template <typename T>
cudaError_t QrEngineOrmqr(cudaStream_t stream, const T* a, const T* taus, const T* c, T* x,
                          int64_t batch, int m, int n, int k, int p, bool trans) {
  if (FitsOnChip<T>(m, p))
    return LaunchBlocks(qr_engine::OrmqrKernel<T, true>, SmemBytes<T>(m, p, true), stream, batch,
                        a, taus, c, x, batch, m, n, k, p, trans);
  return LaunchBlocks(qr_engine::OrmqrKernel<T, false>, SmemBytes<T>(m, p, false), stream, batch,
                      a, taus, c, x, batch, m, n, k, p, trans);
}

#define BATCHLA_INSTANTIATE(T)                                                                    \
  template bool QrEngineFusedFits<T>(int, int);                                                   \
  template cudaError_t QrEngine<T>(cudaStream_t, const QrArgs<T>&, QrOutput);                     \
  template cudaError_t QrEngineOrgqr<T>(cudaStream_t, const T*, const T*, T*, int64_t, int, int,  \
                                        int);                                                     \
  template cudaError_t QrEngineOrmqr<T>(cudaStream_t, const T*, const T*, const T*, T*, int64_t,  \
                                        int, int, int, int, bool);
BATCHLA_INSTANTIATE(float)
BATCHLA_INSTANTIATE(double)
#undef BATCHLA_INSTANTIATE

}  // namespace detail
}  // namespace batchla
