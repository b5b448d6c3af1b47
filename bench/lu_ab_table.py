"""Best-of-rounds A/B table of the LU check programs' timings, one column a program.

    python3 -m bench.lu_ab_table BASE.txt OTHER.txt ...

Each file holds one program's timing output over its rounds (appended): check_lu_small
--timing-only ("f32 n=16 batch=... | getrf 326.6 us ... | gesv1 ...") or check_lu_blocked time
("| f64 |  24 | getrf   | batch | us | ..."). Prints bench/ab_timing_table.py's table: each (dtype,
op, n)'s best time (us) per program (the file's stem) and BASE's time / each other program's
(above 1: faster than BASE).
"""
from __future__ import annotations

import pathlib
import re
import sys
from collections import defaultdict

from bench.ab_timing_table import table

SMALL_ROW = re.compile(r"^\s*(f32|f64) n=\s*(\d+) batch")
SMALL_OP = re.compile(r"\| (\w+)\s+([\d.]+) us")
BLOCKED_ROW = re.compile(r"^\| (f32|f64) \|\s+(\d+) \| (\w+)\s+\|\s+\d+ \|\s+([\d.]+) \|")


def parse(text: str) -> dict:
    """(dtype, op, n) -> the best time (us) over the rounds in `text`."""
    best: dict = defaultdict(lambda: float("inf"))
    for line in text.splitlines():
        if m := SMALL_ROW.match(line):
            for op, us in SMALL_OP.findall(line):
                key = (m[1], op, int(m[2]))
                best[key] = min(best[key], float(us))
        elif m := BLOCKED_ROW.match(line):
            key = (m[1], m[3], int(m[2]))
            best[key] = min(best[key], float(m[4]))
    return dict(best)


def main(paths: list[str]) -> int:
    if len(paths) < 2:
        print(__doc__, file=sys.stderr)
        return 2
    programs = [pathlib.Path(p).stem for p in paths]
    best: dict = defaultdict(dict)  # (dtype, op, n) -> program -> us
    for program, path in zip(programs, paths):
        for key, us in parse(pathlib.Path(path).read_text()).items():
            best[key][program] = us
    print(table(programs, best, programs[0]))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
