"""The primitives under jit, vmap (any in_axes, nested) and autodiff (check_grads)."""

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from conftest import lower_triangular, spd
from jax.test_util import check_grads

import jax_batchla.linalg as bla
import jax_batchla.scipy.linalg as bsl


def _spd_fn(x):
    """Maps any square x to an SPD matrix, so finite differences stay in the SPD cone."""
    n = x.shape[-1]
    return x @ jnp.swapaxes(x, -1, -2) + n * jnp.eye(n, dtype=x.dtype)


def test_vmap_non_leading_axes_and_nested(device):
    rng = np.random.default_rng(0)
    a = spd(rng, (3, 4), 5, np.float64)  # (3, 4, 5, 5)
    a_t = np.moveaxis(a, 1, 2)  # batch axis of size 4 sits between the matrix dims: (3, 5, 4, 5)
    out = jax.vmap(bla.cholesky, in_axes=2, out_axes=1)(a_t)
    np.testing.assert_allclose(np.asarray(out), np.linalg.cholesky(a), rtol=1e-10)
    nested = jax.vmap(jax.vmap(bla.cholesky, in_axes=0), in_axes=1, out_axes=1)(a)
    np.testing.assert_allclose(np.asarray(nested), np.linalg.cholesky(a), rtol=1e-10)


@pytest.mark.parametrize("in_axes", [(0, 0), (None, 0), (0, None), (1, 2)])
def test_vmap_solves_every_in_axes_pattern(device, in_axes):
    rng = np.random.default_rng(1)
    a = spd(rng, (4,), 5, np.float64)
    b = rng.standard_normal((4, 5, 3))
    l = np.linalg.cholesky(a)
    a_in = a if in_axes[0] in (0, None) else np.moveaxis(a, 0, in_axes[0])
    b_in = b if in_axes[1] in (0, None) else np.moveaxis(b, 0, in_axes[1])
    l_in = np.linalg.cholesky(a_in) if in_axes[0] != 1 else np.moveaxis(l, 0, 1)
    if in_axes[0] is None:
        a_in, l_in = a[0], l[0]
    if in_axes[1] is None:
        b_in = b[0]
    fns = {
        "cho_solve": (lambda l_, b_: bsl.cho_solve((l_, True), b_), l_in),
        "solve_triangular": (lambda l_, b_: bsl.solve_triangular(l_, b_, lower=True), l_in),
        "posv": (lambda a_, b_: bsl.solve(a_, b_, assume_a="pos"), a_in),
    }
    ref_fns = {
        "cho_solve": lambda l_, b_: jax.scipy.linalg.cho_solve((l_, True), b_),
        "solve_triangular": lambda l_, b_: jax.scipy.linalg.solve_triangular(l_, b_, lower=True),
        "posv": lambda a_, b_: jax.scipy.linalg.solve(a_, b_, assume_a="pos"),
    }
    for name, (fn, m) in fns.items():
        ours = jax.jit(jax.vmap(fn, in_axes=in_axes))(m, b_in)
        ref = jax.vmap(ref_fns[name], in_axes=in_axes)(m, b_in)
        np.testing.assert_allclose(np.asarray(ours), np.asarray(ref), rtol=1e-9, atol=1e-10, err_msg=name)


def test_grad_cholesky(device):
    rng = np.random.default_rng(2)
    x = rng.standard_normal((2, 4, 4))
    check_grads(lambda x: bla.cholesky(_spd_fn(x)), (x,), order=2, modes=["fwd", "rev"], atol=1e-6, rtol=1e-6)
    check_grads(lambda x: bsl.cholesky(_spd_fn(x), lower=False), (x,), order=1, modes=["fwd", "rev"])


def test_grad_cho_solve_both_args(device):
    rng = np.random.default_rng(3)
    l = lower_triangular(rng, (2,), 4, np.float64)
    b = rng.standard_normal((2, 4, 3))
    for lower in (True, False):
        c = l if lower else np.swapaxes(l, -1, -2)
        check_grads(lambda c, b: bsl.cho_solve((c, lower), b), (c, b), order=2, modes=["fwd", "rev"])


