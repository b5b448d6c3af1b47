"""Read the two facts the sharding check needs out of compiled (partitioned) HLO text: which
collectives it runs, and the shapes our custom calls run on."""

from __future__ import annotations

import re

COLLECTIVES = ("all-gather", "all-to-all", "ragged-all-to-all", "collective-permute",
               "collective-broadcast", "all-reduce", "reduce-scatter")
# `%name = SHAPE op(` with an optional async -start/-done suffix; SHAPE may be a tuple.
_COLLECTIVE = re.compile(r"=\s+(?P<shape>.+?)\s+(?P<op>" + "|".join(COLLECTIVES) +
                         r")(?:-start|-done)?\(")
_BATCHLA_CALL = re.compile(r"=\s+(?P<shape>.+?)\s+custom-call\("
                           r".*custom_call_target=\"(?P<target>batchla_\w+)\"")
_ARRAY = re.compile(r"(?P<dtype>[a-z]\w*)\[(?P<dims>[\d,]*)\]")


def _arrays(shape: str) -> list[tuple[str, tuple[int, ...]]]:
    """[(dtype, dims)] of every array in an HLO shape (an array or a tuple of them)."""
    return [(m["dtype"], tuple(int(d) for d in m["dims"].split(",") if d))
            for m in _ARRAY.finditer(shape)]


def collectives(hlo: str) -> list[tuple[str, str]]:
    """[(op, shape)] of every collective instruction in `hlo`."""
    return [(m["op"], m["shape"]) for m in map(_COLLECTIVE.search, hlo.splitlines()) if m]


def is_scalar_all_reduce(op: str, shape: str) -> bool:
    """True for an all-reduce whose every operand is one element: what a batch-wide scalar
    decision (lstsq's rank predicate) costs under batch sharding, and nothing bigger."""
    arrays = _arrays(shape)
    return op == "all-reduce" and bool(arrays) and all(all(d == 1 for d in dims) for _, dims in arrays)


def batchla_calls(hlo: str) -> list[tuple[str, tuple[int, ...]]]:
    """[(target, dims of its first result)] of every custom call to one of our FFI targets."""
    calls = []
    for m in map(_BATCHLA_CALL.search, hlo.splitlines()):
        if m:
            calls.append((m["target"], _arrays(m["shape"])[0][1]))
    return calls
