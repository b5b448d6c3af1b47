"""Best-of-rounds table of a standalone check program's --timing-only output, one column a program.

    python3 -m bench.ab_timing_table TIMING_ALL.txt [BASE]

TIMING_ALL.txt is what bench/qr_small_ab_device_run.sh returns: each program's timing file after a
"##### timing_<program>.txt" header, every round's lines "time <dtype> <op> n=<n> ... <t> ms ...".
Prints a markdown table of the best time (ms) of every (dtype, op, n) per program and, with BASE
(a program name, e.g. qrs_new), each program's speedup over it (BASE time / time).
"""
from __future__ import annotations

import re
import sys
from collections import defaultdict

HEADER = re.compile(r"^##### timing_(\S+)\.txt")
TIME = re.compile(r"^time (\S+) +(\S+) +n= *(\d+).*? ([\d.]+) ms")


def parse(text: str) -> tuple[list[str], dict]:
    programs: list[str] = []
    best: dict = defaultdict(dict)  # (dtype, op, n) -> program -> ms
    program = None
    for line in text.splitlines():
        if m := HEADER.match(line):
            program = m[1]
            programs.append(program)
        elif (m := TIME.match(line)) and program is not None:
            key, t = (m[1], m[2], int(m[3])), float(m[4])
            best[key][program] = min(t, best[key].get(program, float("inf")))
    return programs, best


def table(programs: list[str], best: dict, base: str | None) -> str:
    cols = programs + ([f"{p} x" for p in programs if p != base] if base else [])
    lines = ["| dtype | op | n | " + " | ".join(cols) + " |", "|---|---|---:|" + "---:|" * len(cols)]
    for key in sorted(best, key=lambda k: (k[1], k[0], k[2])):
        row = best[key]
        cells = [f"{row[p]:.3f}" if p in row else "" for p in programs]
        if base:
            cells += [f"{row[base] / row[p]:.2f}" if base in row and p in row else ""
                      for p in programs if p != base]
        lines.append(f"| {key[0]} | {key[1]} | {key[2]} | " + " | ".join(cells) + " |")
    return "\n".join(lines)


def main(argv: list[str]) -> int:
    if not 1 <= len(argv) <= 2:
        print(__doc__, file=sys.stderr)
        return 2
    with open(argv[0]) as f:
        programs, best = parse(f.read())
    base = argv[1] if len(argv) == 2 else None
    if base is not None and base not in programs:
        print(f"{base}: not among the programs {programs}", file=sys.stderr)
        return 2
    print(table(programs, best, base))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
