"""Argument handling shared by the public mirrors: dtype promotion as jnp does, shape checks that
name the argument, the decision whether our kernels handle a call, and forwarding to jax."""

from __future__ import annotations

import functools
import warnings

import jax
import jax.numpy as jnp
import numpy as np

ACCELERATED_DTYPES = (np.dtype(np.float32), np.dtype(np.float64))


def as_inexact_arrays(fname: str, **arrays):
    """Converts each argument to an array and promotes all to one inexact dtype, as jnp.linalg
    does (integers and bools become the default float). Raises TypeError naming the argument."""
    out = []
    for name, x in arrays.items():
        try:
            x = jnp.asarray(x)
        except TypeError as e:
            raise TypeError(f"{fname}: argument {name} is not an array: {e}") from None
        if not (jnp.issubdtype(x.dtype, np.number) or x.dtype == np.bool_):
            raise TypeError(f"{fname}: argument {name} has unsupported dtype {x.dtype}")
        out.append(x)
    dtype = jnp.result_type(*out)
    if not jnp.issubdtype(dtype, np.inexact):  # jnp's rule for integers, via true division
        x = jax.ShapeDtypeStruct((), dtype)
        dtype = jax.eval_shape(jnp.true_divide, x, x).dtype
    return [x.astype(dtype) for x in out]


def accelerated(*arrays) -> bool:
    """Our kernels cover float32/float64; other dtypes (complex, half) go to jax."""
    return all(x.dtype in ACCELERATED_DTYPES for x in arrays)


def check_square(fname: str, name: str, a) -> int:
    if a.ndim < 2 or a.shape[-1] != a.shape[-2]:
        raise ValueError(f"{fname}: argument {name} must be a square matrix or a stack of square "
                         f"matrices of shape (..., N, N), got shape {a.shape}")
    return a.shape[-1]


def check_rhs_batch(fname: str, a, b, vector: bool, a_name: str = "a"):
    """The batch dims of the matrix and of b must broadcast (as jnp's solvers require)."""
    b_batch = b.shape[:-1] if vector else b.shape[:-2]
    try:
        np.broadcast_shapes(a.shape[:-2], b_batch)
    except ValueError:
        raise ValueError(f"{fname}: the batch dims of argument b {b_batch} (shape {b.shape}) do not "
                         f"broadcast with those of argument {a_name} {a.shape[:-2]} (shape {a.shape})"
                         ) from None


def rhs_signature(fname: str, a, b, *, a_name: str = "a", warn_deprecated_1d: bool = True):
    """The vectorize signature jax.scipy.linalg's solvers use for b of shape (N,), (..., N) or
    (..., N, K), after checking that b's rows and batch dims match the matrix `a` (named
    `a_name` in errors)."""
    n = check_square(fname, a_name, a)
    if b.ndim == 0:
        raise ValueError(f"{fname}: argument b must have rank >= 1, got shape {b.shape}")
    vector = b.ndim == 1 or (a.ndim == b.ndim + 1 and b.shape[-1] == n)
    if vector and b.ndim > 1 and warn_deprecated_1d:
        warnings.warn(
            f"{fname}: batched 1D solves with b.ndim > 1 are deprecated (as in jax), and in the "
            "future will be treated as a batched 2D solve. Use b[..., None] and squeeze the result.",
            category=FutureWarning, stacklevel=3)
    rows = b.shape[-1] if vector else b.shape[-2]
    if rows != n:
        raise ValueError(f"{fname}: argument b must have {n} rows to match {a_name} of shape {a.shape}, "
                         f"got shape {b.shape}")
    check_rhs_batch(fname, a, b, vector, a_name)
    return vector


def vectorized_solve(core, a, b, vector: bool):
    """Applies core(a (n,n), b (n,k)) over broadcast batch dims through vmap, so unbatched
    matrices against batched right-hand sides fold into extra columns rather than copies."""
    if vector:
        return jnp.vectorize(lambda a_, b_: core(a_, b_[:, None])[:, 0], signature="(n,n),(n)->(n)")(a, b)
    return jnp.vectorize(core, signature="(n,n),(n,k)->(n,k)")(a, b)


def over_batch(f, nbatch: int):
    """f vmapped over `nbatch` leading batch dims (for jax functions that take one matrix)."""
    for _ in range(nbatch):
        f = jax.vmap(f)
    return f


def mT(x):
    return jnp.swapaxes(x, -1, -2)


def forward(module_name: str, public_name: str, jax_fn):
    """A public name we do not accelerate yet: calls jax's function and says so in its docstring."""

    @functools.wraps(jax_fn)
    def fn(*args, **kwargs):
        return jax_fn(*args, **kwargs)

    fn.__module__ = module_name
    fn.__doc__ = (f"Not accelerated by jax_batchla yet: forwards to ``{public_name}."
                  f"{jax_fn.__name__}``.\n\n" + (jax_fn.__doc__ or ""))
    return fn


def forward_missing(namespace: dict, jax_module, module_name: str):
    """Defines in `namespace` every public name of `jax_module` that it does not define yet."""
    names = [n for n in dir(jax_module) if not n.startswith("_") and n not in namespace]
    for n in names:
        obj = getattr(jax_module, n)
        namespace[n] = forward(module_name, jax_module.__name__, obj) if callable(obj) else obj
    return names
