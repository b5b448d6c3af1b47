"""Benchmarks for jax_batchla (see bench/README.md)."""
