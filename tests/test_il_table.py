"""The interleaved tuning header is what bench/il_table.py writes (no hand edits), and its
override rows are all applied. After a whole-tuner run rewrites the header, either re-apply
the overrides (`python3 -m bench.il_table --overrides`) or drop the rows that the run superseded."""
import json
import pathlib
import sys

import pytest

_ROOT = str(pathlib.Path(__file__).resolve().parent.parent)  # bench/ is a package of the repository
if _ROOT not in sys.path:
    sys.path.insert(0, _ROOT)
from bench import il_table  # noqa: E402


def test_header_round_trips(tmp_path):
    table, chunks, default, source = il_table.read()
    out = tmp_path / "interleaved_tuning.h"
    il_table.write(table, chunks, default, source, path=out)
    assert out.read_text() == il_table.HEADER.read_text()


def test_every_override_is_applied():
    table, chunks, _, source = il_table.read()
    overrides = json.loads(il_table.OVERRIDES.read_text())
    want_table, want_chunks = dict(table), dict(chunks)
    summary = il_table.apply_overrides(want_table, want_chunks, overrides)
    assert want_table == table and want_chunks == chunks
    assert source.endswith(il_table.OVERRIDES_MARK + summary)
    assert all(r["evidence"] for r in overrides["rows"] + overrides["chunks"])


@pytest.mark.parametrize("variant", [
    {"kind": "full", "order": "top", "warps": 2},
    {"kind": "tile", "nb": 8, "order": "left", "warps": 2},
    {"kind": "shared", "nb": 4, "order": "right", "warps": 1},
    {"kind": "shared", "pad": 28, "nb": 4, "order": "left"},
    {"kind": "group", "nb": 4, "pad": 24, "order": "left", "warps": 1, "alt": 7},
    {"kind": "block", "pad": 40, "alt": 2},
])
def test_parse_inverts_spell(variant):
    assert il_table.parse_variant(il_table.spell(variant)) == variant


def test_parse_rejects_unknown():
    with pytest.raises(ValueError, match="unknown variant"):
        il_table.parse_variant("Grid(4, 2)")


def test_group_rows_run_their_n():
    # A lane-group shape (G, pad) has ceil(pad / G) row slots and runs n only with every padding
    # row in its last slot (GroupRuns in cuda/interleaved_variants.h; the header static_asserts it).
    table, _, _, _ = il_table.read()
    groups = [(key, v) for key, v in table.items() if v["kind"] == "group"]
    assert groups
    for (dtype, op, n), v in groups:
        g, pad = v["nb"], v["pad"]
        slots = -(-pad // g)
        assert (slots - 1) * g < n <= pad, (dtype, op, n, v)
