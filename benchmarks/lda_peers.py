"""SCIR-LDA and SGRLD-LDA against peer LDA implementations on gensim's Wikipedia sample.

Data: ``load_wiki_sample()`` (200 train / 50 test articles, 12,623 words). Every method fits the
training matrix with K = 20, alpha = 0.1 and beta in {0.01, 0.1} at a few budgets (iterations or
passes), so each traces held-out perplexity against training time. A fitted model is scored by
ONE evaluator: ``document_completion_score`` on ``completion_split(X_test, random_state=0)``
(tokens shuffled per document, first half observed) with its normalised topic-word matrix and
its alpha, the proportions folded in by

* ``gibbs``: the Gibbs fold-in of ``simplexsg.gibbs.fold_in`` (100 sweeps, 50 discarded, fixed
  seed) — the definition ``LDA.perplexity`` uses; and
* ``fixed_point``: the fixed-point fold-in of ``simplexsg.metrics`` (100 iterations), the
  evaluator of ``benchmarks/lda_study.py``.

A method is a function ``(X_train, seed, beta, budget) -> (topics (K, W), alpha, seconds)``;
seconds cover training plus any input conversion a user of that library needs, not the
evaluation. Add one by adding it to ``METHODS`` with its budgets.

    python benchmarks/lda_peers.py --seeds 3 --out benchmarks/results/lda_peers.json
"""
import argparse
import logging
import os
import platform
import time

import numpy as np

from simplexsg import LDA
from simplexsg.datasets import load_wiki_sample
from simplexsg.metrics import fixed_point_fold_in

from _common import completion_perplexity, tomotopy_model, tomotopy_topics, write_results

K, ALPHA, BETAS = 20, 0.1, (0.01, 0.1)


def _normalise(weights):
    weights = np.asarray(weights, dtype=np.float64)
    return weights / weights.sum(axis=1, keepdims=True)


def _sklearn(learning_method):
    def fit(X, seed, beta, budget):
        from sklearn.decomposition import LatentDirichletAllocation

        model = LatentDirichletAllocation(
            n_components=K, doc_topic_prior=ALPHA, topic_word_prior=beta,
            learning_method=learning_method, max_iter=budget, random_state=seed)
        start = time.perf_counter()
        model.fit(X)
        seconds = time.perf_counter() - start
        return _normalise(model.components_), ALPHA, seconds

    fit.__doc__ = f"scikit-learn LatentDirichletAllocation, {learning_method} VB; budget = max_iter."
    return fit


def gensim_lda(X, seed, beta, budget):
    """gensim LdaModel, budget = passes (one chunk of all 200 documents per pass), float32.

    eval_every=None: gensim's default (10) spends ~75% of the time computing a logged bound.
    dtype=float64 gives ~1.7% lower perplexity (12 seeds: median 4363 against 4437).
    """
    from gensim.matutils import Sparse2Corpus
    from gensim.models import LdaModel

    start = time.perf_counter()
    corpus = Sparse2Corpus(X, documents_columns=False)
    model = LdaModel(corpus, num_topics=K, id2word={w: str(w) for w in range(X.shape[1])},
                     passes=budget, alpha=ALPHA, eta=beta, random_state=seed, eval_every=None)
    seconds = time.perf_counter() - start
    return _normalise(model.get_topics()), ALPHA, seconds


def tomotopy_lda(X, seed, beta, budget):
    """tomotopy LDAModel, budget = iterations, 1 worker, no hyperparameter optimisation.

    tomotopy only knows the words of its training documents; a word it never saw gets its
    smoothing value, so phi_kw = (n_kw + beta) / (n_k + W beta) over our full vocabulary W.
    """
    start = time.perf_counter()
    model = tomotopy_model(X, K, ALPHA, beta, seed)
    model.train(budget, workers=1)
    seconds = time.perf_counter() - start
    return tomotopy_topics(model, X.shape[1], beta), ALPHA, seconds


def lda_package(X, seed, beta, budget):
    """The ``lda`` package's collapsed Gibbs sampler, budget = iterations."""
    import lda

    # it logs progress, and warns that words seen only in the test documents have no counts
    logging.getLogger("lda").setLevel(logging.ERROR)
    model = lda.LDA(n_topics=K, n_iter=budget, alpha=ALPHA, eta=beta, random_state=seed)
    start = time.perf_counter()
    model.fit(X)
    seconds = time.perf_counter() - start
    return _normalise(model.topic_word_), ALPHA, seconds


