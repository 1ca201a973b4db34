"""Gibbs throughput in token-sweeps per second: our LDA local kernel beside `lda` and tomotopy.

The three kernels do not compute the same thing. Ours (``simplexsg.gibbs.gibbs_topic_counts``)
resamples each token's topic with the topics phi FIXED and the document's proportions integrated
out, ``p(z = k) ∝ (alpha_k + n_dk^-i) phi[k, w]``, as the local step of stochastic-gradient LDA
needs; phi here is the topic-word matrix of the `lda` fit below, so the documents' topic usage is
realistic. `lda` (``lda.LDA``) and tomotopy (``tomotopy.LDAModel``) run fully collapsed Gibbs,
where phi is integrated out too and the topic-word counts change with every token. All three
are O(K) or better per token; the table compares cost per token-sweep, nothing more.

Corpus: gensim's bundled Wikipedia sample through ``simplexsg.datasets.load_wiki_sample()``
(training part: 200 articles, 226k tokens, vocabulary = words in >= 2 and <= 50% of the
articles). alpha = 0.1, eta = 0.01 for the peers; our kernel runs at alpha = 0.1 and, as an extra
row, at alpha = 0.005 (the SCIR paper's LDA setting, sparser documents).

Timing, median of --repeats runs each, single process:
* ours: one ``gibbs_topic_counts`` call over the whole corpus with ``--sweeps`` sweeps (half
  burn-in) plus the sequential start, i.e. tokens * (sweeps + 1) token-sweeps; the time includes
  the CSR conversion, the per-document generators and the per-word tables. 1 and 2 threads.
* lda: marginal cost of an iteration, (T(fit with --sweeps + 2 iterations) - T(fit with
  2 iterations)) / --sweeps, so that initialisation and its log-likelihood evaluations cancel.
* tomotopy: ``train(--sweeps, workers=1)`` on an initialised model, optimisation of alpha off.

    python benchmarks/gibbs_throughput.py --out benchmarks/results/gibbs_throughput.json
"""
import argparse
import logging
import platform
import time

import numpy as np
import scipy.sparse as sp

from simplexsg.gibbs import gibbs_topic_counts

from _common import write_results

ALPHA, ETA = 0.1, 0.01
SCIR_ALPHA = 0.005


def load_corpus():
    """(X_train CSR, description)."""
    try:
        from simplexsg.datasets import load_wiki_sample
    except ImportError:                              # the dataset helper is not there yet
        from gensim.corpora import Dictionary
        from gensim.test.utils import datapath
        with open(datapath("head500.noblanks.cor"), encoding="utf-8") as fh:
            docs = [line.split() for line in fh]
        dictionary = Dictionary(docs)
        dictionary.filter_extremes(no_below=2, no_above=0.5, keep_n=None)
        bows = [dictionary.doc2bow(doc) for doc in docs]
        rows = np.repeat(np.arange(len(bows)), [len(b) for b in bows])
        cols, vals = zip(*(pair for bow in bows for pair in bow))
        X = sp.csr_array((vals, (rows, cols)), shape=(len(bows), len(dictionary)))
        return X, "gensim head500.noblanks.cor, all 250 articles (gensim Dictionary)"
    return load_wiki_sample().X_train.tocsr(), "simplexsg.datasets.load_wiki_sample().X_train"


def median_time(run, repeats):
    times = []
    for r in range(repeats):
        start = time.perf_counter()
        run(r)
        times.append(time.perf_counter() - start)
    return float(np.median(times))


def lda_rate(X, K, n_tokens, sweeps, repeats):
    """Token-sweeps/s of lda.LDA (marginal cost per iteration) and its fitted topics."""
    import lda
    logging.getLogger("lda").setLevel(logging.ERROR)
    fitted = {}

    def fit(n_iter):
        def run(r):
            fitted[n_iter] = lda.LDA(K, n_iter=n_iter, alpha=ALPHA, eta=ETA, random_state=r,
                                     refresh=10 ** 9).fit(X)
        return run
    t_short = median_time(fit(2), repeats)
    t_long = median_time(fit(2 + sweeps), repeats)
    return n_tokens * sweeps / (t_long - t_short), fitted[2 + sweeps].topic_word_


def tomotopy_rate(X, K, n_tokens, sweeps, repeats):
    import tomotopy as tp
    model = tp.LDAModel(k=K, alpha=ALPHA, eta=ETA, seed=0)
    model.optim_interval = 0
    counts = X.data.astype(np.int64)
    for d in range(X.shape[0]):
        span = slice(X.indptr[d], X.indptr[d + 1])
        tokens = np.repeat(X.indices[span], counts[span]).astype(str).tolist()
        if tokens:
            model.add_doc(tokens)
    model.train(0, workers=1)                      # initialise the assignments outside the timing
    assert model.num_words == n_tokens
    return n_tokens * sweeps / median_time(lambda r: model.train(sweeps, workers=1), repeats)


def ours_rate(X, topics, alpha, n_tokens, sweeps, repeats, n_jobs):
    def run(r):
        gibbs_topic_counts(X, topics, alpha, n_sweeps=sweeps, burn_in=sweeps // 2, seed=0,
                           iteration=r, n_jobs=n_jobs)
    return n_tokens * (sweeps + 1) / median_time(run, repeats)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", default="benchmarks/results/gibbs_throughput.json")
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--sweeps", type=int, default=20)
    parser.add_argument("--topics", type=int, nargs="+", default=[20, 100])
    args = parser.parse_args()
    X, corpus = load_corpus()
    n_tokens = int(X.sum())
    results = {"corpus": corpus, "documents": X.shape[0], "vocabulary": X.shape[1],
               "tokens": n_tokens, "sweeps": args.sweeps, "repeats": args.repeats,
               "alpha": ALPHA, "eta": ETA, "machine": platform.processor() or platform.machine(),
               "unit": "token-sweeps per second", "K": {}}
    for K in args.topics:
        rates = {}
        rates["lda"], topics = lda_rate(X, K, n_tokens, args.sweeps, args.repeats)
        rates["tomotopy (1 worker)"] = tomotopy_rate(X, K, n_tokens, args.sweeps, args.repeats)
        for n_jobs in (1, 2):
            rates[f"simplexsg ({n_jobs} thread{'s' * (n_jobs > 1)})"] = ours_rate(
                X, topics, ALPHA, n_tokens, args.sweeps, args.repeats, n_jobs)
        rates[f"simplexsg (1 thread, alpha={SCIR_ALPHA})"] = ours_rate(
            X, topics, SCIR_ALPHA, n_tokens, args.sweeps, args.repeats, 1)
        results["K"][str(K)] = {
            name: {"token_sweeps_per_s": rate, "ratio_to_lda": rate / rates["lda"]}
            for name, rate in rates.items()}

    names = list(next(iter(results["K"].values())))
    header = f"{'method':<36}" + "".join(f"{f'K={K} Mtok/s':>14}{'x lda':>7}" for K in args.topics)
    print(f"{corpus}: {X.shape[0]} documents, {n_tokens} tokens, {args.sweeps} sweeps, "
          f"median of {args.repeats}")
    print(header)
    for name in names:
        cells = "".join(f"{results['K'][str(K)][name]['token_sweeps_per_s'] / 1e6:14.2f}"
                        f"{results['K'][str(K)][name]['ratio_to_lda']:7.2f}" for K in args.topics)
        print(f"{name:<36}{cells}")
    write_results(results, args.out)


if __name__ == "__main__":
    main()
