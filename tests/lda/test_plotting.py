"""Plots of a fitted LDA (#16): rendered on the Agg backend to a file; axes and lines counted."""
import builtins

import numpy as np
import pytest

from simplexsg import SCIRLDA
from simplexsg.lda import plots as plotting
from simplexsg.datasets import make_lda_corpus

pytest.importorskip("matplotlib")


@pytest.fixture(scope="module")
def corpus():
    return make_lda_corpus(200, 50, 3, doc_length=30, random_state=0)[0]


def render(fig, tmp_path):
    path = tmp_path / "figure.png"
    fig.savefig(path)
    assert path.stat().st_size > 1000
    return fig


def test_perplexity_against_steps_and_time_with_the_burn_in_shaded(corpus, tmp_path):
    model = SCIRLDA(3, max_iter=8, evaluate_every=2, random_state=0).fit(
        corpus[:150], X_heldout=corpus[150:])
    fig = render(plotting.plot_perplexity(model), tmp_path)
    assert len(fig.axes) == 2
    for ax in fig.axes:
        assert len(ax.lines) == 1 and len(ax.lines[0].get_xdata()) == len(model.history_)
        assert len(ax.patches) == 1                              # the burn-in span
    np.testing.assert_array_equal(fig.axes[0].lines[0].get_ydata(),
                                  [h["perplexity"] for h in model.history_])
    with pytest.raises(ValueError, match="evaluate_every"):
        plotting.plot_perplexity(SCIRLDA(3, max_iter=2, random_state=0).fit(corpus))


@pytest.mark.parametrize("learn, lines", [(True, 1), ("per_topic", 3)])
def test_alpha_chain_has_a_line_per_alpha_and_its_mean(corpus, tmp_path, learn, lines):
    model = SCIRLDA(3, max_iter=4, learn_doc_topic_prior=learn, random_state=0).fit(corpus)
    fig = render(plotting.plot_alpha_chain(model), tmp_path)
    (ax,) = fig.axes
    assert len(ax.lines) == 2 * lines                            # chains + posterior means
    assert len(ax.lines[0].get_xdata()) == model.n_batch_iter_
    with pytest.raises(ValueError, match="learn_doc_topic_prior"):
        plotting.plot_alpha_chain(SCIRLDA(3, max_iter=2, random_state=0).fit(corpus))


def test_topic_uncertainty_has_one_axes_per_topic_with_its_top_words(corpus, tmp_path):
    model = SCIRLDA(3, max_iter=8, n_topic_samples=8, random_state=0).fit(corpus)
    fig = render(plotting.plot_topic_uncertainty(model, n=5), tmp_path)
    assert len(fig.axes) == 3
    intervals = model.topic_word_intervals(5)
    for k, ax in enumerate(fig.axes):
        assert [t.get_text() for t in ax.get_yticklabels()] == list(intervals.words[k])
        np.testing.assert_allclose(ax.lines[0].get_xdata(), intervals.mean[k])
    assert len(plotting.plot_topic_uncertainty(model, n=5, topics=[2]).axes) == 1
    with pytest.raises(ValueError, match="topics must be ids"):
        plotting.plot_topic_uncertainty(model, topics=[3])


def test_without_matplotlib_the_error_names_the_extra(monkeypatch):
    real_import = builtins.__import__

    def no_matplotlib(name, *args, **kwargs):
        if name.startswith("matplotlib"):
            raise ImportError(name)
        return real_import(name, *args, **kwargs)

    monkeypatch.setattr(builtins, "__import__", no_matplotlib)
    model = SCIRLDA(3)
    model.history_, model.burn_in_ = [dict(step=1, seconds=0.1, perplexity=10.0)], 0
    with pytest.raises(ImportError, match=r"pip install 'simplexsg\[plot\]'"):
        plotting.plot_perplexity(model)