def test_grad_solve_triangular_both_args(device):
    rng = np.random.default_rng(4)
    l = lower_triangular(rng, (2,), 4, np.float64)
    b = rng.standard_normal((2, 4, 2))
    for lower, trans, unit in [(True, 0, False), (False, 1, False), (True, "T", True), (False, "N", True)]:
        a = l if lower else np.swapaxes(l, -1, -2)
        fn = lambda a, b: bsl.solve_triangular(a, b, trans=trans, lower=lower, unit_diagonal=unit)
        check_grads(fn, (a, b), order=2, modes=["fwd", "rev"])


def test_grad_solve_pos_both_args(device):
    rng = np.random.default_rng(5)
    x = rng.standard_normal((2, 4, 4))
    b = rng.standard_normal((2, 4))
    for lower in (True, False):
        fn = lambda x, b: bsl.solve(_spd_fn(x), b, lower=lower, assume_a="pos")
        check_grads(fn, (x, b), order=2, modes=["fwd", "rev"])
    # Gradients agree with jax's own.
    g = jax.grad(lambda x, b: jnp.sum(bsl.solve(_spd_fn(x), b, assume_a="pos") ** 2), (0, 1))(x, b)
    r = jax.grad(lambda x, b: jnp.sum(jax.scipy.linalg.solve(_spd_fn(x), b, assume_a="pos") ** 2), (0, 1))(x, b)
    for gi, ri in zip(g, r):
        np.testing.assert_allclose(np.asarray(gi), np.asarray(ri), rtol=1e-8, atol=1e-10)


def test_grad_under_vmap_and_jit(device):
    rng = np.random.default_rng(6)
    x = rng.standard_normal((3, 5, 5))
    f = lambda x: jnp.sum(jnp.log(jnp.diagonal(bla.cholesky(_spd_fn(x)), axis1=-2, axis2=-1)))
    ours = jax.jit(jax.vmap(jax.grad(f)))(x)
    # d/dx of 0.5 logdet(x x^T + nI) = (x x^T + nI)^-1 x
    a = np.asarray(_spd_fn(x))
    np.testing.assert_allclose(np.asarray(ours), np.linalg.solve(a, x), rtol=1e-8)


# ---- LU family ---------------------------------------------------------------------------------
def _general(rng, shape, n):
    return rng.standard_normal((*shape, n, n)) + 2 * n ** 0.5 * np.eye(n)


def test_lu_vmap_non_leading_axes_and_nested(device):
    rng = np.random.default_rng(10)
    a = _general(rng, (3, 4), 5)
    b = rng.standard_normal((3, 4, 5, 2))
    ref = np.linalg.solve(a, b)
    a_t = np.moveaxis(a, 1, 2)  # (3, 5, 4, 5)
    out = jax.vmap(bla.solve, in_axes=(2, 1), out_axes=1)(a_t, b)
    np.testing.assert_allclose(np.asarray(out), ref, rtol=1e-10)
    nested = jax.vmap(jax.vmap(bla.inv), in_axes=1, out_axes=1)(a)
    np.testing.assert_allclose(np.asarray(nested), np.linalg.inv(a), rtol=1e-10)
    dets = jax.jit(jax.vmap(jax.vmap(bla.det)))(a)
    np.testing.assert_allclose(np.asarray(dets), np.linalg.det(a), rtol=1e-10)


@pytest.mark.parametrize("in_axes", [(0, 0), (None, 0), (0, None), (1, 2)])
def test_lu_vmap_solves_every_in_axes_pattern(device, in_axes):
    rng = np.random.default_rng(11)
    a = _general(rng, (4,), 5)
    b = rng.standard_normal((4, 5, 3))
    a_in = a[0] if in_axes[0] is None else np.moveaxis(a, 0, in_axes[0])
    b_in = b[0] if in_axes[1] is None else np.moveaxis(b, 0, in_axes[1])
    ours = jax.jit(jax.vmap(bla.solve, in_axes=in_axes))(a_in, b_in)
    ref = jax.vmap(jnp.linalg.solve, in_axes=in_axes)(a_in, b_in)
    np.testing.assert_allclose(np.asarray(ours), np.asarray(ref), rtol=1e-9)
    lu_piv = jax.vmap(bsl.lu_factor, in_axes=in_axes[0])(a_in) if in_axes[0] is not None else bsl.lu_factor(a_in)
    lu_axes = None if in_axes[0] is None else 0
    ours = jax.vmap(lambda lp, b_: bsl.lu_solve(lp, b_), in_axes=(lu_axes, in_axes[1]))(lu_piv, b_in)
    np.testing.assert_allclose(np.asarray(ours), np.asarray(ref), rtol=1e-9)


