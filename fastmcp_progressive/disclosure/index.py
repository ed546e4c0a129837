"""The query's index: Okapi BM25 over one document per tool, a plural finding its singular.

A ``describe_tools`` query is ranked here (``search.py`` decides what a tool's document
says and which tools are documents). The index is a few flat arrays, not a server: about 12
bytes per (word, document) posting (4 of them each document's own word, for feedback) and
100 per distinct word (``size``), so LiveMCPBench's 527 tools keep 0.84 MB (1.6 KB a tool)
where the FastMCP index server it replaces kept about 13 KB a tool; it is built in a worker
thread (``search.py``), since 2,000 tools take about half a second.

It scores as FastMCP's ``BM25SearchTransform`` does (k1 1.5, b 0.75, its tokenizer: NFKC,
case folded, runs of two or more letters or digits; ties in document order; only documents
sharing a word), exactly so when built with no folding (``fold=lambda word: word``),
``stop=frozenset()`` and ``feedback=0``.
By default a query's word also finds the other forms of it: Harman's S-stemmer ("How effective is
suffixing?", JASIS 1991: three rules taking a plural's ending off) folds ``files`` and
``file`` into one, and a document scores, for each word of the query, the better of the
word as said and its folded form (counted as often as the form the document says most, its
idf over every document saying any form). So "write the files" finds ``write_file``, while
"search repositories" still finds ``search_repositories`` by the rarer plural rather than
by "repository", which nearly every tool of github-mcp-server says (folding every word
instead lost 3 of the 21 short queries of ``tests/disclosure/test_search.py``).

A task's text is full of words every tool says ("the", "to", "in"): a query leaves out
Lucene's 33 English stop words (``STOP_WORDS``, unless it says nothing else), so a long
text's many small scores do not outweigh its few telling words. And a task implies steps it
never names (geocode the address, write the file): the words the best matches share are
asked for too (pseudo-relevance feedback, as RM3 does: the ``FEEDBACK_WORDS`` that weigh
most in the ``FEEDBACK_DOCUMENTS`` best, by idf, together weighing as much as one word of
the query), which brings up the tools beside the best match. On LiveMCPBench's 44 public
task texts against its 527 tools (one query per text, 114 task-tool pairs, halved into two
folds by task to check each choice holds on both), a task's tool is in the top 5 for 46
pairs and in the top 10 for 54, against 44 and 50 with plurals alone (38 and 48 without):
stop words alone gave 42 and 54, feedback alone 45 and 51; each half (even and odd places)
gained (18/22 to 19/22, 26/28 to 27/32). Feedback that reordered the best matches too lost
4 of the 21 short queries of ``tests/disclosure/test_search.py``: they keep their places.
Snowball's English stemmer (a 2 MB dependency) gave 37 and 50 on every word, 39 and 48 as
the folded form; ranking a text's clauses apart and merging their rankings gave at best 44
and 52.

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
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

K1 = 1.5
B = 0.75
STOP_WORDS = frozenset((
    "a", "an", "and", "are", "as", "at", "be", "but", "by", "for", "if", "in", "into", "is",
    "it", "no", "not", "of", "on", "or", "such", "that", "the", "their", "then", "there",
    "these", "they", "this", "to", "was", "will", "with"))
"""Lucene's English stop words (``EnglishAnalyzer``'s default set): a query leaves them out."""
FEEDBACK_DOCUMENTS = 3
"""How many of the best matches a query's feedback words are taken from."""
FEEDBACK_WORDS = 10
"""How many words the best matches share are asked for beside the query's own (each weighs
a tenth of a query word: together, one)."""
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
    word that some other word folds to. Each document's own words, for feedback, are
    ``vocabulary[said[at]]`` for ``at`` in ``said[starts[document]:starts[document + 1]]``.
    A query leaves out ``stop`` and asks for ``feedback`` words of its best matches."""

    count: int
    spans: dict[str, tuple[int, int]]
    documents: array[int]
    frequencies: array[int]
    norms: array[float]
    forms: dict[str, tuple[str, ...]]
    fold: Callable[[str], str]
    size: int
    vocabulary: tuple[str, ...] = ()
    said: array[int] = field(default_factory=lambda: array("I"))
    starts: array[int] = field(default_factory=lambda: array("I", [0]))
    stop: frozenset[str] = STOP_WORDS
    feedback: int = FEEDBACK_WORDS

    @classmethod
    def build(cls, texts: Sequence[str], fold: Callable[[str], str] = singular, *,
              stop: frozenset[str] = STOP_WORDS, feedback: int = FEEDBACK_WORDS) -> Index:
        """The index of ``texts`` (documents are their positions)."""
        postings: dict[str, list[int]] = {}
        lengths: list[int] = []
        for position, text in enumerate(texts):
            words = terms(text)
            lengths.append(len(words))
            for word, times in Counter(words).items():  # in the order first said
                postings.setdefault(word, []).extend((position, times))
        average = sum(lengths) / len(lengths) if lengths else 0.0
        documents, frequencies = array("I"), array("I")
        spans: dict[str, tuple[int, int]] = {}
        forms: dict[str, tuple[str, ...]] = {}
        by_document: list[list[int]] = [[] for _ in texts]
        for number, (word, pairs) in enumerate(postings.items()):
            start = len(documents)
            documents.extend(pairs[0::2])
            frequencies.extend(pairs[1::2])
            spans[sys.intern(word)] = (start, len(documents))
            for position in pairs[0::2]:
                by_document[position].append(number)
            folded = fold(word)
            if folded != word:
                forms[folded] = (*forms.get(folded, ()), word)
        for folded, plurals in forms.items():
            forms[folded] = (folded, *plurals) if folded in spans else plurals
        norms = array("d", (K1 * (1 - B + B * length / average) if average else K1
                            for length in lengths))
        said, starts = array("I"), array("I", [0])
        if feedback:
            for numbers in by_document:
                said.extend(numbers)
                starts.append(len(said))
        vocabulary = tuple(spans) if feedback else ()
        size = (sys.getsizeof(spans) + sum(sys.getsizeof(w) + 64 for w in spans)
                + sys.getsizeof(forms) + sum(64 + 8 * len(f) for f in forms.values())
                + 4 * (len(documents) + len(frequencies)) + 8 * len(norms)
                + sys.getsizeof(vocabulary) + 4 * (len(said) + len(starts)))
        return cls(len(texts), spans, documents, frequencies, norms, forms, fold, size,
                   vocabulary, said, starts, stop, feedback)

    def rank(self, query: str) -> list[int]:
        """The documents sharing a word with ``query`` (or with its feedback words), best
        first (equal scores in document order). Each word of the query but a stop word
        counts once (``scores``); the ``FEEDBACK_DOCUMENTS`` best keep their places, and
        the ``feedback`` words they share that weigh most (``feedback_words``) add a
        ``feedback``-th of a word's score each to the others, ranking those after them: the
        best matches are what the words said found, the feedback only orders the rest."""
        said = list(dict.fromkeys(terms(query)))
        words = [word for word in said if word not in self.stop] or said
        scores = self.scores(dict.fromkeys(words, 1.0))
        ranked = sorted((d for d, score in scores.items() if score > 0),
                        key=lambda d: (-scores[d], d))
        if not self.feedback or not ranked:
            return ranked
        best = ranked[:FEEDBACK_DOCUMENTS]
        more = self.scores(dict.fromkeys(self.feedback_words(best, set(said)),
                                         1.0 / self.feedback))
        for document, score in more.items():
            scores[document] = scores.get(document, 0.0) + score
        kept = set(best)
        return best + sorted((d for d, score in scores.items() if score > 0 and d not in kept),
                             key=lambda d: (-scores[d], d))

    def scores(self, weights: dict[str, float]) -> dict[int, float]:
        """Each document's score for the words of ``weights``, each scored the better of
        two ways (by the word as said, and by every word of its folded form, its singular
        and plurals as one word), so a plural said finds the singular written, and a plural
        both say still counts as the rarer word it is; times its weight."""
        scores: dict[int, float] = {}
        folded_seen: set[str] = set()
        for word, weight in weights.items():
            said = self._scores((word,))
            folded = self.fold(word)
            forms = self.forms.get(folded, (folded,))
            if forms != (word,) and folded not in folded_seen:
                folded_seen.add(folded)
                for document, score in self._scores(forms).items():
                    if score > said.get(document, 0.0):
                        said[document] = score
            for document, score in said.items():
                scores[document] = scores.get(document, 0.0) + weight * score
        return scores

    def feedback_words(self, best: Sequence[int], asked: set[str]) -> list[str]:
        """The ``feedback`` words of the ``best`` documents that weigh most (a word's idf
        for each of them that says it; ties in the order the documents say them), neither
        asked already nor stop words."""
        weight: dict[str, float] = {}
        for document in best:
            for at in range(self.starts[document], self.starts[document + 1]):
                word = self.vocabulary[self.said[at]]
                if word not in asked and word not in self.stop:
                    start, end = self.spans[word]  # the documents that say it
                    weight[word] = weight.get(word, 0.0) + self._idf(end - start)
        return sorted(weight, key=lambda word: -weight[word])[:self.feedback]

    def _idf(self, found: int) -> float:
        """BM25's idf of a word ``found`` of the documents say."""
        return math.log((self.count - found + 0.5) / (found + 0.5) + 1.0)

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
        idf = self._idf(len(times))
        return {document: idf * (said * (K1 + 1)) / (said + self.norms[document])
                for document, said in times.items()}
