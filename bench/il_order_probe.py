"""Does an il_posv case run slower after some other kernel ran? (bench/NOTES.md, "An intermittent
slowdown at n = 24"). Times a probe case (dtype, n) after each of a few preceding workloads, the
probe's own time first and last as the baseline, all in one process.

    python3 -m bench.il_order_probe [--probe float32:24] [--reps 20]
"""
from __future__ import annotations

import argparse

import jax

jax.config.update("jax_enable_x64", True)

import jax_batchla as jb  # noqa: E402
from bench.ops import OPS, make_inputs  # noqa: E402
from bench.timing import time_jax  # noqa: E402

MIB = 1 << 20


def _posv_inputs(dtype: str, n: int):
    """The bench's posv inputs (A, b) for a 256 MiB batch of A."""
    batch = (256 * MIB) // (n * n * jax.numpy.dtype(dtype).itemsize)
    inp = make_inputs(batch, n, dtype)
    return tuple(inp[k] for k in OPS["posv"].args)


def il_case(dtype: str, n: int):
    a, b = _posv_inputs(dtype, n)
    a = jb.interleaved.to_interleaved(a)
    b = jb.interleaved.to_interleaved(b, a.chunk)
    f = jax.jit(lambda a, b: jb.interleaved.solve(a, b, assume_a="pos"))
    return f, (a, b)


def std_case(dtype: str, n: int):
    return jax.jit(lambda *x: OPS["posv"].ours(jb, *x)), _posv_inputs(dtype, n)


def jnp_case(dtype: str, n: int):
    return jax.jit(OPS["posv"].jnp), _posv_inputs(dtype, n)


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--probe", default="float32:24")
    p.add_argument("--reps", type=int, default=20)
    args = p.parse_args()
    dt, n = args.probe.split(":")
    probe = il_case(dt, int(n))
    before = {
        "il float32 n=64": il_case("float32", 64),
        "il float64 n=64": il_case("float64", 64),
        "il float32 n=56": il_case("float32", 56),
        "standard posv float32 n=64": std_case("float32", 64),
        "jnp solve float32 n=64": jnp_case("float32", 64),
        "jnp solve float32 n=56": jnp_case("float32", 56),
    }

    def t(case):
        return time_jax(case[0], case[1], reps=args.reps)["seconds"] * 1e6

    print(f"probe il_posv {args.probe}: alone {t(probe):.1f} us")
    for name, case in before.items():
        tb = t(case)
        print(f"after {name} ({tb:.1f} us): probe {t(probe):.1f} us")
    print(f"probe again: {t(probe):.1f} us")


if __name__ == "__main__":
    main()
