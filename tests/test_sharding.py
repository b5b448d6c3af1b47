"""Batch-sharded inputs stay sharded: no gather, under both partitioners (4 host CPU devices)."""

import os
import subprocess
import sys

import pytest


@pytest.mark.parametrize("partitioner", ["shardy", "gspmd"])
def test_batch_sharding_has_no_collectives(partitioner):
    script = os.path.join(os.path.dirname(__file__), "sharding_check.py")
    env = dict(os.environ, JAX_PLATFORMS="cpu")
    proc = subprocess.run([sys.executable, script, partitioner], env=env, capture_output=True, text=True,
                          timeout=600)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "sharding ok" in proc.stdout
