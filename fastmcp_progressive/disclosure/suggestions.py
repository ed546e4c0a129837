"""The ``available_tools`` of an unknown name (spec v2.1 section 6.3): the closest visible names.

A read naming a tool the caller cannot find gets, in that tool's error entry, up to
``MAX_SUGGESTIONS`` names the caller's own ``tools/list`` shows, closest first, so a typo
(``create_invoce``) or a wrong case or separator (``Create-Invoice``) finds its tool. Three
rules keep it safe and cheap:

- **only visible names**: the candidates are the caller's listing (``Catalog.names``), so a
  name the caller may not see is never suggested;
- **hidden equals unknown**: the answer is a function of the asked name and the visible
  names alone, computed the same way for a hidden and a nonexistent name, so neither its
  content nor its cost tells them apart;
- **bounded**: at most ``MAX_SUGGESTIONS`` names whatever the catalog, and the asked name is
  cut to ``MAX_QUERY_CHARS`` before matching. A listing is indexed by character bigram
  once (the last ``_INDEXES_KEPT`` distinct listings are kept); an asked name then costs a
  count over the postings of its own bigrams (at most the listing's bigrams) and
  ``difflib`` on the best ``SHORTLIST`` only. ``docs/listing.md`` gives the numbers at 10,000 tools.

Example:
    ```python
    closest("create_invoce", ["list_invoices", "create_invoice", "ping"])
    # ['create_invoice', 'list_invoices', 'ping']
    ```
"""

from __future__ import annotations

import difflib
import heapq
import threading
from collections import Counter
from collections.abc import Sequence
from itertools import chain

from cachetools import LRUCache

MAX_SUGGESTIONS = 10
"""The most names one unknown name's ``available_tools`` carries."""
MAX_QUERY_CHARS = 64
"""How much of an asked name is compared (a tool name longer than this still matches on it)."""
POOL = 20 * MAX_SUGGESTIONS
"""How many names sharing the most bigrams with the asked one are scored (Dice)."""
SHORTLIST = 3 * MAX_SUGGESTIONS
"""How many Dice leaders ``difflib`` ranks."""
_INDEXES_KEPT = 4

_SEPARATORS = str.maketrans({"-": "_", " ": "_", ".": "_", "/": "_", ":": "_"})


def _normal(name: str) -> str:
    """Case and separator folded: ``Create-Invoice`` and ``create_invoice`` read the same."""
    return name[:MAX_QUERY_CHARS].casefold().translate(_SEPARATORS)


def _bigrams(normal: str) -> frozenset[str]:
    padded = f"\x00{normal}\x01"  # the first and last letters weigh like the others
    return frozenset(padded[i:i + 2] for i in range(len(padded) - 1))


class _Index:
    """One visible listing, ready to rank: each name's folded form and bigram count, and
    for every bigram the positions of the names holding it."""

    def __init__(self, names: tuple[str, ...]) -> None:
        self.names = names
        self.normals = [_normal(name) for name in names]
        self.sizes: list[int] = []
        self.postings: dict[str, list[int]] = {}
        for i, normal in enumerate(self.normals):
            grams = _bigrams(normal)
            self.sizes.append(len(grams))
            for gram in grams:
                self.postings.setdefault(gram, []).append(i)
        self.common = max(64, len(names) // 8)

    def closest(self, asked: str, limit: int) -> list[str]:
        """Up to ``limit`` names, closest to ``asked`` first."""
        query = _normal(asked)
        grams = _bigrams(query)
        # Dice coefficient on bigrams: a typo keeps most of them. The postings touched are
        # at most the listing's own bigrams, whatever the asked name.
        held = [self.postings[g] for g in grams if g in self.postings]
        # bigrams most names hold ("e_", "_s") tell little and cost most: counted only
        # when the asked name has too few others
        telling = [p for p in held if len(p) <= self.common]
        shared = Counter(chain.from_iterable(telling if len(telling) >= 3 else held))
        size, sizes = len(grams), self.sizes
        pool = shared.most_common(POOL) if len(shared) > POOL else shared.items()
        leaders = heapq.nsmallest(max(SHORTLIST, limit), pool, key=lambda item: (
            -2 * item[1] / (size + sizes[item[0]]), item[0]))
        matcher = difflib.SequenceMatcher(autojunk=False)
        matcher.set_seq2(query)
        ranked: list[tuple[float, int]] = []
        for i, _ in leaders:
            normal = self.normals[i]
            matcher.set_seq1(normal)
            ranked.append((-((normal == query) + matcher.ratio()), i))
        ranked.sort()
        chosen = [i for _, i in ranked[:limit]]
        if len(chosen) < limit:  # nothing in common with the rest: listing order
            taken = set(chosen)
            chosen += [i for i in range(len(self.names)) if i not in taken][: limit - len(chosen)]
        return [self.names[i] for i in chosen]


class Suggestions:
    """Ranks visible names by closeness to an asked one. The index of the last few distinct
    listings is kept (callers mostly share a listing), so a read pays for it once."""

    def __init__(self) -> None:
        self._indexes: LRUCache[tuple[str, ...], _Index] = LRUCache(maxsize=_INDEXES_KEPT)
        self._lock = threading.Lock()

    def closest(self, asked: str, visible: Sequence[str], limit: int = MAX_SUGGESTIONS
                ) -> list[str]:
        """Up to ``limit`` names of ``visible``, closest to ``asked`` first (ties: listing
        order). Only ``visible`` names are ever returned."""
        if limit <= 0 or not visible:
            return []
        key = tuple(visible)
        with self._lock:
            index = self._indexes.get(key)
        if index is None:
            index = _Index(key)
            with self._lock:
                self._indexes[key] = index
        return index.closest(asked, limit)  # an index is never changed once built
