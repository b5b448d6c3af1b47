"""Markdown table and PNG plots from the benchmark rows.

    python3 -m bench.report OUT.json IN.json [IN.json ...]

merges the rows of runs split over several commands (e.g. one per dtype, to fit a device time
limit) into OUT.json and writes OUT.md, OUT.png and, with interleaved rows, OUT-interleaved.png.
Each row keeps the roofline fraction of its own run; the header shows the first run's copy bandwidth.
"""
from __future__ import annotations

import json
import sys
from pathlib import Path

LIBS = ("ours", "ours_standard", "jnp", "torch")
COLORS = {"ours": "tab:red", "ours_standard": "tab:purple", "jnp": "tab:blue", "torch": "tab:orange"}
STYLES = {"float32": "-", "float64": "--"}
INTERLEAVED_PLOT_OPS = ("il_posv", "il_potrf", "il_potrs")   # issue 6's GFLOP/s + roofline figure


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
    libs = [lib for lib in LIBS if any(r["lib"] == lib for r in rows)]   # ours_standard: il ops only
    lines = [
        f"Device: {meta['device_kind']} · jax {meta['jax_version']} · ours = {meta['ours_impl']}"
        f" · {meta['date']}",
        f"Roofline: copy {meta['copy_bw'] / 1e9:.0f} GB/s (measured, read+write)"
        + (f", {peak / 1e12:.0f} TFLOP/s (constant)" if peak else ", no FLOP ceiling (memory only)"),
        f"Cells {'/'.join(libs)}: fraction of roofline, max(bytes/copy_bw, flops/peak) / time"
        + ("; ours_standard = our standard-layout kernel for an interleaved (il_) op." if "ours_standard" in libs
           else "."),
        "",
        f"| op | dtype | n | batch | {' | '.join(libs)} | ours time | ours GB/s | speedup | max_rel_err |",
        "|---|---|---:|---:|" + "---:|" * len(libs) + "---:|---:|---:|---:|",
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
            f"| {op} | {dt} | {n} | {batch} | {' | '.join(_frac(cell[lib]) for lib in libs)} | "
            f"{t or '—'} | {_fmt(ours and ours['gb_per_s'], '.0f')} | "
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
    for ax, op in zip(axes[0], ops):
        _lines(ax, rows, op, "roofline_fraction")
        ax.axhline(1.0, color="gray", lw=0.8)
        ax.set_xscale("log", base=2)
        ax.set_title(op)
    axes[0][0].set_ylabel("fraction of roofline")
    axes[0][-1].legend(fontsize=7)
    _finish(fig, plt, meta, path)
    return True


def plot_interleaved(rows: list[dict], meta: dict, path) -> bool:
    """Issue 6's figure, like seed 001's: GFLOP/s (top) and roofline fraction (bottom) vs n (linear)
    for each interleaved solver present, a line per lib (ours = interleaved, ours_standard, jnp,
    torch) × dtype. False if no matplotlib or no such rows."""
    ops = [op for op in INTERLEAVED_PLOT_OPS if any(r["op"] == op for r in rows)]
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        return False
    if not ops:
        return False
    fig, axes = plt.subplots(2, len(ops), figsize=(4.8 * len(ops), 7), squeeze=False, sharex=True)
    for col, op in enumerate(ops):
        for ax, metric, label in ((axes[0][col], "gflop_per_s", "GFLOP/s"),
                                  (axes[1][col], "roofline_fraction", "fraction of roofline")):
            _lines(ax, rows, op, metric)
            ax.set_ylabel(label)
        axes[0][col].set_title(f"{op} (ours = interleaved)")
        axes[1][col].axhline(1.0, color="gray", lw=0.8)
        axes[1][col].set_xlabel("n")
    axes[0][-1].legend(fontsize=7)
    _finish(fig, plt, meta, path)
    return True


def _lines(ax, rows, op, metric):
    """One line per lib × dtype of `metric` against n, log-y."""
    for lib in LIBS:
        for dt in dict.fromkeys(r["dtype"] for r in rows):
            pts = sorted((r["n"], r[metric]) for r in rows
                         if r["op"] == op and r["lib"] == lib and r["dtype"] == dt
                         and not r.get("error") and (r.get(metric) or 0) > 0)
            if pts:
                ax.plot(*zip(*pts), STYLES.get(dt, ":"), marker="o", ms=3, color=COLORS.get(lib),
                        label=f"{lib} {dt}")
    ax.set_yscale("log")
    ax.set_xlabel("n")
    ax.grid(True, which="both", alpha=0.3)


def _finish(fig, plt, meta, path):
    fig.suptitle(f"{meta['device_kind']}: copy {meta['copy_bw'] / 1e9:.0f} GB/s, ours = {meta['ours_impl']}",
                 fontsize=9)
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)


def main(out, inputs):
    runs = [json.loads(Path(p).read_text()) for p in inputs]
    meta = dict(runs[0]["meta"], merged_from=[str(p) for p in inputs])
    rows = [r for run in runs for r in run["rows"]]
    out = Path(out)
    out.write_text(json.dumps({"meta": meta, "rows": rows}, indent=1))
    md = markdown(rows, meta)
    out.with_suffix(".md").write_text(md)
    print(md)
    plot(rows, meta, out.with_suffix(".png"))
    plot_interleaved(rows, meta, out.with_name(out.stem + "-interleaved.png"))


if __name__ == "__main__":
    if len(sys.argv) < 3:
        sys.exit(__doc__)
    main(sys.argv[1], sys.argv[2:])
