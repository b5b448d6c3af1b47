"""Sharding of every accelerated function (sharding_check.py, 4 host CPU devices, one fresh process
per partitioner): batch-sharded inputs under jit and shard_map compile to per-shard custom calls
with no collective; matrices split along rows/columns still give the unsharded results."""

import os
import subprocess
import sys

import pytest

from sharding_hlo import batchla_calls, collectives, is_scalar_all_reduce


@pytest.mark.parametrize("partitioner", ["shardy", "gspmd"])
def test_sharding(partitioner):
    script = os.path.join(os.path.dirname(__file__), "sharding_check.py")
    proc = subprocess.run([sys.executable, script, partitioner, "--platform", "cpu"],
                          capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "sharding ok" in proc.stdout


# The HLO reader decides what the check lets through: lstsq's allowance must stay one element wide.
_HLO = """
  %all-reduce = pred[] all-reduce(%or_reduce_fusion), channel_id=1, replica_groups=mesh['axis_0'=4]
  %ars = (f32[1]{0}, s32[]) all-reduce-start(%a, %b), channel_id=2
  %ag = f64[8,6,6]{2,1,0} all-gather(%p), channel_id=3, dimensions={0}
  %big = f64[2,5]{1,0} all-reduce(%x), channel_id=4, to_apply=%add
  %cp = pred[] collective-permute(%y), channel_id=5, source_target_pairs={{0,1}}
  %custom-call.1 = (f64[2,5,2]{2,1,0}, f64[2,5]{1,0}) custom-call(%p2, %p3), custom_call_target="batchla_lstsq"
  %custom-call.2 = f64[2,7,5]{1,2,0} custom-call(%w), custom_call_target="lapack_dgesdd_ffi"
  %all-gather-fusion = f64[2]{0} fusion(%q), kind=kLoop, calls=%all-gather-like_name
"""


def test_hlo_reader():
    found = collectives(_HLO)
    assert [op for op, _ in found] == ["all-reduce", "all-reduce", "all-gather", "all-reduce",
                                       "collective-permute"]
    assert [is_scalar_all_reduce(*c) for c in found] == [True, True, False, False, False]
    assert batchla_calls(_HLO) == [("batchla_lstsq", (2, 5, 2))]
