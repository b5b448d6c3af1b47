"""Best-of-rounds A/B table of the LU check programs' timings, one column a program.

    python3 -m bench.lu_ab_table BASE.txt OTHER.txt ...

Each file holds one program's timing output over its rounds (appended): check_lu_small
--timing-only ("f32 n=16 batch=... | getrf 326.6 us ... | gesv1 ...") or check_lu_blocked time
("| f64 |  24 | getrf   | batch | us | ..."). Prints a markdown table of each (dtype, n, op)'s best
time (us) per program and BASE's time / each other program's (above 1: faster than BASE).
"""
from __future__ import annotations

import pathlib
import re
import sys
from collections import defaultdict

SMALL_ROW = re.compile(r"^\s*(f32|f64) n=\s*(\d+) batch")
SMALL_OP = re.compile(r"\| (\w+)\s+([\d.]+) us")
BLOCKED_ROW = re.compile(r"^\| (f32|f64) \|\s+(\d+) \| (\w+)\s+\|\s+\d+ \|\s+([\d.]+) \|")


def parse(text: str) -> dict:
    best: dict = defaultdict(lambda: float("inf"))
    for line in text.splitlines():
        if m := SMALL_ROW.match(line):
            for op, us in SMALL_OP.findall(line):
                key = (m[1], int(m[2]), op)
                best[key] = min(best[key], float(us))
        elif m := BLOCKED_ROW.match(line):
            key = (m[1], int(m[2]), m[3])
            best[key] = min(best[key], float(m[4]))
    return best


def main(paths: list[str]) -> None:
    names = [pathlib.Path(p).stem for p in paths]
    runs = [parse(pathlib.Path(p).read_text()) for p in paths]
    print("| dtype | n | op | " + " | ".join(f"{n} us" for n in names) + " | "
          + " | ".join(f"{names[0]} / {n}" for n in names[1:]) + " |")
    print("|---|---:|---|" + "---:|" * (2 * len(names) - 1))
    for key in sorted(runs[0]):
        t = [r.get(key, float("nan")) for r in runs]
        print(f"| {key[0]} | {key[1]} | {key[2]} | " + " | ".join(f"{x:.1f}" for x in t) + " | "
              + " | ".join(f"{t[0] / x:.3f}" for x in t[1:]) + " |")


if __name__ == "__main__":
    if len(sys.argv) < 3:
        sys.exit(__doc__)
    main(sys.argv[1:])
