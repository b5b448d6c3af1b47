"""bench/lu_ab_table.py: it parses both check programs' timing formats and keeps each row's best."""
from __future__ import annotations

import pathlib
import sys

_ROOT = str(pathlib.Path(__file__).resolve().parent.parent)  # bench/ is a package of the repository
if _ROOT not in sys.path:
    sys.path.insert(0, _ROOT)
from bench import lu_ab_table  # noqa: E402

SMALL = """\
== timing (256 MiB of input, median of 10; fraction = ...)
  f32 n=16 batch=  262144 | getrf   326.6 us   1750 GB/s 0.41 | gesv1   333.8 us    908 GB/s 0.21
  f32 n=16 batch=  262144 | getrf   320.1 us   1786 GB/s 0.42 | gesv1   340.0 us    891 GB/s 0.21
"""
BLOCKED = """\
| f64 |  24 | getrf   |  58254 |     334.8 |  1636.7 |   1603.3 | 0.386 |
| f64 |  24 | getrf   |  58254 |     337.5 |  1623.8 |   1590.7 | 0.383 |
| f64 |  24 | slogdet |  58254 |     302.6 |   887.1 |   1774.2 | 0.209 |
"""


def test_parse_small_keeps_the_best_round():
    best = lu_ab_table.parse(SMALL)
    assert best == {("f32", "getrf", 16): 320.1, ("f32", "gesv1", 16): 333.8}


def test_parse_blocked_keeps_the_best_round():
    best = lu_ab_table.parse(BLOCKED)
    assert best == {("f64", "getrf", 24): 334.8, ("f64", "slogdet", 24): 302.6}


def test_table_ratio_is_base_over_other(tmp_path, capsys):
    base, other = tmp_path / "base.txt", tmp_path / "new.txt"
    base.write_text(BLOCKED)
    other.write_text(BLOCKED.replace("334.8", "167.4"))
    assert lu_ab_table.main([str(base), str(other)]) == 0
    row = next(line for line in capsys.readouterr().out.splitlines() if "| getrf |" in line)
    assert row.split("|")[-2].strip() == "2.00"
