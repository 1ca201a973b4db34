"""What a topic modeller reads after a fit: each topic's top words, as pairs or as gensim's
``print_topics`` text, and their coherence through gensim's ``CoherenceModel`` (Mimno et al.
2011's u_mass; Röder, Both & Hinneburg 2015's c_v, c_uci, c_npmi).

Every function takes a fitted ``LDA`` (anything with ``components_``, the (K, W) topics whose
rows sum to 1) as its first argument; words come from ``vocabulary_``, else
``feature_names_in_``, else the column ids as strings.
"""
from collections import Counter
from typing import NamedTuple

import numpy as np
from sklearn.utils.validation import check_is_fitted

from ..corpus import BowStream, as_corpus

#: Measures that need token lists (a sliding window, or co-occurrence in documents).
TEXT_MEASURES = ("c_v", "c_uci", "c_npmi")
MEASURES = ("u_mass",) + TEXT_MEASURES


class Coherence(NamedTuple):
    """Topic coherence: ``per_topic`` (K,) scores and their ``mean`` (higher is better)."""
    per_topic: np.ndarray
    mean: float


def feature_names(model):
    """The model's (W,) words as an object array of str: ``vocabulary_``, else
    ``feature_names_in_`` (scikit-learn's column names), else the ids "0", "1", ...."""
    check_is_fitted(model, "components_")
    for name in ("vocabulary_", "feature_names_in_"):
        words = getattr(model, name, None)
        if words is not None:
            return np.array([str(w) for w in words], dtype=object)
    return np.array([str(j) for j in range(model.components_.shape[1])], dtype=object)


def _check_top_n(model, n):
    check_is_fitted(model, "components_")
    n_words = model.components_.shape[1]
    if isinstance(n, bool) or not isinstance(n, (int, np.integer)) or not 1 <= n <= n_words:
        raise ValueError(f"n must be an integer in [1, {n_words}] (the vocabulary size), "
                         f"got {n!r}")
    return int(n)


def top_word_ids(model, n=10):
    """(K, n) word ids of each topic's n most probable words, most probable first (ties: the
    smaller id first)."""
    n = _check_top_n(model, n)
    return np.argsort(-model.components_, axis=1, kind="stable")[:, :n]


def top_words(model, n=10):
    """Each topic's n most probable words: a list of K lists of ``(word, probability)`` pairs,
    most probable first, like gensim's ``show_topic`` and tomotopy's ``get_topic_words``."""
    ids = top_word_ids(model, n)
    words = feature_names(model)
    return [[(words[j], float(p)) for j, p in zip(row, topic[row])]
            for row, topic in zip(ids, model.components_)]


def format_topics(model, n=10, decimals=3):
    """The top words as text, one line per topic, in gensim's ``print_topics`` format:
    ``0: 0.025*"word" + 0.019*"other" + ...``."""
    return "\n".join(f"{k}: " + " + ".join(f'{p:.{decimals}f}*"{w}"' for w, p in topic)
                     for k, topic in enumerate(top_words(model, n)))


def gensim_dictionary(words):
    """A gensim ``Dictionary`` whose id j is ``words[j]`` (the words must be distinct)."""
    from gensim.corpora import Dictionary

    words = [str(w) for w in words]
    if len(set(words)) != len(words):
        repeated = sorted(w for w, c in Counter(words).items() if c > 1)[:5]
        raise ValueError(f"the vocabulary repeats words ({', '.join(map(repr, repeated))}): "
                         "gensim needs distinct words")
    return Dictionary.from_corpus([], id2word=dict(enumerate(words)))


def is_texts(X):
    """True when X is a list of token lists (documents as lists of str)."""
    if not isinstance(X, (list, tuple)):
        return False
    first = next((doc for doc in X if len(doc)), None)
    return first is not None and not isinstance(first, str) and isinstance(first[0], str)


def coherence(model, X_or_texts, measure="u_mass", top_n=10, vocabulary=None, processes=1):
    """Coherence of each topic's ``top_n`` words by gensim's ``CoherenceModel``.

    Parameters
    ----------
    model : fitted LDA
    X_or_texts : counts (n_docs, W) (scipy.sparse, array-like, or bag-of-words documents,
        whose columns are the model's words), or texts: a list of token lists
        (``measure`` "u_mass" counts document co-occurrences in either; "c_v", "c_uci" and
        "c_npmi" slide a window over word order, so they need texts).
    measure : {"u_mass", "c_v", "c_uci", "c_npmi"}
    top_n : int, words per topic.
    vocabulary : (W,) words, optional, for texts: the model's words by default
        (``feature_names``); a model fitted without names needs it. Counts match by column.
    processes : int, gensim's worker processes for the text measures (1: none).

    Returns
    -------
    Coherence(per_topic (K,), mean)
    """
    if measure not in MEASURES:
        raise ValueError(f"measure must be one of {MEASURES}, got {measure!r}")
    ids = top_word_ids(model, top_n)
    if isinstance(X_or_texts, (list, tuple)) and X_or_texts and isinstance(X_or_texts[0], str):
        raise TypeError("texts must be token lists (lists of str), not strings: tokenize them")
    if is_texts(X_or_texts):
        cm = _text_coherence(ids, _vocabulary(model, vocabulary), X_or_texts, measure,
                             processes)
    elif measure in TEXT_MEASURES:
        raise ValueError(f"measure {measure!r} slides a window over word order: pass texts "
                         "(a list of token lists), not counts")
    else:
        cm = _count_coherence(ids, model.components_.shape[1], X_or_texts)
    per_topic = np.asarray(cm.get_coherence_per_topic(), dtype=np.float64)
    return Coherence(per_topic, float(per_topic.mean()))


def _vocabulary(model, vocabulary):
    """The model's words, or ``vocabulary`` checked to have one word per column."""
    if vocabulary is None:
        return feature_names(model)
    vocabulary = np.asarray(vocabulary, dtype=object)
    if vocabulary.shape != (model.components_.shape[1],):
        raise ValueError(f"vocabulary has {vocabulary.size} words, the model "
                         f"{model.components_.shape[1]}")
    return vocabulary


def _count_coherence(ids, n_words, X):
    """u_mass from counts (n_docs, n_words); words are passed to gensim by id."""
    from gensim.matutils import Sparse2Corpus
    from gensim.models import CoherenceModel

    X = as_corpus(X, n_words)
    corpus = X.corpus if isinstance(X, BowStream) else Sparse2Corpus(X, documents_columns=False)
    dictionary = gensim_dictionary([str(j) for j in range(n_words)])
    return CoherenceModel(topics=[list(row) for row in ids], corpus=corpus,
                          dictionary=dictionary, coherence="u_mass", topn=ids.shape[1])


def _text_coherence(ids, words, texts, measure, processes):
    """Any measure from token lists; the top words must occur in them."""
    from gensim.corpora import Dictionary
    from gensim.models import CoherenceModel

    dictionary = Dictionary(texts)
    topics = [[str(words[j]) for j in row] for row in ids]
    missing = sorted({w for topic in topics for w in topic if w not in dictionary.token2id})
    if missing:
        raise ValueError(f"{len(missing)} top words never occur in the texts ("
                         f"{', '.join(map(repr, missing[:5]))}): tokenize the texts as the "
                         "model's vocabulary was built, or pass its vocabulary")
    return CoherenceModel(topics=topics, texts=texts, dictionary=dictionary, coherence=measure,
                          topn=ids.shape[1], processes=processes)
