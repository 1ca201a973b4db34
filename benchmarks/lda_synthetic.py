"""Do SCIR-LDA's defaults work beyond the bundled 200 documents? A 10^4-document synthetic corpus.

Data: ``make_lda_corpus`` with K = 20 true topics drawn from Dirichlet(0.01) over W = 5000 words
(sparse: a topic puts most of its mass on a few dozen words), alpha = 0.1, documents of ~100
tokens; D = 10,000 training and 1,000 test documents. Every model is fitted with the true priors
(alpha = 0.1, beta = 0.01) and K = 20, and scored by ONE evaluator: document completion
(``completion_split(X_test, random_state=0)``, Gibbs fold-in, ``simplexsg.metrics``), also applied
to the TRUE topics as the floor. Topic recovery: mean total variation between matched topics
(Hungarian algorithm). SCIR and SGRLD run with their defaults (``max_iter=None``: one pass, 200
steps of 50 documents, the step-size schedule unchanged from the bundled-corpus tuning);
tomotopy (collapsed Gibbs) runs 200 iterations over all documents.

    python benchmarks/lda_synthetic.py --out benchmarks/results
"""
import argparse
import json
import time
from pathlib import Path

import numpy as np
from scipy.optimize import linear_sum_assignment

from lda_peers import tomotopy_lda
from simplexsg import LDA
from simplexsg.datasets import make_lda_corpus
from simplexsg.gibbs import fold_in
from simplexsg.metrics import completion_split, document_completion_score

K, W, ALPHA, BETA = 20, 5000, 0.1, 0.01


def perplexity(topics, X_test):
    observed, heldout = completion_split(X_test, random_state=0)

    def gibbs(topics_, alpha, X):
        return fold_in(topics_, alpha, X, n_sweeps=100, burn_in=50, seed=12345, n_jobs=2)

    return document_completion_score(topics, ALPHA, observed, heldout, fold_in=gibbs).perplexity


def matched_total_variation(topics, truth):
    """Mean over true topics of the total variation to the fitted topic matched to it."""
    tv = 0.5 * np.abs(truth[:, None, :] - topics[None, :, :]).sum(axis=2)
    rows, cols = linear_sum_assignment(tv)
    return float(tv[rows, cols].mean()), float(tv[rows, cols].max())


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", default="benchmarks/results")
    parser.add_argument("--seeds", type=int, default=3)
    parser.add_argument("--documents", type=int, default=10_000)
    args = parser.parse_args()
    X, truth, _ = make_lda_corpus(args.documents + 1000, W, K, doc_length=100,
                                  doc_topic_prior=ALPHA, topic_word_prior=BETA, random_state=2026)
    X_train, X_test = X[:args.documents], X[args.documents:]
    floor = perplexity(truth, X_test)
    print(f"D = {X_train.shape[0]}, W = {W}, {int(X_train.sum())} training tokens; "
          f"perplexity of the true topics {floor:.1f}", flush=True)
    methods = {
        "scir (defaults)": lambda seed: _simplexsg("scir", X_train, seed),
        "sgrld (defaults)": lambda seed: _simplexsg("sgrld", X_train, seed),
        "tomotopy (200 iterations)": lambda seed: tomotopy_lda(X_train, seed, BETA, 200)[::2],
    }
    results = dict(true_topics_perplexity=floor, documents=X_train.shape[0], runs={})
    for name, fit in methods.items():
        runs = []
        for seed in range(args.seeds):
            topics, seconds = fit(seed)
            p = perplexity(topics, X_test)
            tv_mean, tv_max = matched_total_variation(topics, truth)
            runs.append(dict(seed=seed, perplexity=p, ratio_to_truth=p / floor, tv_mean=tv_mean,
                             tv_max=tv_max, seconds=seconds))
            print(f"{name:>26} seed {seed}: perplexity {p:.1f} ({100 * (p / floor - 1):+.2f}% vs "
                  f"truth), TV mean {tv_mean:.3f} max {tv_max:.3f}, {seconds:.1f} s", flush=True)
        results["runs"][name] = runs
    print("\nmethod                      perplexity  vs truth  TV mean  TV max  seconds (medians)")
    for name, runs in results["runs"].items():
        med = {key: float(np.median([r[key] for r in runs]))
               for key in ("perplexity", "ratio_to_truth", "tv_mean", "tv_max", "seconds")}
        results.setdefault("summary", {})[name] = med
        print(f"{name:>26}  {med['perplexity']:10.1f}  {100 * (med['ratio_to_truth'] - 1):+7.2f}%"
              f"  {med['tv_mean']:7.3f}  {med['tv_max']:6.3f}  {med['seconds']:7.1f}")
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    (out / "lda_synthetic.json").write_text(json.dumps(results, indent=1))


def _simplexsg(sampler, X_train, seed):
    model = LDA(K, sampler=sampler, doc_topic_prior=ALPHA, topic_word_prior=BETA, n_jobs=2,
                random_state=seed)
    start = time.perf_counter()
    model.fit(X_train)
    return model.components_, time.perf_counter() - start


if __name__ == "__main__":
    main()
