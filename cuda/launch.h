// Host entry points of the batched CUDA kernels. This header is the whole contract between
// cuda/ (kernels) and bindings/ (XLA FFI handlers): no XLA or nanobind types cross it.
//
// Storage convention for every op: JAX arrays are ROW-MAJOR. Matrix b of a batch starts at
// b * rows * cols; element (i, j) is at i * cols + j. A batch is a flat count (leading batch
// dims collapsed); all offsets are computed in int64_t. batch == 0 launches nothing.
//
// Every function returns the status of its last launch (cudaGetLastError) and never
// synchronizes, allocates or copies to the host.
#pragma once

#include <cstdint>
#include <cuda_runtime.h>

namespace batchla {

// Cholesky A = L L^T. Reads only the lower triangle of `a` (n x n), writes `l` with L in the
// lower triangle and zeros strictly above. info[b] = 0 on success, else the 1-based index of the
// first non-positive (or NaN) pivot, as LAPACK potrf; then that matrix's lower triangle
// (diagonal included) is NaN and its strict upper triangle 0 (what jnp.linalg.cholesky gives).
// `symmetrize`: factor (A + A^T) / 2 instead (both triangles read), as jnp.linalg.cholesky's
// default symmetrize_input=True does. `a` and `l` may be the same buffer unless `symmetrize`.
template <typename T>
cudaError_t LaunchPotrf(cudaStream_t stream, const T* a, T* l, int32_t* info, int64_t batch, int n,
                        bool symmetrize);
// Largest n LaunchPotrf handles (larger n returns cudaErrorInvalidValue; the Python lowering
// then uses jax's own Cholesky).
template <typename T>
int PotrfMaxN();

// Triangular solve op(A) X = B, left side. A is n x n; only its `lower` (or upper) triangle is
// read; op(A) = A^T when `trans`, else A; `unit_diag` treats the diagonal as ones (not read).
// B and X are n x k. A zero pivot gives inf/NaN in that matrix's X only (IEEE, like LAPACK trsm).
template <typename T>
cudaError_t LaunchTrsm(cudaStream_t stream, const T* a, const T* b, T* x, int64_t batch, int n,
                       int k, bool lower, bool trans, bool unit_diag);

// Solve A X = B given the Cholesky factor in `c` (n x n): A = L L^T with L the lower triangle of
// c when `lower`, else A = U^T U with U the upper triangle of c. B and X are n x k.
template <typename T>
cudaError_t LaunchPotrs(cudaStream_t stream, const T* c, const T* b, T* x, int64_t batch, int n,
                        int k, bool lower);

// Fused factor + solve of A X = B for symmetric positive definite A (n x n), reading only its
// lower triangle when `lower`, else only its upper triangle. B and X are n x k. info as potrf;
// a matrix whose factorization fails gets X = NaN (all of it), its neighbours are untouched.
// Supported only for n <= PosvMaxFusedN<T>() (the matrix must fit on-chip); larger n returns
// cudaErrorInvalidValue, and the Python lowering emits potrf + potrs instead.
template <typename T>
cudaError_t LaunchPosv(cudaStream_t stream, const T* a, const T* b, T* x, int32_t* info,
                       int64_t batch, int n, int k, bool lower);
template <typename T>
int PosvMaxFusedN();

// ---- LU family (LAPACK getrf / getrs / gesv, jnp.linalg.inv / slogdet) ------------------------
// Partial pivoting exactly as LAPACK getf2: at step j the pivot is the FIRST row r >= j (in the
// current, already swapped row order) of largest |a(r, j)|; rows j and r are swapped; when the
// pivot is exactly 0 the column is not scaled (it is all zeros below the diagonal anyway), info
// records the first such j, and elimination continues.
//
// Factor PA = LU of square n x n matrices. lu: L strictly below the diagonal (unit diagonal
// implied), U on and above. pivots[b * n + j]: 0-based row swapped with row j at step j (LAPACK
// ipiv - 1, jax.lax.linalg.lu's `pivots`). perm[b * n + i]: 0-based original row that ends in row
// i, so (PA)(i, :) = A(perm[i], :) (jax's `permutation`); perm == nullptr: not written (lu_factor
// needs only the pivots). info[b]: 0, or 1-based index of the first exactly-zero pivot
// U(j, j) == 0. `a` and `lu` may be the same buffer.
template <typename T>
cudaError_t LaunchGetrf(cudaStream_t stream, const T* a, T* lu, int32_t* pivots, int32_t* perm,
                        int32_t* info, int64_t batch, int n);
template <typename T>
int GetrfMaxN();  // largest n LaunchGetrf handles on this device (512 on sm_90; less where the
                 // shared memory is smaller); larger returns cudaErrorInvalidValue

// Solve op(A) X = B from getrf's lu and perm (A = P^T L U): op(A) = A, or A^T when `trans`.
// B and X are n x k (may be the same buffer). A zero pivot gives inf/NaN in that matrix's X only.
template <typename T>
cudaError_t LaunchGetrs(cudaStream_t stream, const T* lu, const int32_t* perm, const T* b, T* x,
                        int64_t batch, int n, int k, bool trans);

// Fused on-chip variants, for n <= LuFusedMaxN<T>() (larger n returns cudaErrorInvalidValue and
// the Python lowering composes getrf + getrs / a reduction of the diagonal instead). Each factors
// A exactly as LaunchGetrf does and never writes the LU factors to global memory.
//   gesv:    X = A^-1 B (B, X n x k, any k >= 0; may alias); info as getrf; a singular matrix gets
//            what getrs of its LU would give (inf/NaN), its neighbours are untouched.
//   inverse: inv = A^-1 (n x n); info as getrf; singular -> inf/NaN as gesv against I.
//   slogdet: sign[b], logabsdet[b] exactly as jnp.linalg.slogdet computes them from the LU:
//            sign = (-1)^(#j: pivots[j] != j) * prod_j sign(U(j, j)), logabsdet = sum_j log|U(j, j)|,
//            and when any U(j, j) == 0: sign = 0, logabsdet = -inf. A NaN U(j, j) gives logabsdet
//            NaN (sign still from the formula: NaN counts as neither negative nor zero, as in jnp).
template <typename T>
cudaError_t LaunchGesv(cudaStream_t stream, const T* a, const T* b, T* x, int32_t* info,
                       int64_t batch, int n, int k);
// scratch: batch x 2n int32 of device memory the call may overwrite (getrf's pivots and perm where
// the inverse is composed as getrf + getri; the FFI handler gets it as an extra result).
template <typename T>
cudaError_t LaunchInverse(cudaStream_t stream, const T* a, T* inv, int32_t* info, int64_t batch,
                          int n, int32_t* scratch);
// scratch: batch x SlogdetScratchElems<T>(n) of T the call may overwrite (the left-looking getrf
// class keeps its factors in global memory; null where that is 0).
template <typename T>
cudaError_t LaunchSlogdet(cudaStream_t stream, const T* a, T* sign, T* logabsdet, int64_t batch,
                          int n, T* scratch);
template <typename T>
int64_t SlogdetScratchElems(int n);
// det of 2 x 2 or 3 x 3 matrices (n = 2 or 3, else cudaErrorInvalidValue) by jnp's closed forms,
// every product and sum rounded as jnp writes them (no FMA contraction): NaN / inf propagate as
// IEEE arithmetic does, per matrix.
template <typename T>
cudaError_t LaunchDetClosed(cudaStream_t stream, const T* a, T* det, int64_t batch, int n);
template <typename T>
int LuFusedMaxN();
// Whether the fused kernel of `output` (1 gesv, 2 inverse, 3 slogdet) is the faster way at n; false
// past LuFusedMaxN and where getrf's left-looking class makes the composition faster.
template <typename T>
bool LuFusedWins(int output, int n);

// ---- QR family (LAPACK geqrf / orgqr / ormqr, jnp.linalg.qr / lstsq) ---------------------------
// Householder QR of m x n matrices with m >= n (smaller m returns cudaErrorInvalidValue):
// A = Q R, Q = H_0 H_1 ... H_{n-1}, H_j = I - tau_j v_j v_j^T with v_j(i) = 0 for i < j,
// v_j(j) = 1 (implied) and v_j(i > j) stored below the diagonal of column j. Each reflector is
// LAPACK dlarfg's: with alpha = A(j, j) and x = A(j+1:m, j) after the previous reflectors,
// xnorm = ||x||_2; xnorm == 0 (this includes j == m - 1) -> tau = 0, R(j, j) = alpha, v = e_j;
// else beta = -copysign(hypot(alpha, xnorm), alpha), tau = (beta - alpha) / beta,
// v(j+1:m) = x / (alpha - beta), R(j, j) = beta. So R's diagonal has jnp's (LAPACK's) signs.
//
// geqrf: qr (m x n) = R on and above the diagonal, the v_j below it; taus (n). a may alias qr.
template <typename T>
cudaError_t LaunchGeqrf(cudaStream_t stream, const T* a, T* qr, T* taus, int64_t batch, int m,
                        int n);
// orgqr: q (m x n) = the first n columns of H_0 ... H_{k-1}, from the v_j below the diagonal of
// a (m x n; its upper triangle is not read) and taus (k), 0 <= k <= n <= m.
template <typename T>
cudaError_t LaunchOrgqr(cudaStream_t stream, const T* a, const T* taus, T* q, int64_t batch, int m,
                        int n, int k);
// ormqr: x (m x p) = Q^T c when `trans`, else Q c, with Q = H_0 ... H_{k-1} (m x m) from a
// (m x n) and taus (k) as orgqr. c and x may alias.
template <typename T>
cudaError_t LaunchOrmqr(cudaStream_t stream, const T* a, const T* taus, const T* c, T* x,
                        int64_t batch, int m, int n, int k, int p, bool trans);
// Sizes LaunchGeqrf / LaunchOrgqr / LaunchOrmqr handle: n <= m <= 4096, n <= 512.
template <typename T>
bool QrSupported(int m, int n);

// Fused on-chip variants (the reflectors never reach global memory), for the sizes
// QrFusedFits<T>(m, ncols) accepts; others return cudaErrorInvalidValue and the Python lowering
// composes the three kernels above instead.
//   qr:    r (n x n) = R with zeros below the diagonal; q (m x n) as orgqr of geqrf's output, or
//          not computed when q == nullptr (jnp.linalg.qr mode 'r'). ncols = n.
//   lstsq: with c = Q^T b (b: m x k, k >= 0), x (n x k) = R^-1 c(0:n, :), rdiag (n) = R's
//          diagonal, resid (k): resid(j) = sum_{i >= n} c(i, j)^2. A zero R(j, j) gives inf/NaN
//          in that matrix's x only. ncols = n + k.
template <typename T>
cudaError_t LaunchQr(cudaStream_t stream, const T* a, T* q, T* r, int64_t batch, int m, int n);
template <typename T>
cudaError_t LaunchLstsq(cudaStream_t stream, const T* a, const T* b, T* x, T* rdiag, T* resid,
                        int64_t batch, int m, int n, int k);
template <typename T>
bool QrFusedFits(int m, int ncols);

// ---- Interleaved layout (issue 6; bindings/TARGETS.md "Interleaved layout") --------------------
// Buffers (chunks, rows, cols, c): element (i, j) of matrix `lane` of chunk q at
// ((q * rows + i) * cols + j) * c + lane; any c >= 1. One thread per matrix; each matrix has the
// semantics of the standard-layout function of the same name (info, NaN on failure, triangle
// read). Every n is supported; the variant per n comes from cuda/interleaved_tuning.h.
template <typename T>
cudaError_t LaunchIlPotrf(cudaStream_t stream, const T* a, T* l, int32_t* info, int64_t chunks,
                          int64_t c, int n, bool symmetrize);
template <typename T>
cudaError_t LaunchIlPotrs(cudaStream_t stream, const T* l, const T* b, T* x, int64_t chunks,
                          int64_t c, int n, int k, bool lower);
// Fused factor + solve, for the n where IlPosvFused<T>(n) (the tuned kernel keeps the factor in
// registers or shared memory); other n return cudaErrorInvalidValue and the Python lowering
// composes LaunchIlPotrf + LaunchIlPotrs.
template <typename T>
bool IlPosvFused(int n);
template <typename T>
cudaError_t LaunchIlPosv(cudaStream_t stream, const T* a, const T* b, T* x, int32_t* info, int64_t chunks,
                         int64_t c, int n, int k, bool lower);
template <typename T>
cudaError_t LaunchIlTrsm(cudaStream_t stream, const T* a, const T* b, T* x, int64_t chunks, int64_t c,
                         int n, int k, bool lower, bool trans, bool unit_diag);
// The chunk size the autotuner found fastest for n (the Python layer's default chunk).
template <typename T>
int IlDefaultChunk(int n);
// Back to the standard layout: x (lead, chunks, rows, cols, c) interleaved, elems = rows * cols,
// into out (lead, count, rows, cols) row-major: the first count <= chunks * c matrices of each
// leading index (the rest of x is padding, never read). cudaErrorInvalidValue if count > chunks * c.
template <typename T>
cudaError_t LaunchFromInterleaved(cudaStream_t stream, const T* x, T* out, int64_t lead, int64_t chunks,
                                  int64_t elems, int64_t c, int64_t count);

}  // namespace batchla
