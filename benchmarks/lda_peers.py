"""Peer LDA implementations on gensim's Wikipedia sample, scored by simplexsg's one evaluator.

Data: ``load_wiki_sample()`` (200 train / 50 test articles, 12,623 words). Every method fits the
training matrix with K = 20, alpha = 0.1, beta = 0.01; its normalised topic-word matrix and its
alpha are scored by ``document_completion_perplexity`` on ``completion_split(X_test,
random_state=0)`` (tokens shuffled per document, first half observed) with the fixed-point fold-in
(100 iterations), as in notes/targets.md. A method is a function ``(X_train, seed) -> (topics
(K, W), alpha, seconds)``; seconds cover training plus any input conversion a user of that library
needs, not the evaluation. Add a method by adding it to ``METHODS``.

    python benchmarks/lda_peers.py --seeds 3 --out benchmarks/results/lda_peers.json
"""
import argparse
import json
import logging
import os
import platform
import time
from pathlib import Path

import numpy as np

from simplexsg.datasets import load_wiki_sample
from simplexsg.metrics import completion_split, document_completion_score

K, ALPHA, BETA = 20, 0.1, 0.01
# notes/targets.md, same data, split and evaluator (one run each)
TARGETS = {"sklearn-online": 4065, "sklearn-batch": 4189, "gensim": 4291, "tomotopy": 3962,
           "lda": 3858}


def _normalise(weights):
    weights = np.asarray(weights, dtype=np.float64)
    return weights / weights.sum(axis=1, keepdims=True)


def _sklearn(learning_method):
    def fit(X, seed):
        from sklearn.decomposition import LatentDirichletAllocation

        model = LatentDirichletAllocation(
            n_components=K, doc_topic_prior=ALPHA, topic_word_prior=BETA,
            learning_method=learning_method, max_iter=20, random_state=seed)
        start = time.perf_counter()
        model.fit(X)
        seconds = time.perf_counter() - start
        return _normalise(model.components_), ALPHA, seconds

    fit.__doc__ = f"scikit-learn LatentDirichletAllocation, {learning_method} VB, 20 iterations."
    return fit


def gensim_lda(X, seed):
    """gensim LdaModel, 10 passes (one chunk of all 200 documents per pass), float32 (its default).

    eval_every=None: gensim's default (10) spends ~75% of the time computing a logged bound (and
    shifts its random stream). dtype=float64 gives ~1.7% lower perplexity (12 seeds: median 4363
    against 4437).
    """
    from gensim.matutils import Sparse2Corpus
    from gensim.models import LdaModel

    start = time.perf_counter()
    corpus = Sparse2Corpus(X, documents_columns=False)
    model = LdaModel(corpus, num_topics=K, id2word={w: str(w) for w in range(X.shape[1])},
                     passes=10, alpha=ALPHA, eta=BETA, random_state=seed, eval_every=None)
    seconds = time.perf_counter() - start
    return _normalise(model.get_topics()), ALPHA, seconds


def tomotopy_lda(X, seed):
    """tomotopy LDAModel, 500 iterations, 1 worker, no hyperparameter optimisation.

    tomotopy only knows the words of its training documents; a word it never saw gets its
    smoothing value, so phi_kw = (n_kw + beta) / (n_k + W beta) over our full vocabulary W.
    """
    import tomotopy as tp

    start = time.perf_counter()
    model = tp.LDAModel(k=K, alpha=ALPHA, eta=BETA, seed=seed)
    for d in range(X.shape[0]):
        row = slice(X.indptr[d], X.indptr[d + 1])
        model.add_doc(np.repeat(X.indices[row], X.data[row]).astype(str).tolist())
    model.optim_interval = 0
    model.train(500, workers=1)
    seconds = time.perf_counter() - start
    columns = np.array(model.used_vocabs, dtype=np.int64)
    weights = np.full((K, X.shape[1]), BETA)
    for k in range(K):
        weights[k, columns] = model.get_topic_word_dist(k, normalize=False)  # n_kw + beta
    return _normalise(weights), ALPHA, seconds


def lda_package(X, seed):
    """The ``lda`` package's collapsed Gibbs sampler, 500 iterations."""
    import lda

    # it logs progress, and warns that words seen only in the test documents have no counts
    logging.getLogger("lda").setLevel(logging.ERROR)
    model = lda.LDA(n_topics=K, n_iter=500, alpha=ALPHA, eta=BETA, random_state=seed)
    start = time.perf_counter()
    model.fit(X)
    seconds = time.perf_counter() - start
    return _normalise(model.topic_word_), ALPHA, seconds


METHODS = {
    "sklearn-online": _sklearn("online"),
    "sklearn-batch": _sklearn("batch"),
    "gensim": gensim_lda,
    "tomotopy": tomotopy_lda,
    "lda": lda_package,
}


def plot(results, path):
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    from matplotlib import ticker

    fig, ax = plt.subplots(figsize=(6, 4))
    for (name, res), marker in zip(results["methods"].items(), "osD^vP*X"):
        runs = res["runs"]
        line = ax.scatter([r["seconds"] for r in runs], [r["perplexity"] for r in runs],
                          marker=marker, alpha=0.4)
        ax.scatter(res["median_seconds"], res["median_perplexity"], marker=marker, s=80,
                   color=line.get_facecolor()[0][:3], label=name)
    ax.set_xscale("log")
    ax.xaxis.set_major_locator(ticker.LogLocator(subs=(1, 2, 5)))
    ax.xaxis.set_major_formatter(ticker.FormatStrFormatter("%g"))
    ax.xaxis.set_minor_formatter(ticker.NullFormatter())
    ax.set_xlabel("training seconds (log scale)")
    ax.set_ylabel("document-completion perplexity")
    ax.set_title(f"Wikipedia sample, K = {K}: runs (faint) and medians")
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
    X_observed, X_heldout = completion_split(data.X_test, random_state=0)
    results = {
        "data": "load_wiki_sample() defaults: " + " ".join(data.description.split()),
        "n_train_tokens": int(data.X_train.sum()),
        "evaluation": "document_completion_perplexity, completion_split(X_test, random_state=0), "
                      "fixed-point fold-in 100 iterations, each model's alpha",
        "n_heldout_tokens": int(X_heldout.sum()),
        "K": K, "alpha": ALPHA, "beta": BETA,
        "machine": f"{platform.machine()}, {os.cpu_count()} cpus",
        "methods": {},
    }
    print(f"{'method':>15} {'seconds':>8} {'perplexity':>10} {'targets.md':>10}  (medians, "
          f"{args.seeds} seeds)")
    for name in args.methods:
        runs = []
        for seed in range(args.seeds):
            topics, alpha, seconds = METHODS[name](data.X_train, seed)
            score = document_completion_score(topics, alpha, X_observed, X_heldout)
            runs.append({"seed": seed, "seconds": seconds, "perplexity": score.perplexity,
                         "log_likelihood": score.log_likelihood})
        res = {"runs": runs,
               "median_seconds": float(np.median([r["seconds"] for r in runs])),
               "median_perplexity": float(np.median([r["perplexity"] for r in runs]))}
        results["methods"][name] = res
        target = TARGETS.get(name)
        print(f"{name:>15} {res['median_seconds']:8.2f} {res['median_perplexity']:10.0f} "
              f"{target if target else '':>10}  runs: "
              + ", ".join(f"{r['perplexity']:.0f}" for r in runs), flush=True)
    out = Path(args.out)
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(results, indent=2))
    plot(results, out.with_suffix(".png"))
    print(f"written {out} and {out.with_suffix('.png')}")


if __name__ == "__main__":
    main()
