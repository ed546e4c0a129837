"""Benchmarks: what progressive disclosure saves (tokens) and costs (latency, memory).

``python -m benchmarks`` measures every section into ``benchmarks/results.json`` and writes
``BENCHMARKS.md`` and ``benchmarks/figures/`` from that file; ``--smoke`` is the quick run CI
uses; ``--from-json`` only re-renders (``__main__.py``). Dependencies point one way:
``results`` (the rows) <- ``measure`` (the measuring) and ``report`` (the writing, which
never imports ``measure``) <- ``run`` (plans, sections, merging) <- ``__main__``.
"""
