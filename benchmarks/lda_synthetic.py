"""SCIR-LDA with its default step sizes on a 10^4-document synthetic corpus with known topics.

Data: ``make_lda_corpus`` with ``--docs`` (10,000) training plus ``--test-docs`` (1,000) held-out
documents, K = 20 topics over ``--words`` (3,000) words, doc_topic_prior 0.1, topic_word_prior
0.01 (sparse topics: each puts most of its mass on a few dozen words), Poisson(100) document
lengths (about 10^6 training tokens).

Methods (alpha = 0.1 and beta = 0.01, the generating values, unless said):

* ``scir``: ``SCIRLDA(20, doc_topic_prior=0.1, topic_word_prior=0.01, n_jobs=2)``, every other
  parameter at its default (step sizes, minibatch, sweeps, passes and burn-in);
* ``scir-beta0.1``: ``SCIRLDA(20, n_jobs=2)``, every parameter default (beta = 0.1);
* ``scir-batch50``: ``scir`` with the paper's batch of 50 documents and 5 passes (1000 steps):
  why the default batch grows with D;
* ``sgrld``: ``SGRLDLDA`` as ``scir``;
* ``tomotopy-200`` / ``tomotopy-500``: tomotopy ``LDAModel(k=20, alpha=0.1, eta=0.01)``,
  2 workers, no hyperparameter optimisation, the same model after 200 and after 500 iterations
  (the 500 row's seconds include the first 200), ``harness.peers.tomotopy_curve``. Topics
  ``(n_kw + beta) / (n_k + W beta)``.

One evaluator for all, and for the TRUE topics: ``document_completion_score`` on
``completion_split(X_test, random_state=0)`` with the Gibbs fold-in (100 sweeps, 50
discarded, seed 0, 2 threads). Recovery: each model's topics are matched to the true ones by
the Hungarian algorithm on the total-variation cost ``0.5 |phi - phi_true|_1``; ``tv`` is the
mean matched TV per topic, ``tv_max`` the largest, ``bad`` the number of topics with TV > 0.3.
Seconds: training (plus tomotopy's input conversion), not evaluation.

    python benchmarks/lda_synthetic.py --out benchmarks/results/lda_synthetic.json
"""
import warnings

from simplexsg import SCIRLDA, SGRLDLDA
from simplexsg._optional import pyplot
from simplexsg.datasets import make_lda_corpus

from harness import cli, peers
from harness.evaluation import EVALUATION, completion_perplexity, match_topics
from harness.measure import medians

K, ALPHA, BETA, DOC_LENGTH, N_JOBS = 20, 0.1, 0.01, 100, 2
BAD_TV = 0.3


def _simplexsg(cls, **kwargs):
    def fit(X, seed):
        return [peers.simplexsg_fit(cls(K, n_jobs=N_JOBS, random_state=seed, **kwargs), X)]
    return fit


def tomotopy_lda(iterations):
    """Fits once, returns the topics after each cumulative iteration count in ``iterations``."""
    def fit(X, seed):
        # tomotopy warns that results depend on the number of workers; known, and accepted
        warnings.filterwarnings("ignore", message="The training result may differ",
                                category=RuntimeWarning)
        return [fit for _, fit in peers.tomotopy_curve(X, K, ALPHA, BETA, seed, iterations,
                                                       workers=N_JOBS)]
    return fit


#: name(s) -> fit function returning one (topics, alpha, seconds) per name
METHODS = {
    ("scir",): _simplexsg(SCIRLDA, doc_topic_prior=ALPHA, topic_word_prior=BETA),
    ("scir-beta0.1",): _simplexsg(SCIRLDA),
    ("scir-batch50",): _simplexsg(SCIRLDA, doc_topic_prior=ALPHA, topic_word_prior=BETA,
                                  batch_size=50, max_iter=5),
    ("sgrld",): _simplexsg(SGRLDLDA, doc_topic_prior=ALPHA, topic_word_prior=BETA),
    ("tomotopy-200", "tomotopy-500"): tomotopy_lda((200, 500)),
}


def recovery(topics, true_topics):
    tvs = match_topics(topics, true_topics)[1]
    return dict(tv=float(tvs.mean()), tv_max=float(tvs.max()), bad=int((tvs > BAD_TV).sum()))