def test_grad_lu(device):
    rng = np.random.default_rng(12)
    a = _general(rng, (2,), 4)
    check_grads(lambda x: bsl.lu(x)[1] * 2 + bsl.lu(x)[2], (a,), order=2, modes=["fwd", "rev"])
    check_grads(lambda x: bsl.lu_factor(x)[0], (a,), order=2, modes=["fwd", "rev"])


def test_grad_solve_both_args(device):
    rng = np.random.default_rng(13)
    a = _general(rng, (2,), 4)
    b = rng.standard_normal((2, 4, 2))
    check_grads(bla.solve, (a, b), order=2, modes=["fwd", "rev"])
    check_grads(lambda a_, b_: bsl.solve(a_, b_), (a, b[0, :, 0]), order=2, modes=["fwd", "rev"])


def test_grad_lu_solve_both_args(device):
    rng = np.random.default_rng(14)
    a = _general(rng, (2,), 4)
    b = rng.standard_normal((2, 4, 2))
    lu, piv = bsl.lu_factor(a)
    for trans in (0, 1):
        check_grads(lambda l_, b_: bsl.lu_solve((l_, piv), b_, trans=trans), (lu, b), order=2,
                    modes=["fwd", "rev"])


def test_grad_inv_det_slogdet(device):
    rng = np.random.default_rng(15)
    a = _general(rng, (2,), 4)
    check_grads(bla.inv, (a,), order=2, modes=["fwd", "rev"])
    check_grads(bla.det, (a,), order=2, modes=["fwd", "rev"])
    check_grads(lambda x: bla.slogdet(x)[1], (a,), order=2, modes=["fwd", "rev"])


@pytest.mark.parametrize("n", [3, 4, 6])
def test_grad_det_of_singular_matches_jnp(device, n):
    rng = np.random.default_rng(n)
    g = rng.standard_normal((3, n, n))
    a = np.stack([g[0], g[1], g[2]])
    a[1, -1] = a[1, 0] + a[1, 1]  # rank n - 1, zero pivot at the last step
    a[2, 1] = 2 * a[2, 0]         # rank n - 1, zero pivot earlier
    ours = jax.grad(lambda x: bla.det(x).sum())(a)
    ref = jax.grad(lambda x: jnp.linalg.det(x).sum())(a)
    np.testing.assert_allclose(np.asarray(ours), np.asarray(ref), rtol=1e-9, atol=1e-10)


def test_solve_grad_factors_once(device):
    """Reverse mode through solve: one getrf, the rest triangular solves (custom_linear_solve)."""
    rng = np.random.default_rng(16)
    a = _general(rng, (3,), 4)
    b = rng.standard_normal((3, 4, 1))
    jaxpr = str(jax.make_jaxpr(jax.grad(lambda a_, b_: bla.solve(a_, b_).sum(), argnums=(0, 1)))(a, b))
    assert jaxpr.count("batchla_getrf") == 1
    assert jaxpr.count("batchla_getrs") == 2


