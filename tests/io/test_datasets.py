"""Tests of the bundled corpus, the synthetic LDA generator and the UCI bag-of-words reader/writer.

Monte Carlo checks use Z = 5 standard errors (two-sided false-failure rate 6e-7 per assertion).
"""
import gzip
import runpy

import numpy as np
import pytest
import scipy.sparse as sp

from simplexsg.datasets import load_uci_bow, load_wiki_sample, make_lda_corpus, save_uci_bow

from helpers import ROOT
from helpers.stats import Z

EXPORT = ROOT / "corpora" / "export_wiki_sample.py"


def test_wiki_sample_matches_targets(wiki_sample):
    """The published counts of the sample: 12,623 words, 200 + 50 documents, ~226k training tokens."""
    assert wiki_sample.X_train.shape == (200, 12623) and wiki_sample.X_test.shape == (50, 12623)
    assert wiki_sample.X_train.dtype == wiki_sample.X_test.dtype == np.int64
    assert wiki_sample.X_train.sum() == 226463 and wiki_sample.X_test.sum() == 61741
    assert wiki_sample.vocabulary.shape == (12623,)
    assert np.all(wiki_sample.vocabulary[:-1] < wiki_sample.vocabulary[1:])  # sorted, unique
    X = sp.vstack([wiki_sample.X_train, wiki_sample.X_test])
    df = np.asarray((X > 0).sum(axis=0)).ravel()
    assert df.min() == 2 and df.max() <= 125
    assert X.sum(axis=1).min() >= 4
    assert "head500" in wiki_sample.description


def test_wiki_split_is_seeded(wiki_sample):
    again = load_wiki_sample()
    assert (again.X_test != wiki_sample.X_test).nnz == 0
    other = load_wiki_sample(n_test=30, random_state=1)
    assert other.X_test.shape[0] == 30 and other.X_train.shape[0] == 220
    assert other.X_train.sum() + other.X_test.sum() == 226463 + 61741
    with pytest.raises(ValueError, match="n_test"):
        load_wiki_sample(n_test=250)


def test_lda_corpus_shapes_and_positivity():
    X, topics, doc_topic = make_lda_corpus(50, 30, 4, random_state=0)
    assert sp.isspmatrix_csr(X) and X.dtype == np.int64 and X.shape == (50, 30)
    assert topics.shape == (4, 30) and doc_topic.shape == (50, 4)
    np.testing.assert_allclose(topics.sum(axis=1), 1.0)
    np.testing.assert_allclose(doc_topic.sum(axis=1), 1.0)
    again = make_lda_corpus(50, 30, 4, random_state=0)
    assert (again[0] != X).nnz == 0 and np.array_equal(again[1], topics)
    # priors so small that naive gamma draws are all 0.0 (a 0/0 row): still positive and finite
    _, tiny, tiny_docs = make_lda_corpus(200, 5, 3, doc_topic_prior=1e-3, topic_word_prior=1e-3,
                                         random_state=0)
    for p in (tiny, tiny_docs):
        assert np.all(np.isfinite(p)) and np.all(p > 0)
        np.testing.assert_allclose(p.sum(axis=1), 1.0)
    with pytest.raises(ValueError, match="topic_word_prior"):
        make_lda_corpus(5, 5, 2, topic_word_prior=0.0)
    with pytest.raises(ValueError, match="n_topics"):
        make_lda_corpus(5, 5, 0)


def test_lda_corpus_follows_the_model():
    """Document lengths have mean doc_length; given the topic proportions, the corpus word totals
    are sums of multinomials with mean sum_d n_d (doc_topic @ topics)_dw and variance <= mean."""
    X, topics, doc_topic = make_lda_corpus(2000, 50, 5, doc_length=60, doc_topic_prior=0.5,
                                           topic_word_prior=0.5, random_state=2)
    lengths = np.asarray(X.sum(axis=1)).ravel()
    assert abs(lengths.mean() - 60) <= Z * np.sqrt(60 / lengths.size)
    expected = lengths @ (doc_topic @ topics)
    observed = np.asarray(X.sum(axis=0)).ravel()
    assert np.all(np.abs(observed - expected) <= Z * np.sqrt(expected) + 1)


def test_uci_round_trip(tmp_path):
    X, _, _ = make_lda_corpus(40, 25, 3, doc_length=20, random_state=3)
    vocabulary = np.array([f"w{j}" for j in range(25)])
    save_uci_bow(X, tmp_path / "docword.t.txt", vocabulary, tmp_path / "vocab.t.txt")
    Y, vocab = load_uci_bow(tmp_path / "docword.t.txt", tmp_path / "vocab.t.txt")
    assert Y.dtype == np.int64 and Y.shape == X.shape and (Y != X).nnz == 0
    np.testing.assert_array_equal(vocab, vocabulary)
    with open(tmp_path / "docword.t.txt", "rb") as src:
        with gzip.open(tmp_path / "docword.t.txt.gz", "wb") as dst:
            dst.write(src.read())
    assert (load_uci_bow(tmp_path / "docword.t.txt.gz")[0] != X).nnz == 0


def test_uci_reader_rejects_malformed_files(tmp_path):
    path = tmp_path / "docword.bad.txt"

    def check(text, match):
        path.write_text(text)
        with pytest.raises(ValueError, match=match):
            load_uci_bow(path)

    check("2\n3\n3\n1 1 2\n2 3 1\n", "NNZ = 3, found 2 lines")
    check("2\n3\n2\n1 1 2\n2 4 1\n", "line 5: wordID 4 is not \\[1, 3\\]")
    check("2\n3\n2\n0 1 2\n2 3 1\n", "line 4: docID 0")
    check("2\n3\n2\n1 1 0\n2 3 1\n", "line 4: count 0")
    path.write_text("2\n3\n2\n1 1 2\n1 1 3\n")
    assert load_uci_bow(path)[0].toarray().tolist() == [[5, 0, 0], [0, 0, 0]]
    # any order of the lines, and other whitespace than single spaces, as np.loadtxt took
    for body in ("2 3 1\n1 1 2\n1 2 4\n", "2\t3 1\n1  1 2\r\n\n1 2 4\n"):
        path.write_text("2\n3\n3\n" + body)
        assert load_uci_bow(path)[0].toarray().tolist() == [[2, 4, 0], [0, 0, 1]]
    (tmp_path / "vocab.txt").write_text("a\nb\n")
    with pytest.raises(ValueError, match="2 words, but"):
        load_uci_bow(path, tmp_path / "vocab.txt")


def test_export_script_round_trip(tmp_path, wiki_sample):
    main = runpy.run_path(str(EXPORT))["main"]
    main(["--out", str(tmp_path)])
    X_train, vocabulary = load_uci_bow(tmp_path / "docword.wiki_train.txt",
                                       tmp_path / "vocab.wiki.txt")
    X_test, _ = load_uci_bow(tmp_path / "docword.wiki_test.txt")
    assert (X_train != wiki_sample.X_train).nnz == 0 and (X_test != wiki_sample.X_test).nnz == 0
    np.testing.assert_array_equal(vocabulary, wiki_sample.vocabulary)
