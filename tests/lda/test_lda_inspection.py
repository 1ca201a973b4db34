"""Top words, coherence and export of a fitted LDA (#16 items 1, 2, 4): simplexsg.lda.inspection
and simplexsg.lda.export, checked against gensim called directly."""
import numpy as np
import pandas as pd
import pytest
from gensim.corpora import Dictionary
from gensim.matutils import Sparse2Corpus
from gensim.models import CoherenceModel, LdaModel
from sklearn.exceptions import NotFittedError

from simplexsg import LDA, SCIRLDA
from simplexsg.datasets import make_lda_corpus
from simplexsg.lda.export import pyldavis_data, to_gensim
from simplexsg.lda.inspection import (Coherence, coherence, feature_names, format_topics,
                                      top_words)

K, W = 4, 60
#: Words in reverse alphabetical order of their ids, so that an id <-> word mix-up (e.g. a
#: gensim Dictionary that sorts its words) changes the results.
WORDS = np.array([f"w{W - j:03d}" for j in range(W)], dtype=object)


@pytest.fixture(scope="module")
def corpus():
    X, topics, _ = make_lda_corpus(240, W, K, doc_length=40, doc_topic_prior=0.1,
                                   topic_word_prior=0.05, random_state=1)
    return X, topics


@pytest.fixture(scope="module")
def model(corpus):
    return SCIRLDA(K, max_iter=10, random_state=0).fit(corpus[0], id2word=dict(enumerate(WORDS)))


@pytest.fixture(scope="module")
def texts(corpus):
    """The documents as token lists: each word repeated by its count, in a seeded order."""
    X = corpus[0]
    rng = np.random.default_rng(0)
    return [list(rng.permutation(np.repeat(WORDS[row.indices], row.data))) for row in X]


def stub(components, **attributes):
    """An LDA with hand-set fitted attributes."""
    model = LDA()
    model.components_ = np.asarray(components, dtype=np.float64)
    for name, value in attributes.items():
        setattr(model, name, value)
    return model


# ---------------------------------------------------------------- top words
def test_top_words_sorted_pairs_with_ties_by_id():
    model = stub([[0.2, 0.5, 0.3, 0.0], [0.25, 0.25, 0.25, 0.25]],
                 vocabulary_=np.array(["a", "b", "c", "d"], dtype=object))
    assert top_words(model, 2) == [[("b", 0.5), ("c", 0.3)], [("a", 0.25), ("b", 0.25)]]
    assert format_topics(model, 3) == ('0: 0.500*"b" + 0.300*"c" + 0.200*"a"\n'
                                       '1: 0.250*"a" + 0.250*"b" + 0.250*"c"')


def test_words_from_vocabulary_else_feature_names_else_ids(corpus):
    X = corpus[0][:80]
    named = SCIRLDA(2, max_iter=2, random_state=0).fit(
        pd.DataFrame(X.toarray(), columns=[f"c{j}" for j in range(W)]))
    assert list(feature_names(named)) == [f"c{j}" for j in range(W)]
    bare = SCIRLDA(2, max_iter=2, random_state=0).fit(X)
    assert list(feature_names(bare)) == [str(j) for j in range(W)]
    top = top_words(bare, 3)[0]
    assert [w for w, _ in top] == [str(j) for j in np.argsort(-bare.components_[0])[:3]]


def test_top_words_of_a_fit_match_components(model):
    for topic, pairs in zip(model.components_, top_words(model, 10)):
        probabilities = [p for _, p in pairs]
        assert probabilities == sorted(probabilities, reverse=True)
        assert probabilities[0] == topic.max()
        assert [topic[list(WORDS).index(w)] for w, _ in pairs] == probabilities
    # gensim's print_topics format on the same topics
    gensim_text = "\n".join(f"{k}: {text}" for k, text in to_gensim(model).print_topics(K, 5))
    assert format_topics(model, 5) == gensim_text


@pytest.mark.parametrize("n", [0, W + 1, 2.0, True])
def test_bad_n(model, n):
    with pytest.raises(ValueError, match="n must be an integer"):
        top_words(model, n)


def test_unfitted_model_raises_not_fitted():
    for call in (lambda m: top_words(m), lambda m: to_gensim(m),
                 lambda m: coherence(m, np.ones((2, 3), dtype=int))):
        with pytest.raises(NotFittedError):
            call(LDA())


# ---------------------------------------------------------------- coherence
def gensim_coherence(model, measure, top_n, **data):
    """gensim called directly on the model's top words."""
    topics = [[w for w, _ in pairs] for pairs in top_words(model, top_n)]
    cm = CoherenceModel(topics=topics, coherence=measure, topn=top_n, processes=1, **data)
    return np.array(cm.get_coherence_per_topic())


def test_u_mass_from_counts_equals_gensim(model, corpus):
    X = corpus[0]
    dictionary = Dictionary.from_corpus([], id2word=dict(enumerate(WORDS)))
    expected = gensim_coherence(model, "u_mass", 10, dictionary=dictionary,
                                corpus=Sparse2Corpus(X, documents_columns=False))
    result = coherence(model, X)
    assert isinstance(result, Coherence)
    np.testing.assert_allclose(result.per_topic, expected, rtol=1e-12)
    assert result.mean == pytest.approx(expected.mean())
    # the same counts as bag-of-words documents, and as texts
    bow = list(Sparse2Corpus(X, documents_columns=False))
    np.testing.assert_allclose(coherence(model, bow).per_topic, expected, rtol=1e-12)


