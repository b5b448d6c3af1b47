"""A/B of the blocked QR's panel width for qr mode 'r' (jax_batchla/_ops/qr_blocked.py): R of square
matrices at the bench's batch (256 MiB) with panels of PANEL columns, against the lowering the
library picks today and jnp.linalg.qr(mode='r'), in one process. err = max|R^T R - A^T A| /
max|A^T A|.

    PYTHONPATH=$PWD python3 -m bench.qr_panel_ab --n 128 256 512 --panels 32 64 --out results/x.json
"""
from __future__ import annotations

import argparse
import json

import jax
import jax.numpy as jnp
import numpy as np

import jax_batchla.linalg as bl
from bench.timing import time_jax
from jax_batchla._ops import qr_blocked


def gram_err(a, r):
    a, r = np.asarray(a, np.float64), np.asarray(r, np.float64)
    ata = np.swapaxes(a, -1, -2) @ a
    return float(np.max(np.abs(np.swapaxes(r, -1, -2) @ r - ata)) / np.max(np.abs(ata)))


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--n", type=int, nargs="+", default=[128, 256, 512])
    p.add_argument("--panels", type=int, nargs="+", default=[32, 64])
    p.add_argument("--dtypes", nargs="+", default=["float32", "float64"])
    p.add_argument("--out")
    args = p.parse_args()
    jax.config.update("jax_enable_x64", True)
    rows = []
    print("| dtype | n | batch | form | ms | x jnp | err |\n|---|---:|---:|---|---:|---:|---:|")
    for dt in args.dtypes:
        for n in args.n:
            batch = max(1, (256 << 20) // (n * n * np.dtype(dt).itemsize))
            a = jnp.asarray(np.random.default_rng(n).standard_normal((batch, n, n)), dt)
            forms = {"jnp": jax.jit(lambda x: jnp.linalg.qr(x, mode="r")),
                     "library": jax.jit(lambda x: bl.qr(x, mode="r"))}
            for w in args.panels:
                forms[f"panel {w}"] = jax.jit(lambda x, w=w: qr_blocked.factor(x, n, panel=w)[0])
            t_jnp = None
            for name, f in forms.items():
                s = time_jax(f, (a,), reps=10)["seconds"]
                t_jnp = s if name == "jnp" else t_jnp
                err = gram_err(a[:4], f(a)[:4])
                rows.append({"dtype": dt, "n": n, "batch": batch, "form": name, "seconds": s, "err": err})
                print(f"| {dt} | {n} | {batch} | {name} | {s * 1e3:.3f} | {t_jnp / s:.2f} | {err:.1e} |", flush=True)
    if args.out:
        with open(args.out, "w") as f:
            json.dump({"device": str(jax.devices()[0]), "rows": rows}, f, indent=1)


if __name__ == "__main__":
    main()
