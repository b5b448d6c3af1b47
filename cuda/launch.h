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

}  // namespace batchla
