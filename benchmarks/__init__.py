"""Benchmarks: what progressive disclosure saves (tokens) and costs (latency, memory).

Run ``python -m benchmarks`` from the repository root for the full suite (writes
``BENCHMARKS.md`` and ``benchmarks/figures/*.png``), or ``python -m benchmarks --smoke``
for the quick run CI uses so the suite never rots. See ``__main__.py`` for options.

Modules, one job each:

- ``corpus`` loads the real tool catalogs; ``synthetic`` makes large fake ones;
- ``replay`` turns a catalog into FastMCP servers (plain, ours, search transforms);
- ``fixtures`` writes description files for the cache and file-edit measurements;
- ``scenarios`` names the tools a typical session fetches, per catalog;
- ``tokens`` counts o200k_base tokens the way the report defines them;
- ``timing`` times plain and ours alternately and summarizes samples;
- ``token_bench`` / ``latency_bench`` / ``scale_bench`` measure sections 1, 2 and 3;
- ``machine`` describes the host; ``report`` and ``plots`` write the results.
"""