# ---- QR family ---------------------------------------------------------------------------------
def test_qr_vmap_non_leading_axes_and_nested(device):
    rng = np.random.default_rng(20)
    a = rng.standard_normal((3, 4, 7, 5))
    q_ref, r_ref = np.linalg.qr(a)
    a_t = np.moveaxis(a, 1, 2)  # (3, 7, 4, 5)
    q, r = jax.vmap(bla.qr, in_axes=2, out_axes=1)(a_t)
    np.testing.assert_allclose(np.asarray(q), q_ref, rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(np.asarray(r), r_ref, rtol=1e-10, atol=1e-12)
    nested = jax.jit(jax.vmap(jax.vmap(lambda x: bla.qr(x, mode="r")), in_axes=1, out_axes=1))(a)
    np.testing.assert_allclose(np.asarray(nested), r_ref, rtol=1e-10, atol=1e-12)
    qc = jax.vmap(lambda x: bsl.qr(x)[0], in_axes=3, out_axes=0)(np.moveaxis(a, 0, 3))
    np.testing.assert_allclose(np.asarray(qc), np.asarray(jnp.linalg.qr(a, mode="complete")[0]),
                               rtol=1e-10, atol=1e-12)


@pytest.mark.parametrize("in_axes", [(0, 0), (None, 0), (0, None), (1, 2)])
def test_ormqr_vmap_every_in_axes_pattern(device, in_axes):
    from jax_batchla._ops import qr as qr_ops

    rng = np.random.default_rng(21)
    h, taus = (np.asarray(x) for x in qr_ops.geqrf(rng.standard_normal((4, 6, 3))))
    c = rng.standard_normal((4, 6, 2))
    pick = lambda x, axis, i: x[0] if axis is None else x[i]  # the operand matrix i sees
    ref = np.stack([np.asarray(qr_ops.ormqr(pick(h, in_axes[0], i), pick(taus, in_axes[0], i),
                                            pick(c, in_axes[1], i), trans=True)) for i in range(4)])
    h_in = h[0] if in_axes[0] is None else np.moveaxis(h, 0, in_axes[0])
    taus_in = taus[0] if in_axes[0] is None else taus
    c_in = c[0] if in_axes[1] is None else np.moveaxis(c, 0, in_axes[1])
    fn = lambda h_, t_, c_: qr_ops.ormqr(h_, t_, c_, trans=True)
    t_axis = None if in_axes[0] is None else 0
    out = jax.jit(jax.vmap(fn, in_axes=(in_axes[0], t_axis, in_axes[1])))(h_in, taus_in, c_in)
    np.testing.assert_allclose(np.asarray(out), ref, rtol=1e-10, atol=1e-12)


@pytest.mark.parametrize("shape", [(2, 4, 4), (2, 6, 3)])
def test_grad_qr(device, shape):
    rng = np.random.default_rng(22)
    a = rng.standard_normal(shape)
    check_grads(lambda x: bla.qr(x), (a,), order=2, modes=["fwd", "rev"])
    check_grads(lambda x: bla.qr(x, mode="r"), (a,), order=2, modes=["fwd", "rev"])
    check_grads(lambda x: bla.qr(x, mode="complete"), (a,), order=1, modes=["fwd", "rev"])
    check_grads(lambda x: bsl.qr(x, mode="economic"), (a,), order=1, modes=["fwd", "rev"])
    # Gradients agree with jnp's (the complete Q's included).
    for mode in ("reduced", "complete", "r"):
        f = lambda x, qr: sum(jnp.sum(jnp.sin(t)) for t in jax.tree.leaves(qr(x, mode=mode)))
        np.testing.assert_allclose(np.asarray(jax.jit(jax.grad(f, argnums=0), static_argnums=1)(a, bla.qr)),
                                   np.asarray(jax.grad(f)(a, jnp.linalg.qr)), rtol=1e-9, atol=1e-11,
                                   err_msg=mode)


def test_grad_ormqr_in_c_and_householder_primitives_refuse(device):
    from jax_batchla._ops import qr as qr_ops

    rng = np.random.default_rng(23)
    h, taus = qr_ops.geqrf(rng.standard_normal((2, 5, 3)))
    c = rng.standard_normal((2, 5, 2))
    for trans in (False, True):
        check_grads(lambda c_: qr_ops.ormqr(h, taus, c_, trans=trans), (c,), order=2, modes=["fwd", "rev"])
    with pytest.raises(NotImplementedError, match="batchla_geqrf"):
        jax.grad(lambda x: qr_ops.geqrf(x)[0].sum())(np.asarray(h))
    with pytest.raises(NotImplementedError, match="batchla_orgqr"):
        jax.grad(lambda x: qr_ops.orgqr(x, taus).sum())(np.asarray(h))
    with pytest.raises(NotImplementedError, match="batchla_ormqr"):
        jax.grad(lambda x: qr_ops.ormqr(x, taus, c).sum())(np.asarray(h))
