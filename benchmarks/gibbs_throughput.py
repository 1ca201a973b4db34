"""Gibbs throughput in token-sweeps per second: our LDA local kernel beside tomotopy and `lda`.

The kernels do not compute the same thing. Ours (``simplexsg.lda.gibbs.gibbs_topic_counts``)
resamples each token's topic with the topics phi FIXED and the document's proportions integrated
out, ``p(z = k) ∝ (alpha_k + n_dk^-i) phi[k, w]``, as the local step of stochastic-gradient LDA
needs. tomotopy (``tomotopy.LDAModel``) and `lda` (``lda.LDA``) run fully collapsed Gibbs, where
phi is integrated out too and the topic-word counts change with every token. The table compares
cost per token-sweep, nothing more. phi for our kernel is tomotopy's topics after
``--train`` iterations on the same corpus, so that the documents' topic usage is realistic
(converged topics concentrate a word on few topics, which our kernel exploits: with the
random topics of a first step it is slower).

Corpus: gensim's bundled Wikipedia sample through ``simplexsg.datasets.load_wiki_sample()``
(training part: 200 articles, 226k tokens, vocabulary = words in >= 2 and <= 50% of the
articles). alpha = 0.1, eta = 0.01; our kernel also at alpha = 0.005 (the SCIR paper's setting).

Timing, median of --repeats runs each, single process:
* ours: one ``gibbs_topic_counts`` call over the whole corpus with --sweeps sweeps (half
  burn-in) plus the sequential start, i.e. tokens * (sweeps + 1) token-sweeps; the time includes
  the input checks, the CSR conversion, the per-document generators, the per-word tables and
  the word-topic counts. 1 and 2 threads.
* tomotopy: ``train(--sweeps, workers=1)`` on the trained model, optimisation of alpha off.
* lda: marginal cost of an iteration, (T(fit with --sweeps + 2 iterations) - T(fit with
  2 iterations)) / --sweeps, so that initialisation and its log-likelihood evaluations cancel.
  O(K) per token: run only for K <= --lda-max-k (at K = 1000 one fit takes minutes).

    python benchmarks/gibbs_throughput.py --out benchmarks/results/gibbs_throughput.json
"""
import numpy as np

from simplexsg.datasets import load_wiki_sample
from simplexsg.lda.gibbs import gibbs_topic_counts

from harness import cli, peers
from harness.measure import median_seconds

ALPHA, ETA = 0.1, 0.01
SCIR_ALPHA = 0.005


def tomotopy_rate_and_topics(X, K, n_tokens, sweeps, repeats, train):
    """Token-sweeps/s of tomotopy (1 worker) on a model trained ``train`` iterations, and its
    topics over the full vocabulary."""
    model = peers.tomotopy_model(X, K, ALPHA, ETA, seed=0)
    model.train(train, workers=1)
    assert model.num_words == n_tokens
    seconds, _ = median_seconds(lambda r: model.train(sweeps, workers=1), repeats)
    return n_tokens * sweeps / seconds, peers.tomotopy_topics(model, X.shape[1], ETA)


def lda_rate(X, K, n_tokens, sweeps, repeats):
    """Token-sweeps/s of lda.LDA (marginal cost per iteration)."""
    def fit_seconds(n_iter):
        return float(np.median([peers.lda_fit(X, K, ALPHA, ETA, r, n_iter, refresh=10 ** 9)
                                .seconds for r in range(repeats)]))
    t_short = fit_seconds(2)
    t_long = fit_seconds(2 + sweeps)
    return n_tokens * sweeps / (t_long - t_short)


def ours_rate(X, topics, alpha, n_tokens, sweeps, repeats, n_jobs):
    def run(r):
        gibbs_topic_counts(X, topics, alpha, n_sweeps=sweeps, burn_in=sweeps // 2, seed=0,
                           iteration=r, n_jobs=n_jobs)
    return n_tokens * (sweeps + 1) / median_seconds(run, repeats)[0]


def main():
    parser = cli.Parser(__file__, __doc__, quick=dict(repeats=3, train=50, topics=[20, 100]))
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--sweeps", type=int, default=20)
    parser.add_argument("--train", type=int, default=200,
                        help="tomotopy iterations before timing (its topics feed our kernel)")
    parser.add_argument("--topics", type=int, nargs="+", default=[20, 100, 1000])
    parser.add_argument("--lda-max-k", type=int, default=100)
    args = parser.parse_args()
    X = load_wiki_sample().X_train.tocsr()
    n_tokens = int(X.sum())
    results = {"corpus": "simplexsg.datasets.load_wiki_sample().X_train",
               "documents": X.shape[0], "vocabulary": X.shape[1], "tokens": n_tokens,
               "sweeps": args.sweeps, "repeats": args.repeats, "tomotopy_training": args.train,
               "alpha": ALPHA, "eta": ETA, "unit": "token-sweeps per second", "K": {}}
    for K in args.topics:
        rates = {}
        rates["tomotopy (1 worker)"], topics = tomotopy_rate_and_topics(
            X, K, n_tokens, args.sweeps, args.repeats, args.train)
        if K <= args.lda_max_k:
            rates["lda"] = lda_rate(X, K, n_tokens, args.sweeps, args.repeats)
        for n_jobs in (1, 2):
            rates[f"simplexsg ({n_jobs} thread{'s' * (n_jobs > 1)})"] = ours_rate(
                X, topics, ALPHA, n_tokens, args.sweeps, args.repeats, n_jobs)
        rates[f"simplexsg (1 thread, alpha={SCIR_ALPHA})"] = ours_rate(
            X, topics, SCIR_ALPHA, n_tokens, args.sweeps, args.repeats, 1)
        tomotopy = rates["tomotopy (1 worker)"]
        results["K"][str(K)] = {
            name: {"token_sweeps_per_s": rate, "ratio_to_tomotopy": rate / tomotopy,
                   "ratio_to_lda": rate / rates["lda"] if "lda" in rates else None}
            for name, rate in rates.items()}

    names = list(dict.fromkeys(n for k in results["K"].values() for n in k))
    print(f"{results['corpus']}: {X.shape[0]} documents, {n_tokens} tokens, {args.sweeps} "
          f"sweeps, median of {args.repeats}; Mtoken-sweeps/s (x tomotopy)")
    print(f"{'method':<36}" + "".join(f"{f'K={K}':>18}" for K in args.topics))
    for name in names:
        cells = ""
        for K in args.topics:
            entry = results["K"][str(K)].get(name)
            cells += (f"{'-':>18}" if entry is None else
                      f"{entry['token_sweeps_per_s'] / 1e6:11.2f} ({entry['ratio_to_tomotopy']:4.2f})")
        print(f"{name:<36}{cells}")
    cli.write_results(results, args.out)


if __name__ == "__main__":
    main()
