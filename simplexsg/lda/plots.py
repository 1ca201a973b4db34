"""Plots of a fitted ``LDA``: the held-out perplexity curve, the alpha chain, the top words'
posterior uncertainty. Each function returns a matplotlib ``Figure`` (``fig.savefig(path)``
writes it); matplotlib is the optional extra ``plot`` (``pip install 'simplexsg[plot]'``),
imported on the first call on the non-interactive Agg backend.

The burn-in (the steps before ``burn_in_``, left out of the averages) is shaded grey.
"""
import numpy as np
from sklearn.utils.validation import check_is_fitted

from .._optional import pyplot

BURN_IN_COLOUR = "0.88"


def _shade_burn_in(ax, end):
    """Grey span over [0, end) of the x axis, labelled "burn-in" (nothing when end <= 0)."""
    if end is not None and end > 0:
        ax.axvspan(0, end, color=BURN_IN_COLOUR, label="burn-in", zorder=0)


def plot_perplexity(model):
    """Held-out perplexity from ``model.history_`` (``fit(..., evaluate_every=...)``) against
    the steps (left) and the training seconds (right), burn-in shaded (on the time axis up to
    the time interpolated at ``burn_in_`` between the evaluations).

    Returns
    -------
    matplotlib.figure.Figure
        Two axes, one line each.
    """
    history = getattr(model, "history_", None)
    if not history:
        raise ValueError("the model has no perplexity history: fit with evaluate_every > 0 "
                         "(and X_heldout for a held-out figure)")
    steps = np.array([h["step"] for h in history], dtype=float)
    seconds = np.array([h["seconds"] for h in history])
    perplexity = [h["perplexity"] for h in history]
    burn_in = model.burn_in_
    plt = pyplot()
    fig, (by_step, by_time) = plt.subplots(1, 2, figsize=(9, 3.5), sharey=True)
    _shade_burn_in(by_step, burn_in)
    _shade_burn_in(by_time, None if burn_in is None else np.interp(
        burn_in, np.concatenate([[0.0], steps]), np.concatenate([[0.0], seconds])))
    for ax, x, label in ((by_step, steps, "step"), (by_time, seconds, "training seconds")):
        ax.plot(x, perplexity, marker=".")
        ax.set_xlabel(label)
    by_step.set_ylabel("held-out perplexity")
    if burn_in:
        by_step.legend(loc="upper right")
    fig.tight_layout()
    return fig


def plot_alpha_chain(model):
    """The doc-topic prior's chain ``doc_topic_prior_samples_`` (``learn_doc_topic_prior``)
    against the steps: one line (symmetric) or one per topic ("per_topic"), burn-in shaded,
    the posterior mean ``doc_topic_prior_`` as dashed horizontal lines.

    Returns
    -------
    matplotlib.figure.Figure
        One axes.
    """
    check_is_fitted(model, "components_")
    samples = getattr(model, "doc_topic_prior_samples_", None)
    if samples is None or not len(samples):
        raise ValueError("the model has no alpha chain: fit with learn_doc_topic_prior=True "
                         "or 'per_topic'")
    symmetric = np.ndim(model.doc_topic_prior_) == 0
    chains = samples[:, :1] if symmetric else samples
    plt = pyplot()
    fig, ax = plt.subplots(figsize=(6, 3.5))
    _shade_burn_in(ax, model.burn_in_)
    steps = np.arange(1, len(samples) + 1)
    for column in chains.T:
        ax.plot(steps, column, linewidth=1)
    for value in np.atleast_1d(model.doc_topic_prior_):
        ax.axhline(value, color="k", linestyle="--", linewidth=0.8)
    ax.set_xlabel("step")
    ax.set_ylabel("alpha" if symmetric else "alpha per topic")
    fig.tight_layout()
    return fig


def plot_topic_uncertainty(model, n=10, level=0.9, topics=None):
    """Each topic's ``n`` top words: posterior mean probability (dot) and ``level`` credible
    interval (bar) from ``model.topic_word_intervals`` (``n_topic_samples``).

    Parameters
    ----------
    n : int, default 10
    level : float in (0, 1), default 0.9
    topics : sequence of int, optional
        Topics to show (default: all), one axes each, four per row.

    Returns
    -------
    matplotlib.figure.Figure
    """
    intervals = model.topic_word_intervals(n, level)
    n_topics = intervals.mean.shape[0]
    topics = list(range(n_topics)) if topics is None else [int(k) for k in topics]
    if not topics or min(topics) < 0 or max(topics) >= n_topics:
        raise ValueError(f"topics must be ids in [0, {n_topics}), got {topics}")
    columns = min(4, len(topics))
    rows = -(-len(topics) // columns)
    plt = pyplot()
    fig, axes = plt.subplots(rows, columns, figsize=(3.2 * columns, 0.25 * n * rows + 1),
                             squeeze=False)
    for ax in axes.flat[len(topics):]:
        fig.delaxes(ax)
    for ax, k in zip(axes.flat, topics):
        mean = intervals.mean[k]
        errors = [mean - intervals.lower[k], intervals.upper[k] - mean]
        y = np.arange(len(mean))[::-1]
        ax.errorbar(mean, y, xerr=errors, fmt="o", markersize=3, capsize=2)
        ax.set_yticks(y, intervals.words[k])
        ax.set_title(f"topic {k}")
        ax.set_xlabel(f"probability ({level:.0%} interval)")
    fig.tight_layout()
    return fig
