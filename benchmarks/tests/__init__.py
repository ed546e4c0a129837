"""Tests of the benchmark code itself (rows, report sections, the resolution benchmark).

Kept beside the benchmarks so ``tests/`` never imports ``benchmarks/``; ``pytest`` runs
them with the rest (``testpaths`` in pyproject.toml).
"""
