"""Fixtures shared by the test modules; the helpers (``Z``, batch means, exact references,
Dask faults...) are modules of ``tests/helpers/``.

Each fixture is module-scoped: every module that asks for one gets its own, built as that
module built it before, so no module sees another's changes to it.
"""
import pytest

from simplexsg.datasets import load_wiki_sample, make_lda_corpus


@pytest.fixture(scope="module")
def client():
    """A client of a local Dask cluster of 2 single-threaded worker processes (one cluster per
    module: the tests kill its workers). Skips where ``distributed`` is not installed."""
    pytest.importorskip("distributed")
    from helpers.dask_faults import local_client

    yield from local_client()


@pytest.fixture(scope="module")
def wiki_sample():
    """The bundled Wikipedia sample, ``load_wiki_sample()``: 200 training and 50 test documents
    over 12,623 words."""
    return load_wiki_sample()


@pytest.fixture(scope="module")
def three_topic_counts():
    """Counts (120, 40): 120 documents of about 30 tokens (Poisson) from 3 topics over 40 words
    (``make_lda_corpus``, seed 0)."""
    return make_lda_corpus(120, 40, 3, doc_length=30, random_state=0)[0]


@pytest.fixture(scope="module")
def four_topic_corpus():
    """``(X, topics, doc_topic)`` of ``make_lda_corpus`` (seed 0): counts (300, 60) of 300
    documents of about 40 tokens (Poisson) from 4 topics over 60 words, the topics (4, 60) and
    the documents' topic proportions (300, 4)."""
    return make_lda_corpus(300, 60, 4, doc_length=40, random_state=0)