def run_seed(seed, args, names):
    X, true_topics, _ = make_lda_corpus(args.docs + args.test_docs, args.words, K,
                                        doc_length=DOC_LENGTH, doc_topic_prior=ALPHA,
                                        topic_word_prior=BETA, random_state=seed)
    X_train, X_test = X[:args.docs], X[args.docs:]
    perplexity = completion_perplexity(X_test, n_jobs=N_JOBS)

    true_perp = perplexity(true_topics, ALPHA)
    out = {"true_topics": dict(perplexity=true_perp, n_train_tokens=int(X_train.sum()),
                               words_used=int((X_train.sum(axis=0) > 0).sum()))}
    print(f"seed {seed}: {out['true_topics']['n_train_tokens']} training tokens, true-topic "
          f"perplexity {true_perp:.1f}", flush=True)
    for group, fit in METHODS.items():
        if not set(group) & set(names):
            continue
        for name, (topics, alpha, seconds) in zip(group, fit(X_train, seed)):
            perp = perplexity(topics, alpha)
            out[name] = dict(seconds=seconds, perplexity=perp,
                             perplexity_vs_true=perp / true_perp - 1.0,
                             **recovery(topics, true_topics))
            print(f"  {name:>13}: {seconds:6.1f} s, perplexity {perp:.1f}", flush=True)
    return out


def plot(results, path):
    plt = pyplot()
    fig, ax = plt.subplots(figsize=(7, 4.5))
    summary = results["summary"]
    for name, row in summary.items():
        if name == "true_topics":
            continue
        ax.plot(row["seconds"], row["perplexity"], "o")
        ax.annotate(name, (row["seconds"], row["perplexity"]), fontsize=8,
                    xytext=(4, 4), textcoords="offset points")
    ax.axhline(summary["true_topics"]["perplexity"], color="k", ls="--", label="true topics")
    ax.set_xscale("log")
    ax.set_xlabel("training seconds (log scale)")
    ax.set_ylabel("held-out perplexity (Gibbs fold-in)")
    ax.set_title(f"make_lda_corpus D={results['docs']}, W={results['words']}, K={K}; "
                 f"medians over {results['seeds']} seeds", fontsize=9)
    ax.legend()
    fig.tight_layout()
    fig.savefig(path, dpi=120)


def main():
    parser = cli.Parser(__file__, __doc__, quick=dict(seeds=1, docs=1_000, test_docs=200),
                        seeds=2)
    parser.add_argument("--docs", type=int, default=10_000)
    parser.add_argument("--test-docs", type=int, default=1_000)
    parser.add_argument("--words", type=int, default=3_000)
    all_names = [n for group in METHODS for n in group]
    parser.add_argument("--methods", nargs="+", choices=all_names, default=all_names)
    args = parser.parse_args()

    results = {
        "data": f"make_lda_corpus({args.docs} + {args.test_docs} docs, W={args.words}, K={K}, "
                f"doc_length={DOC_LENGTH}, doc_topic_prior={ALPHA}, topic_word_prior={BETA}, "
                "random_state=seed); first rows train, rest test",
        "evaluation": EVALUATION + "; recovery: Hungarian "
                      f"matching on TV to the true topics, bad = topics with TV > {BAD_TV}",
        "docs": args.docs, "words": args.words, "seeds": args.seeds, "n_jobs": N_JOBS,
        "runs": [], "summary": {},
    }
    for seed in range(args.seeds):
        results["runs"].append(run_seed(seed, args, args.methods))
    runs = results["runs"]
    for name in runs[0]:
        results["summary"][name] = medians([r[name] for r in runs], runs[0][name])
    true_perp = results["summary"]["true_topics"]["perplexity"]
    print(f"\nD = {args.docs}, W = {args.words}, K = {K}: true-topic perplexity {true_perp:.1f} "
          f"(medians over {args.seeds} seeds)")
    print(f"{'method':>13} {'seconds':>8} {'perplexity':>10} {'vs true':>8} {'TV':>6} "
          f"{'TVmax':>6} {'bad':>4}")
    for name, row in results["summary"].items():
        if name == "true_topics":
            continue
        print(f"{name:>13} {row['seconds']:8.1f} {row['perplexity']:10.1f} "
              f"{100 * row['perplexity_vs_true']:+7.1f}% {row['tv']:6.3f} {row['tv_max']:6.3f} "
              f"{row['bad']:4.0f}")
    cli.write_results(results, args.out, plot)


if __name__ == "__main__":
    main()