def _simplexsg(sampler):
    def fit(X, seed, beta, budget):
        model = LDA(K, sampler=sampler, doc_topic_prior=ALPHA, topic_word_prior=beta,
                    max_iter=budget, n_jobs=1, random_state=seed)
        start = time.perf_counter()
        model.fit(X)
        seconds = time.perf_counter() - start
        return model.components_, ALPHA, seconds

    fit.__doc__ = f"simplexsg LDA(sampler={sampler!r}), defaults, 1 thread; budget = passes."
    return fit


#: method -> (fit function, budgets)
METHODS = {
    "scir": (_simplexsg("scir"), (10, 20, 40)),      # 20 passes: the default max_iter
    "sgrld": (_simplexsg("sgrld"), (10, 20, 40)),
    "sklearn-online": (_sklearn("online"), (5, 20)),
    "sklearn-batch": (_sklearn("batch"), (20,)),
    "gensim": (gensim_lda, (10,)),
    "tomotopy": (tomotopy_lda, (100, 500)),
    "lda": (lda_package, (500,)),
}


def evaluators(X_test):
    return {"gibbs": completion_perplexity(X_test),
            "fixed_point": completion_perplexity(X_test, fold_in=fixed_point_fold_in)}


def plot(results, path):
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, axes = plt.subplots(1, len(BETAS), figsize=(6 * len(BETAS), 4.5))
    for ax, beta in zip(axes, BETAS):
        for (name, curves), marker in zip(results["methods"].items(), "osD^vP*X"):
            curve = curves[str(beta)]
            ax.plot([c["median_seconds"] for c in curve], [c["median_perplexity"] for c in curve],
                    marker=marker, label=name)
        ax.set_xscale("log")
        ax.set_xlabel("training seconds (log scale)")
        ax.set_ylabel("held-out perplexity (Gibbs fold-in)")
        ax.set_title(f"Wikipedia sample, K = {K}, alpha = {ALPHA}, beta = {beta}")
        ax.legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(path, dpi=120)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seeds", type=int, default=3, help="seeds 0, ..., seeds - 1 per method")
    parser.add_argument("--out", default="benchmarks/results/lda_peers.json")
    parser.add_argument("--methods", nargs="+", choices=list(METHODS), default=list(METHODS))
    args = parser.parse_args()

    data = load_wiki_sample()
    score = evaluators(data.X_test)
    results = {
        "data": "load_wiki_sample() defaults: " + " ".join(data.description.split()),
        "n_train_tokens": int(data.X_train.sum()),
        "evaluation": "document_completion_score on completion_split(X_test, random_state=0); "
                      "'perplexity' uses the Gibbs fold-in (100 sweeps, 50 discarded), "
                      "'fixed_point' the fixed-point fold-in (100 iterations)",
        "K": K, "alpha": ALPHA, "betas": BETAS,
        "machine": f"{platform.machine()}, {os.cpu_count()} cpus",
        "methods": {},
    }
    print(f"{'method':>15} {'beta':>5} {'budget':>6} {'seconds':>8} {'perplexity':>10} "
          f"{'fixed-pt':>9}  (medians over {args.seeds} seeds)")
    for name in args.methods:
        fit, budgets = METHODS[name]
        results["methods"][name] = curves = {}
        for beta in BETAS:
            curves[str(beta)] = []
            for budget in budgets:
                runs = []
                for seed in range(args.seeds):
                    topics, alpha, seconds = fit(data.X_train, seed, beta, budget)
                    runs.append({"seed": seed, "seconds": seconds,
                                 "perplexity": score["gibbs"](topics, alpha),
                                 "fixed_point": score["fixed_point"](topics, alpha)})
                point = {"budget": budget, "runs": runs, **{
                    f"median_{key}": float(np.median([r[key] for r in runs]))
                    for key in ("seconds", "perplexity", "fixed_point")}}
                curves[str(beta)].append(point)
                print(f"{name:>15} {beta:5} {budget:6} {point['median_seconds']:8.2f} "
                      f"{point['median_perplexity']:10.0f} {point['median_fixed_point']:9.0f}",
                      flush=True)
    write_results(results, args.out, plot)


if __name__ == "__main__":
    main()
