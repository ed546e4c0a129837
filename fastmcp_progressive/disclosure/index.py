"""The query's index: Okapi BM25 over one document per tool, words folded to their singular.

A ``describe_tools`` query is ranked here (``search.py`` decides what a tool's document
says and which tools are documents). The index is a few flat arrays, not a server: about
8 bytes per (word, document) posting and 100 per distinct word (``size``), so a 2,000-tool
catalog keeps about 2 MB where the FastMCP index server it replaces kept about 26 MB, and
it is built in a worker thread (``search.py``) since a large one takes a second.

It scores exactly as FastMCP's ``BM25SearchTransform`` does (k1 1.5, b 0.75, its
tokenizer: NFKC, case folded, runs of two or more letters or digits; ties in document
order; only documents sharing a word), the one difference being that every word, of a
document and of a query alike, is first folded by Harman's S-stemmer ("How effective is
suffixing?", JASIS 1991): three rules that take a plural's ending off (``ies`` to ``y``,
``es`` to ``e``, ``s`` to nothing; never ``us``, ``ss``, ``aies``, ``eies``, ``aes``,
``ees``, ``oes``), so "files" finds ``write_file`` and "addresses" a tool that geocodes an
"address". Measured on LiveMCPBench's 44 public tasks against its 527 tools (one query per
task text, through the real server), a task's tool is in the top 5 for 43 of 114 task-tool
pairs and the top 10 for 50, against 38 and 48 without it; Snowball's English stemmer (a
dependency of 2 MB) gave 38 and 51 there (``BENCHMARKS.md``, selection).

Example:
    ```python
    index = Index.build(["create_issue create issue ...", "merge_pull_request ..."])
    index.rank("create an issue")   # [0, ...]: document positions, best first
    ```
"""

from __future__ import annotations

import math
import re
import sys
import unicodedata
from array import array
from collections.abc import Callable, Sequence
from dataclasses import dataclass

K1 = 1.5
B = 0.75
_TOKEN = re.compile(r"[^\W_]{2,}")


def singular(word: str) -> str:
    """``word`` with a plural's ending taken off (Harman's S-stemmer, its first rule that
    applies): ``queries`` -> ``query``, ``files`` -> ``file``, ``status`` stays."""
    if word.endswith("ies") and not word.endswith(("eies", "aies")):
        return word[:-3] + "y"
    if word.endswith("es") and not word.endswith(("aes", "ees", "oes")):
        return word[:-1]
    if word.endswith("s") and not word.endswith(("us", "ss")):
        return word[:-1]
    return word


def terms(text: str, fold: Callable[[str], str] = singular) -> list[str]:
    """``text``'s words as the index counts them, in order: FastMCP's BM25 tokens, each
    folded (made singular)."""
    normalized = unicodedata.normalize("NFKC", text).casefold()
    folded = (fold(word) for word in _TOKEN.findall(normalized))
    return [word for word in folded if len(word) > 1]


def same(word: str) -> str:
    """No folding: an index built with it ranks exactly as FastMCP's BM25 does."""
    return word


@dataclass(frozen=True)
class Index:
    """BM25 postings of ``count`` documents: for each term, the documents saying it and how
    often, read from ``spans[term]`` (start, end) into ``documents`` and ``frequencies``;
    ``norms`` is each document's length part of the BM25 denominator; ``fold`` how its
    words, and a query's, are folded."""

    count: int
    spans: dict[str, tuple[int, int]]
    documents: array[int]
    frequencies: array[int]
    norms: array[float]
    size: int
    fold: Callable[[str], str] = singular

    @classmethod
    def build(cls, texts: Sequence[str], fold: Callable[[str], str] = singular) -> Index:
        """The index of ``texts`` (documents are their positions)."""
        postings: dict[str, list[int]] = {}
        lengths: list[int] = []
        for position, text in enumerate(texts):
            words = terms(text, fold)
            lengths.append(len(words))
            counted: dict[str, int] = {}
            for word in words:
                counted[word] = counted.get(word, 0) + 1
            for word, times in counted.items():
                postings.setdefault(word, []).extend((position, times))
        average = sum(lengths) / len(lengths) if lengths else 0.0
        documents, frequencies = array("I"), array("I")
        spans: dict[str, tuple[int, int]] = {}
        for word, pairs in postings.items():
            start = len(documents)
            documents.extend(pairs[0::2])
            frequencies.extend(pairs[1::2])
            spans[sys.intern(word)] = (start, len(documents))
        norms = array("d", (K1 * (1 - B + B * length / average) if average else K1
                            for length in lengths))
        size = (sys.getsizeof(spans) + sum(sys.getsizeof(w) + 64 for w in spans)
                + 4 * (len(documents) + len(frequencies)) + 8 * len(norms))
        return cls(len(texts), spans, documents, frequencies, norms, size, fold)

    def rank(self, query: str) -> list[int]:
        """The documents sharing a word with ``query``, best first (equal scores in
        document order); each word of the query counts once."""
        scores: dict[int, float] = {}
        for word in dict.fromkeys(terms(query, self.fold)):
            span = self.spans.get(word)
            if span is None:
                continue
            start, end = span
            found = end - start
            idf = math.log((self.count - found + 0.5) / (found + 0.5) + 1.0)
            for at in range(start, end):
                document, times = self.documents[at], self.frequencies[at]
                scores[document] = scores.get(document, 0.0) + (
                    idf * (times * (K1 + 1)) / (times + self.norms[document]))
        return sorted((d for d, score in scores.items() if score > 0),
                      key=lambda d: (-scores[d], d))
