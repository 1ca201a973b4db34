"""A new user's edge cases of the LDA estimator (#35): what a time budget means, memory
refused up front, and bag-of-words corpora whose vocabulary is empty, stray, duplicated or declared."""
import re
import warnings

import numpy as np
import pytest
from gensim.corpora import MmCorpus
from gensim.test.utils import datapath

from simplexsg import LDA, SCIRLDA
from simplexsg.lda.defaults import MAX_PASSES, default_passes


# ---------------------------------------------------------------- time budget
def test_a_time_budget_never_lengthens_a_fit(three_topic_counts):
    plain = SCIRLDA(3, random_state=0).fit(three_topic_counts)
    capped = SCIRLDA(3, random_state=0, max_time=1e6).fit(three_topic_counts)
    steps_per_pass = -(-three_topic_counts.shape[0] // plain.batch_size_)
    assert plain.n_iter_ == capped.n_iter_ == default_passes([steps_per_pass] * MAX_PASSES)
    assert capped.stop_reason_ == "max_iter"
    np.testing.assert_array_equal(plain.components_, capped.components_)


def test_the_convergence_check_may_go_on_to_max_passes(three_topic_counts):
    model = SCIRLDA(3, random_state=0, tol=1e-12, n_iter_no_change=1000).fit(three_topic_counts)
    assert model.n_iter_ == MAX_PASSES and model.stop_reason_ == "max_iter"


# ---------------------------------------------------------------- memory
def test_a_minibatch_too_large_for_memory_is_refused_before_any_allocation():
    X = np.zeros((3, 5), dtype=np.int64)
    X[0, 0], X[1, 3], X[2, 4] = 2 ** 31, 5, 9     # one cell of 2^31 tokens
    for call in (lambda m: m.fit(X), lambda m: m.partial_fit(X)):
        model = SCIRLDA(3, total_samples=10)
        with pytest.raises(MemoryError, match=r"a minibatch of 3 documents can hold 2.15e\+09 "
                                              r"tokens: .* GB .*smaller batch_size"):
            call(model)
        assert not hasattr(model, "components_")


# ---------------------------------------------------------------- vocabularies
def test_documents_without_tokens_are_named_as_such_with_a_vocabulary():
    names = [f"w{i}" for i in range(30)]
    with pytest.raises(ValueError, match="X has no tokens: every document is empty"):
        SCIRLDA(2).fit([[], []], id2word=names)


def test_a_stray_word_id_warns_that_the_vocabulary_is_mostly_unused():
    documents = [[(0, 1), (3, 2)], [(1, 4), (2, 1)], [(10 ** 6, 1)]]
    with pytest.warns(UserWarning, match=r"largest word id \+ 1 \(1000001\), but only 5 ids "
                                         r"occur.*pass id2word"):
        model = SCIRLDA(2, max_iter=1, random_state=0).fit(documents)
    assert model.n_features_in_ == 10 ** 6 + 1
    with warnings.catch_warnings():
        warnings.simplefilter("error")                 # every id used: no warning
        SCIRLDA(2, max_iter=1, random_state=0).fit(documents[:2])


def test_a_word_named_twice_in_id2word_is_refused():
    with pytest.raises(ValueError, match=r"id2word names 'b' twice \(ids 1 and 2\)"):
        SCIRLDA(2, max_iter=1).fit([[(0, 1), (1, 2), (2, 1)]], id2word=["a", "b", "b"])


def test_a_matrix_market_stream_needs_no_id2word():
    mm = MmCorpus(datapath("testcorpus.mm"))
    model = SCIRLDA(2, max_iter=2, random_state=0).fit(mm)
    assert model.n_features_in_ == mm.num_terms == 12
    assert model.vocabulary_ is None
    # a dictionary larger than the file's largest id still wins
    model = SCIRLDA(2, max_iter=2, random_state=0).fit(
        mm, id2word={i: f"w{i}" for i in range(15)})
    assert model.n_features_in_ == 15


# ---------------------------------------------------------------- output and docs
@pytest.mark.parametrize("heldout, label", [(False, "in-sample"), (True, "held-out")])
def test_verbose_evaluation_lines_say_what_they_score(three_topic_counts, capsys, heldout, label):
    SCIRLDA(3, max_iter=1, evaluate_every=1, verbose=2, random_state=0).fit(
        three_topic_counts[:100], X_heldout=three_topic_counts[100:] if heldout else None)
    lines = [line for line in capsys.readouterr().out.splitlines() if line.startswith("step")]
    assert lines and all(f", {label} perplexity " in line for line in lines)


def test_every_fitted_attribute_is_documented(three_topic_counts):
    model = SCIRLDA(3, max_iter=1, random_state=0, n_topic_samples=2).fit(three_topic_counts)
    attributes = {name for name in vars(model) if name.endswith("_") and not
                  name.startswith("_")} | {"doc_topic_"}
    documented = LDA.__doc__.split("Attributes\n    ----------")[1]
    missing = sorted(a for a in attributes if not re.search(rf"\b{a}(?!\w)", documented))
    assert not missing, f"undocumented fitted attributes: {missing}"
    assert "LDA : The parameters, fitted attributes and methods." in SCIRLDA.__doc__
