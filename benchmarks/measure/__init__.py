"""Measuring: each module times or counts one family of figures into ``benchmarks.results``.

``catalogs`` (what is replayed), ``servers`` (how it is served and reached) and ``timing``
(plain against ours, alternately) are shared; then one module per section: ``tokens`` and
``ranking`` (1), ``hosts``, ``cost`` (2), ``scale`` (3), ``scaling`` (4), ``gateway`` (5),
``proxy_start`` (6), ``resolve`` (7), ``hostile`` (8). Imports only ``benchmarks.results``
from the rest of the benchmarks, never ``benchmarks.report``.
"""
