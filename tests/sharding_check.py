"""Run in a fresh process with 4 host CPU devices (see test_sharding.py): batch-sharded inputs
must compile to per-shard custom calls with no collectives, and give the unsharded results."""

import os
import sys

os.environ["XLA_FLAGS"] = os.environ.get("XLA_FLAGS", "") + " --xla_force_host_platform_device_count=4"

import jax  # noqa: E402

jax.config.update("jax_enable_x64", True)
jax.config.update("jax_use_shardy_partitioner", sys.argv[1] == "shardy")

import numpy as np  # noqa: E402
from jax.sharding import Mesh, NamedSharding, PartitionSpec as P  # noqa: E402

import jax_batchla.interleaved as il  # noqa: E402
import jax_batchla.linalg as bla  # noqa: E402
import jax_batchla.scipy.linalg as bsl  # noqa: E402

COLLECTIVES = ("all-gather", "all-to-all", "collective-permute", "all-reduce", "reduce-scatter")

mesh = Mesh(np.array(jax.devices()[:4]), ("batch",))
rng = np.random.default_rng(0)
g = rng.standard_normal((8, 6, 6))
a = g @ np.swapaxes(g, -1, -2) + 6 * np.eye(6)
l = np.linalg.cholesky(a)
b = rng.standard_normal((8, 6, 2))
shard = NamedSharding(mesh, P("batch"))
a_s, l_s, b_s = (jax.device_put(x, shard) for x in (a, l, b))

ops = {
    "cholesky": (bla.cholesky, (a_s,)),
    "cho_solve": (lambda c, b: bsl.cho_solve((c, True), b), (l_s, b_s)),
    "solve_triangular": (lambda c, b: bsl.solve_triangular(c, b, lower=True, trans=1), (l_s, b_s)),
    "solve_pos": (lambda a, b: bsl.solve(a, b, assume_a="pos"), (a_s, b_s)),
    "solve": (bla.solve, (a_s, b_s)),
    "inv": (bla.inv, (a_s,)),
    "slogdet": (lambda a: bla.slogdet(a).logabsdet, (a_s,)),
    "lu_factor": (lambda a: bsl.lu_factor(a)[0], (a_s,)),
    "lu_solve": (lambda a, b: bsl.lu_solve(bsl.lu_factor(a), b), (a_s, b_s)),
}
# QR family: tall matrices, every mode of the public qr
t_s = jax.device_put(rng.standard_normal((8, 9, 5)), shard)
ops.update({
    "qr_reduced": (lambda t: bla.qr(t).Q, (t_s,)),
    "qr_r": (lambda t: bla.qr(t, mode="r"), (t_s,)),
    "qr_complete": (lambda t: bla.qr(t, mode="complete").Q, (t_s,)),
    "qr_raw": (lambda t: bla.qr(t, mode="raw")[0], (t_s,)),
    "scipy_qr": (lambda t: bsl.qr(t, mode="economic")[1], (t_s,)),
})
# Interleaved layout: 128 matrices in 4 chunks of 32, the data sharded along the chunk axis
g = rng.standard_normal((128, 5, 5))
a_il = il.to_interleaved(g @ np.swapaxes(g, -1, -2) + 5 * np.eye(5), 32)
l_il = il.cholesky(a_il)
b_il = il.to_interleaved(rng.standard_normal((128, 5, 3)), 32)
A_s, L_s, B_s = (jax.device_put(np.asarray(x.data), shard) for x in (a_il, l_il, b_il))
wrap = lambda d: il.Interleaved(d, (128,))  # noqa: E731
ops.update({
    "il_cholesky": (lambda a: il.cholesky(wrap(a)).data, (A_s,)),
    "il_cho_solve": (lambda c, b: il.cho_solve((wrap(c), True), wrap(b)).data, (L_s, B_s)),
    "il_solve": (lambda a, b: il.solve(wrap(a), wrap(b)).data, (A_s, B_s)),
    "il_solve_triangular": (lambda c, b: il.solve_triangular(wrap(c), wrap(b), lower=True, trans=1).data,
                            (L_s, B_s)),
})
for name, (fn, args) in ops.items():
    jitted = jax.jit(fn, out_shardings=shard)
    hlo = jitted.lower(*args).compile().as_text()
    found = [c for c in COLLECTIVES if c in hlo]
    assert not found, f"{name}: collectives {found} in the compiled HLO"
    assert "batchla_" in hlo, f"{name}: no custom call in the compiled HLO"
    out = jitted(*args)
    ref = fn(*(np.asarray(x) for x in args))
    np.testing.assert_allclose(np.asarray(out), np.asarray(ref), rtol=1e-12)
    assert len(out.sharding.device_set) == 4, f"{name}: output not sharded"
print("sharding ok")
