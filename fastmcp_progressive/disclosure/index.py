"""The query's index: Okapi BM25 over one document per tool, a plural finding its singular.

A ``describe_tools`` query is ranked here (``search.py`` decides what a tool's document
says and which tools are documents). The index is a few flat arrays, not a server: about
8 bytes per (word, document) posting and 100 per distinct word (``size``), so LiveMCPBench's
527 tools keep 0.75 MB (1.4 KB a tool) where the FastMCP index server it replaces kept about
13 KB a tool; it is built in a worker thread (``search.py``), since 2,000 tools take about
half a second.

It scores as FastMCP's ``BM25SearchTransform`` does (k1 1.5, b 0.75, its tokenizer: NFKC,
case folded, runs of two or more letters or digits; ties in document order; only documents
sharing a word), exactly so with ``fold=same``. By default a query's word also finds the
other forms of it: Harman's S-stemmer ("How effective is suffixing?", JASIS 1991: three
rules taking a plural's ending off) folds ``files`` and ``file`` into one, and a document
scores, for each word of the query, the better of the word as said and its folded form
(counted as often as the form the document says most, its idf over every document saying
any form). So "write the files" finds ``write_file``, while "search repositories" still
finds ``search_repositories`` by the rarer plural rather than by "repository", which nearly
every tool of github-mcp-server says (folding every word instead lost 3 of the 21 short
queries of ``tests/disclosure/test_search.py``). On LiveMCPBench's 44 public task texts
against its 527 tools (one query per text), a task's tool is in the top 5 for 44 of 114
task-tool pairs and in the top 10 for 50, against 38 and 48 without folding; Snowball's
English stemmer on every word (a 2 MB dependency) gave 38 and 51.

Example:
    ```python
    index = Index.build(["create_issue create issue ...", "merge_pull_request ..."])
    index.rank("create issues")   # [0, ...]: document positions, best first
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


def same(word: str) -> str:
    """No folding: an index built with it ranks exactly as FastMCP's BM25 does."""
    return word


def terms(text: str) -> list[str]:
    """``text``'s words as FastMCP's BM25 counts them, in order: NFKC, case folded, runs of
    two or more letters or digits."""
    return _TOKEN.findall(unicodedata.normalize("NFKC", text).casefold())


@dataclass(frozen=True)
class Index:
    """BM25 postings of ``count`` documents: for each word, the documents saying it and how
    often, read from ``spans[word]`` (start, end) into ``documents`` and ``frequencies``;
    ``norms`` is each document's length part of the BM25 denominator; ``forms`` the words
    of the index that ``fold`` makes one (``file``: ``file``, ``files``), for each folded
    word that some other word folds to."""

    count: int
    spans: dict[str, tuple[int, int]]
    documents: array[int]
    frequencies: array[int]
    norms: array[float]
    forms: dict[str, tuple[str, ...]]
    fold: Callable[[str], str]
    size: int

    @classmethod
    def build(cls, texts: Sequence[str], fold: Callable[[str], str] = singular) -> Index:
        """The index of ``texts`` (documents are their positions)."""
        postings: dict[str, list[int]] = {}
        lengths: list[int] = []
        for position, text in enumerate(texts):
            words = terms(text)
            lengths.append(len(words))
            counted: dict[str, int] = {}
            for word in words:
                counted[word] = counted.get(word, 0) + 1
            for word, times in counted.items():
                postings.setdefault(word, []).extend((position, times))
        average = sum(lengths) / len(lengths) if lengths else 0.0
        documents, frequencies = array("I"), array("I")
        spans: dict[str, tuple[int, int]] = {}
        forms: dict[str, tuple[str, ...]] = {}
        for word, pairs in postings.items():
            start = len(documents)
            documents.extend(pairs[0::2])
            frequencies.extend(pairs[1::2])
            spans[sys.intern(word)] = (start, len(documents))
            folded = fold(word)
            if folded != word:
                forms[folded] = (*forms.get(folded, ()), word)
        for folded, plurals in forms.items():
            forms[folded] = (folded, *plurals) if folded in spans else plurals
        norms = array("d", (K1 * (1 - B + B * length / average) if average else K1
                            for length in lengths))
        size = (sys.getsizeof(spans) + sum(sys.getsizeof(w) + 64 for w in spans)
                + sys.getsizeof(forms) + sum(64 + 8 * len(f) for f in forms.values())
                + 4 * (len(documents) + len(frequencies)) + 8 * len(norms))
        return cls(len(texts), spans, documents, frequencies, norms, forms, fold, size)

    def rank(self, query: str) -> list[int]:
        """The documents sharing a word with ``query``, best first (equal scores in
        document order). Each word of the query counts once, for each document the better
        of two scores: by the word as said, and by every word of its folded form (its
        singular and plurals, as one word); so a plural said finds the singular written,
        and a plural both say still counts as the rarer word it is."""
        scores: dict[int, float] = {}
        folded_seen: set[str] = set()
        for word in dict.fromkeys(terms(query)):
            said = self._scores((word,))
            folded = self.fold(word)
            forms = self.forms.get(folded, (folded,))
            if forms != (word,) and folded not in folded_seen:
                folded_seen.add(folded)
                for document, score in self._scores(forms).items():
                    if score > said.get(document, 0.0):
                        said[document] = score
            for document, score in said.items():
                scores[document] = scores.get(document, 0.0) + score
        return sorted((d for d, score in scores.items() if score > 0),
                      key=lambda d: (-scores[d], d))

    def _scores(self, words: Sequence[str]) -> dict[int, float]:
        """Each document's BM25 score for ``words`` counted as one word, said as often as
        the form it says most (a part of a document that says "file" and "files" says it
        once)."""
        times: dict[int, int] = {}
        for word in words:
            span = self.spans.get(word)
            if span is not None:
                for at in range(*span):
                    document = self.documents[at]
                    times[document] = max(times.get(document, 0), self.frequencies[at])
        found = len(times)
        idf = math.log((self.count - found + 0.5) / (found + 0.5) + 1.0)
        return {document: idf * (said * (K1 + 1)) / (said + self.norms[document])
                for document, said in times.items()}
