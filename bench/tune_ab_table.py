"""A/B table of interleaved-tuner runs (bench/tune_ab_device_run.sh): one column a tuner binary.

    python3 -m bench.tune_ab_table DIR [BASE]

DIR holds <binary>_<read>_r<round>.jsonl, the JSON lines of `autotune_il` (bench/autotune/main.cu).
For every (dtype, op, n, read) it prints each binary's best time over all its variants, stages and
rounds (us), the variant that gave it, and, with BASE (a binary name), BASE's time / each binary's.
The same variant (kind, pad, alt, order, warps, chunk) is compared too: the median over the
variants both binaries timed, so a change that moves every variant shows even where the winner
differs.
"""
from __future__ import annotations

import json
import pathlib
import re
import statistics
import sys
from collections import defaultdict

NAME = re.compile(r"^(?P<bin>.+)_(?P<read>lower|upper)_r(?P<round>\d+)\.jsonl$")


def load(folder: pathlib.Path):
    best = defaultdict(dict)  # (dtype, op, n, read) -> bin -> (us, variant)
    per_variant = defaultdict(lambda: defaultdict(dict))  # key -> variant -> bin -> us
    bins: list[str] = []
    for f in sorted(folder.glob("*.jsonl")):
        m = NAME.match(f.name)
        if not m:
            continue
        if m["bin"] not in bins:
            bins.append(m["bin"])
        for line in f.read_text().splitlines():
            if not line.startswith("{"):
                continue
            r = json.loads(line)
            if r.get("record") != "timing" or "seconds" not in r or not r.get("ok"):
                continue
            key = (r["dtype"], r["op"], r["n"], m["read"])
            variant = (r["kind"], r["pad"], r["alt"], r["order"], r["warps"], r["c"])
            us = r["seconds"] * 1e6
            if us < best[key].get(m["bin"], (float("inf"),))[0]:
                best[key][m["bin"]] = (us, variant)
            per_variant[key][variant][m["bin"]] = min(us, per_variant[key][variant].get(m["bin"], float("inf")))
    return bins, best, per_variant


def main() -> None:
    folder = pathlib.Path(sys.argv[1])
    base = sys.argv[2] if len(sys.argv) > 2 else None
    bins, best, per_variant = load(folder)
    head = "| dtype | op | n | read | " + " | ".join(f"{b} us (variant)" for b in bins)
    if base:
        head += " | " + " | ".join(f"{base} / {b}: best, same variant (median)" for b in bins if b != base)
    head += " |"
    print(head)
    print("|" + "---|" * (head.count("|") - 1))
    for key in sorted(best):
        cells = [f"{best[key][b][0]:.1f} ({best[key][b][1][0]} p{best[key][b][1][1]} a{best[key][b][1][2]} "
                 f"w{best[key][b][1][4]} c{best[key][b][1][5]})" if b in best[key] else "-" for b in bins]
        if base and base in best[key]:
            for b in bins:
                if b == base or b not in best[key]:
                    continue
                ratios = [v[base] / v[b] for v in per_variant[key].values() if base in v and b in v]
                same = f"{statistics.median(ratios):.3f} ({len(ratios)})" if ratios else "-"
                cells.append(f"{best[key][base][0] / best[key][b][0]:.3f}, {same}")
        print(f"| {key[0]} | {key[1]} | {key[2]} | {key[3]} | " + " | ".join(cells) + " |")


if __name__ == "__main__":
    main()
