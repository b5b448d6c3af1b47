"""Run by test_hardening.test_command_buffers in a fresh process (XLA_FLAGS set by the caller):
python command_buffer_check.py {on|off} OUT.npz

Every op of test_hardening.OPS runs inside a jitted lax.fori_loop (3 steps, the matrix perturbed
per step so no step is hoisted out). The results go to OUT.npz for the caller to compare across
the two modes; then, with mode 'on', the optimized HLO must hold our custom calls inside a
command-buffer computation (or one it calls), with 'off' in none (else exit status 1)."""

import os
import re
import sys

import jax

jax.config.update("jax_enable_x64", True)

import numpy as np  # noqa: E402
from jax import lax  # noqa: E402

sys.path.insert(0, os.path.dirname(__file__))
from test_hardening import IL_MAX_N, OPS, _inputs  # noqa: E402

SIZES = [12, 100]


def looped(fn):
    def run(a, b):
        def step(i, acc):
            out = fn(a * (1 + i.astype(a.dtype) / 64), b)
            return jax.tree_util.tree_map(lambda s, x: s + x.astype(s.dtype), acc, out)

        zeros = jax.tree_util.tree_map(lambda x: np.zeros(x.shape, x.dtype), jax.eval_shape(fn, a, b))
        return lax.fori_loop(0, 3, step, zeros)
    return jax.jit(run)


def computations(hlo):
    """{name: body text} of an HLO module's text."""
    comps, name = {}, None
    for line in hlo.splitlines():
        head = re.match(r"^(?:ENTRY )?%?([\w.\-]+) .*\{\s*$", line)
        if head:
            name = head.group(1)
            comps[name] = []
        elif name is not None:
            comps[name].append(line)
    return {k: "\n".join(v) for k, v in comps.items()}


def custom_call_in_command_buffer(hlo):
    """True if a computation named command_buffer* reaches a batchla_ custom call."""
    comps = computations(hlo)
    todo = [c for c in comps if c.startswith("command_buffer")]
    seen = set()
    while todo:
        c = todo.pop()
        if c in seen or c not in comps:
            continue
        seen.add(c)
        if 'custom_call_target="batchla_' in comps[c]:
            return True
        todo += re.findall(r"(?:to_apply|body|condition|calls|branch_computations)=\{?%?([\w.\-]+)", comps[c])
        todo += re.findall(r"%([\w.\-]+)", " ".join(re.findall(r"branch_computations=\{([^}]*)\}", comps[c])))
    return False


def main(mode, path):
    results, mismatches = {}, []
    for name, (fn, kind) in OPS.items():
        for n in SIZES:
            if name.startswith("il_") and n > IL_MAX_N:
                continue
            for dtype in (np.float32, np.float64):
                a, b = _inputs(kind, n, 37, dtype)
                f = looped(fn)
                hlo = f.lower(a, b).compile().as_text()
                inside = custom_call_in_command_buffer(hlo)
                if inside != (mode == "on"):
                    if not mismatches:  # what the first such program has, shown at the end
                        evidence = [ln.strip()[:200] for ln in hlo.splitlines()
                                    if re.search(r"command_buffer|batchla_|while\(|^\S.*\{$", ln)][:40]
                    mismatches.append(f"{name} n={n} {np.dtype(dtype).name}")
                for i, leaf in enumerate(jax.tree_util.tree_leaves(f(a, b))):
                    results[f"{name}-{n}-{np.dtype(dtype).name}-{i}"] = np.asarray(leaf)
                print(f"{name} n={n} {np.dtype(dtype).name}: ok (command buffer: {inside})", flush=True)
    np.savez(path, **results)
    if mismatches:  # after saving: the caller still compares the results
        print("\n".join(["HLO lines of the first mismatch:"] + evidence))
        raise SystemExit(f"custom call inside a command buffer != (mode == 'on') with command buffers "
                         f"{mode} for {len(mismatches)} programs, e.g. {mismatches[:3]}")


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2])