@pytest.mark.parametrize("measure", ["u_mass", "c_v", "c_npmi"])
def test_text_measures_equal_gensim(model, texts, measure):
    expected = gensim_coherence(model, measure, 8, texts=texts, dictionary=Dictionary(texts))
    result = coherence(model, texts, measure=measure, top_n=8)
    np.testing.assert_allclose(result.per_topic, expected, rtol=1e-10)


def test_u_mass_of_texts_equals_u_mass_of_their_counts(model, corpus, texts):
    np.testing.assert_allclose(coherence(model, texts).per_topic,
                               coherence(model, corpus[0]).per_topic, rtol=1e-12)


def test_fitted_topics_are_more_coherent_than_shuffled_ones(model, corpus):
    rng = np.random.default_rng(0)
    shuffled = stub(np.array([rng.permutation(t) for t in model.components_]))
    assert coherence(model, corpus[0]).mean > coherence(shuffled, corpus[0]).mean + 1


def test_coherence_errors(model, corpus, texts):
    X = corpus[0]
    with pytest.raises(ValueError, match="measure must be one of"):
        coherence(model, X, measure="c_w2v")
    with pytest.raises(ValueError, match="pass texts"):
        coherence(model, X, measure="c_v")
    with pytest.raises(ValueError, match="columns"):
        coherence(model, X[:, :-1])
    with pytest.raises(ValueError, match="vocabulary has 3 words, the model 60"):
        coherence(model, texts, measure="c_v", vocabulary=["a", "b", "c"])
    with pytest.raises(ValueError, match="never occur in the texts"):
        coherence(model, [["unrelated", "tokens"]], measure="c_v")
    with pytest.raises(TypeError, match="token lists"):
        coherence(model, ["w001 w002", "w003"], measure="c_v")
    renamed = [f"x{j}" for j in range(W)]
    with pytest.raises(ValueError, match="never occur in the texts"):
        coherence(model, texts, measure="c_v", vocabulary=renamed)


# ---------------------------------------------------------------- export
def test_to_gensim_topics_inference_and_coherence(model, corpus, tmp_path):
    X = corpus[0]
    lda = to_gensim(model)
    assert isinstance(lda, LdaModel)
    np.testing.assert_allclose(lda.get_topics(), model.components_, rtol=1e-12, atol=1e-15)
    assert [lda.id2word[j] for j in range(W)] == list(WORDS)
    bow = list(Sparse2Corpus(X, documents_columns=False))
    gensim_theta = np.array([[p for _, p in lda.get_document_topics(doc, minimum_probability=0)]
                             for doc in bow[:60]])
    np.testing.assert_allclose(gensim_theta.sum(axis=1), 1, rtol=1e-6)
    agree = gensim_theta.argmax(axis=1) == model.transform(X[:60]).argmax(axis=1)
    assert agree.mean() >= 0.9
    cm = CoherenceModel(model=lda, corpus=bow, coherence="u_mass", topn=10)
    np.testing.assert_allclose(cm.get_coherence_per_topic(), coherence(model, X).per_topic,
                               rtol=1e-12)
    lda.save(str(tmp_path / "lda.gensim"))
    loaded = LdaModel.load(str(tmp_path / "lda.gensim"))
    np.testing.assert_allclose(loaded.get_topics(), model.components_, rtol=1e-12, atol=1e-15)
    assert loaded.get_document_topics(bow[0]) == lda.get_document_topics(bow[0])


def test_to_gensim_priors(model):
    lda = to_gensim(model)
    np.testing.assert_array_equal(lda.alpha, np.full(K, model.doc_topic_prior_))
    np.testing.assert_array_equal(lda.eta, np.full(W, model.topic_word_prior_))


def test_pyldavis_data_shapes_and_sums(model, corpus):
    X = corpus[0][:50]
    data = pyldavis_data(model, X)
    assert set(data) == {"topic_term_dists", "doc_topic_dists", "doc_lengths", "vocab",
                         "term_frequency"}
    assert data["topic_term_dists"].shape == (K, W)
    assert data["doc_topic_dists"].shape == (50, K)
    np.testing.assert_allclose(data["topic_term_dists"].sum(axis=1), 1)
    np.testing.assert_allclose(data["doc_topic_dists"].sum(axis=1), 1)
    np.testing.assert_array_equal(data["doc_lengths"], np.asarray(X.sum(axis=1)).ravel())
    np.testing.assert_array_equal(data["term_frequency"], np.asarray(X.sum(axis=0)).ravel())
    assert data["vocab"] == list(WORDS)
    np.testing.assert_array_equal(data["doc_topic_dists"], model.transform(X))
    with pytest.raises(ValueError, match="columns"):
        pyldavis_data(model, X[:, :10])


def test_the_estimator_methods_are_the_functions(model, corpus, texts):
    X = corpus[0] if isinstance(corpus, tuple) else corpus
    assert model.top_words(4) == top_words(model, 4)
    assert model.format_topics(4) == format_topics(model, 4)
    np.testing.assert_array_equal(model.coherence(texts, "c_npmi", 5).per_topic,
                                  coherence(model, texts, "c_npmi", 5).per_topic)
    np.testing.assert_array_equal(model.to_gensim().get_topics(), to_gensim(model).get_topics())
    np.testing.assert_array_equal(model.pyldavis_data(X)["doc_topic_dists"],
                                  pyldavis_data(model, X)["doc_topic_dists"])
