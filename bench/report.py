"""Markdown table and PNG plot from the benchmark rows."""
from __future__ import annotations

LIBS = ("ours", "jnp", "torch")


def _frac(r):
    if r is None:
        return "—"
    if r.get("error"):
        return "err"
    s = f"{r['roofline_fraction']:.3f}" if r["roofline_fraction"] >= 0.001 else f"{r['roofline_fraction']:.1e}"
    return s + (" NaN!" if r.get("has_nan") else "")


def _fmt(x, spec):
    return "—" if x is None else format(x, spec)


def markdown(rows: list[dict], meta: dict) -> str:
    peak = meta["peak_flops"]
    lines = [
        f"Device: {meta['device_kind']} · jax {meta['jax_version']} · ours = {meta['ours_impl']}"
        f" · {meta['date']}",
        f"Roofline: copy {meta['copy_bw'] / 1e9:.0f} GB/s (measured, read+write)"
        + (f", {peak / 1e12:.0f} TFLOP/s (constant)" if peak else ", no FLOP ceiling (memory only)"),
        "Cells ours/jnp/torch: fraction of roofline, max(bytes/copy_bw, flops/peak) / time.",
        "",
        "| op | dtype | n | batch | ours | jnp | torch | ours time | ours GB/s | speedup | max_rel_err |",
        "|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|",
    ]
    keys = list(dict.fromkeys((r["op"], r["dtype"], r["n"]) for r in rows))
    by = {(r["op"], r["dtype"], r["n"], r["lib"]): r for r in rows}
    for op, dt, n in keys:
        cell = {lib: by.get((op, dt, n, lib)) for lib in LIBS}
        ours = cell["ours"] if cell["ours"] and not cell["ours"].get("error") else None
        batch = next(r["batch"] for r in cell.values() if r)
        t = None if ours is None else (
            f"{ours['seconds'] * 1e6:.0f} µs" if ours["seconds"] < 1e-3 else f"{ours['seconds'] * 1e3:.2f} ms")
        lines.append(
            f"| {op} | {dt} | {n} | {batch} | {_frac(cell['ours'])} | {_frac(cell['jnp'])} | "
            f"{_frac(cell['torch'])} | {t or '—'} | {_fmt(ours and ours['gb_per_s'], '.0f')} | "
            f"{_fmt(ours and ours['speedup_vs_best_peer'], '.2f')} | "
            f"{_fmt(ours and ours['max_rel_err'], '.1e')} |")
    errs = [r for r in rows if r.get("error")]
    if errs:
        groups = {}                                  # same lib + message: one line
        for r in errs:
            groups.setdefault((r["lib"], r["error"]), []).append(f"{r['op']} {r['dtype']} n={r['n']}")
        lines += ["", "Errors:"]
        for (lib, msg), cases in list(groups.items())[:20]:
            where = ", ".join(cases[:3]) + (f" and {len(cases) - 3} more" if len(cases) > 3 else "")
            lines.append(f"- {lib} ({where}): {msg[:300]}")
        if len(groups) > 20:
            lines.append(f"- … {len(groups) - 20} more distinct errors (see JSON)")
    launch = [r for r in rows if r.get("note") and not r.get("error")]
    if launch:
        lines += ["", f"{len(launch)} rows took < 200 µs per isolated call: launch overhead may dominate "
                      "there (see `seconds_single` in the JSON)."]
    return "\n".join(lines) + "\n"


def plot(rows: list[dict], meta: dict, path) -> bool:
    """Roofline fraction vs n, one subplot per op, a line per lib × dtype. False if no matplotlib."""
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        return False
    ops = list(dict.fromkeys(r["op"] for r in rows))
    fig, axes = plt.subplots(1, len(ops), figsize=(4.2 * len(ops), 3.8), squeeze=False, sharey=True)
    colors = {"ours": "tab:red", "jnp": "tab:blue", "torch": "tab:orange"}
    styles = {"float32": "-", "float64": "--"}
    for ax, op in zip(axes[0], ops):
        for lib in LIBS:
            for dt in dict.fromkeys(r["dtype"] for r in rows):
                pts = sorted((r["n"], r["roofline_fraction"]) for r in rows
                             if r["op"] == op and r["lib"] == lib and r["dtype"] == dt
                             and not r.get("error") and r["roofline_fraction"] > 0)
                if pts:
                    ax.plot(*zip(*pts), styles.get(dt, ":"), marker="o", ms=3,
                            color=colors.get(lib), label=f"{lib} {dt}")
        ax.axhline(1.0, color="gray", lw=0.8)
        ax.set_xscale("log", base=2)
        ax.set_yscale("log")
        ax.set_title(op)
        ax.set_xlabel("n")
        ax.grid(True, which="both", alpha=0.3)
    axes[0][0].set_ylabel("fraction of roofline")
    axes[0][-1].legend(fontsize=7)
    fig.suptitle(f"{meta['device_kind']}: copy {meta['copy_bw'] / 1e9:.0f} GB/s, ours = {meta['ours_impl']}",
                 fontsize=9)
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)
    return True
