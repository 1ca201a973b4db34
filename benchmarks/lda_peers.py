"""SCIR-LDA and SGRLD-LDA against peer LDA implementations on gensim's Wikipedia sample.

Data: ``load_wiki_sample()`` (200 train / 50 test articles, 12,623 words). Every method fits the
training matrix with K = 20, alpha = 0.1 and beta in {0.01, 0.1} at a few budgets (iterations or
passes), so each traces held-out perplexity against training time. A fitted model is scored by
ONE evaluator: ``document_completion_score`` on ``completion_split(X_test, random_state=0)``
(tokens shuffled per document, first half observed) with its normalised topic-word matrix and
its alpha, the proportions folded in by

* ``gibbs``: the Gibbs fold-in of ``simplexsg.lda.gibbs.fold_in`` (100 sweeps, 50 discarded, fixed
  seed) — the definition ``LDA.perplexity`` uses; and
* ``fixed_point``: the fixed-point fold-in of ``simplexsg.metrics`` (100 iterations), the
  evaluator of ``benchmarks/lda_study.py``.

A method is a function ``(X_train, seed, beta, budget) -> (topics (K, W), alpha, seconds)``
(the peers' runners of ``harness.peers``); seconds cover training plus any input conversion a
user of that library needs, not the evaluation. Add one by adding it to ``METHODS`` with its
budgets and the short form's (``--quick``: one seed, one budget a method).

    python benchmarks/lda_peers.py --seeds 3 --out benchmarks/results/lda_peers.json
"""
from functools import partial

from simplexsg import LDA
from simplexsg._optional import pyplot
from simplexsg.datasets import load_wiki_sample

from harness import cli, peers
from harness.evaluation import completion_perplexity, fixed_point_perplexity
from harness.measure import medians

K, ALPHA, BETAS = 20, 0.1, (0.01, 0.1)


def simplexsg_lda(sampler, X, seed, beta, budget):
    """simplexsg LDA(sampler), defaults, 1 thread; budget = passes."""
    return peers.simplexsg_fit(LDA(K, sampler=sampler, doc_topic_prior=ALPHA,
                                   topic_word_prior=beta, max_iter=budget, n_jobs=1,
                                   random_state=seed), X)


def peer(run, *args, **kwargs):
    """``run(X, K, ALPHA, beta, seed, *args, **kwargs)`` of ``harness.peers`` as a method."""
    return lambda X, seed, beta, budget: run(X, K, ALPHA, beta, seed, *args, budget, **kwargs)


#: method -> (fit function, budgets, the short form's budgets); the peers' budgets are:
#: scikit-learn max_iter; gensim passes (one chunk of all 200 documents per pass, float32:
#: float64 gives ~1.7% lower perplexity, 12 seeds: median 4363 against 4437); tomotopy and
#: lda iterations (tomotopy on 1 worker, no hyperparameter optimisation).
METHODS = {
    "scir": (partial(simplexsg_lda, "scir"), (10, 20, 40), (20,)),  # 20: the default max_iter
    "sgrld": (partial(simplexsg_lda, "sgrld"), (10, 20, 40), (20,)),
    "sklearn-online": (peer(peers.sklearn_fit, "online"), (5, 20), (5,)),
    "sklearn-batch": (peer(peers.sklearn_fit, "batch"), (20,), (20,)),
    "gensim": (peer(peers.gensim_fit), (10,), (10,)),
    "tomotopy": (peer(peers.tomotopy_fit), (100, 500), (100,)),
    "lda": (peer(peers.lda_fit), (500,), (100,)),
}


def evaluators(X_test):
    return {"gibbs": completion_perplexity(X_test), "fixed_point": fixed_point_perplexity(X_test)}


def plot(results, path):
    plt = pyplot()
    betas = results["betas"]
    fig, axes = plt.subplots(1, len(betas), figsize=(6 * len(betas), 4.5), squeeze=False)
    for ax, beta in zip(axes[0], betas):
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
    parser = cli.Parser(__file__, __doc__, quick=dict(seeds=1),
                        quick_help="one budget a method (METHODS)", seeds=3,
                        seeds_help="seeds 0, ..., N - 1 per method (default 3)")
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
        "K": K, "alpha": ALPHA, "betas": BETAS, "methods": {},
    }
    print(f"{'method':>15} {'beta':>5} {'budget':>6} {'seconds':>8} {'perplexity':>10} "
          f"{'fixed-pt':>9}  (medians over {args.seeds} seeds)")
    for name in args.methods:
        fit, budgets, quick_budgets = METHODS[name]
        results["methods"][name] = curves = {}
        for beta in BETAS:
            curves[str(beta)] = []
            for budget in quick_budgets if args.quick else budgets:
                runs = []
                for seed in range(args.seeds):
                    topics, alpha, seconds = fit(data.X_train, seed, beta, budget)
                    runs.append({"seed": seed, "seconds": seconds,
                                 "perplexity": score["gibbs"](topics, alpha),
                                 "fixed_point": score["fixed_point"](topics, alpha)})
                point = {"budget": budget, "runs": runs,
                         **medians(runs, ("seconds", "perplexity", "fixed_point"), "median_")}
                curves[str(beta)].append(point)
                print(f"{name:>15} {beta:5} {budget:6} {point['median_seconds']:8.2f} "
                      f"{point['median_perplexity']:10.0f} {point['median_fixed_point']:9.0f}",
                      flush=True)
    cli.write_results(results, args.out, plot)


if __name__ == "__main__":
    main()
