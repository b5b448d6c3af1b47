"""Does il_posv's time depend on where its buffers sit in device memory? (bench/NOTES.md, "An
intermittent slowdown at n = 24"). For each of a few offsets, allocates a spacer of that many bytes,
then fresh inputs, and times il_posv on them; prints each input's device address beside the time.

    python3 -m bench.il_placement_probe [--case float32:24] [--offsets-mib 0,1,2,3,5,8,13,21,34,55]
"""
from __future__ import annotations

import argparse

import jax
import jax.numpy as jnp

jax.config.update("jax_enable_x64", True)

from bench.il_order_probe import il_case  # noqa: E402
from bench.timing import time_jax  # noqa: E402


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--case", default="float32:24")
    p.add_argument("--offsets-mib", default="0,1,2,3,5,8,13,21,34,55")
    args = p.parse_args()
    dtype, n = args.case.split(":")
    for off in (int(x) for x in args.offsets_mib.split(",")):
        spacer = jnp.zeros((off << 20,), jnp.uint8).block_until_ready() if off else None
        f, (a, b) = il_case(dtype, int(n))
        t = time_jax(f, (a, b))["seconds"] * 1e6
        addr = lambda x: x.data.unsafe_buffer_pointer() if hasattr(x, "data") else -1  # noqa: E731
        print(f"spacer {off:3d} MiB: A at {addr(a):#x} (mod 2 MiB {addr(a) % (2 << 20):#x}), "
              f"b at {addr(b):#x}: {t:.1f} us", flush=True)
        del a, b, spacer


if __name__ == "__main__":
    main()
