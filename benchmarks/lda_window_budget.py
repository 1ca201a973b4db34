"""Averaging rules where a time budget stops the chain: ``SCIRLDA`` defaults with
``max_time`` on the semi-synthetic corpora of ``lda_semisynthetic.py`` (true topics known),
streamed, every rule of ``lda_averaging.py`` (windows and polynomial weights) scored on the
same chain, on the topics ``components_`` averages: held-out perplexity and L1 to the true
topics (``harness.semisynthetic.topic_recovery``).

A budget is in seconds (``--budgets``): half of tomotopy-100's time is what
``lda_semisynthetic.py --methods tomotopy_2`` measures on the same machine. The chains depend
on the machine's speed (the steps a budget allows); the rules' order on one chain does not.

    SIMPLEXSG_DATA=/path/to/data python benchmarks/lda_window_budget.py --sources gcide \\
        --K 100 --beta 0.1 --size 100000 --budgets 17.25 34.5 --seeds 2
"""
import numpy as np
import scipy.sparse as sp

from lda_averaging import local_topics, rule_averages
from lda_semisynthetic import prepare, run_name
from simplexsg import SCIRLDA
from simplexsg.readers import UCIBowCorpus

from harness import children, cli
from harness.evaluation import completion_perplexity
from harness.semisynthetic import ALPHA, REFERENCE_ITERATIONS, topic_recovery


def score_chain(folder, K, beta, budget, seed, threads):
    """One chain of ``budget`` seconds: its steps and each rule's perplexity and L1."""
    truth = np.load(folder / "truth.npy")
    score = completion_perplexity(sp.load_npz(folder.parent / "test.npz"), n_jobs=threads)

    def fit():
        return SCIRLDA(K, doc_topic_prior=ALPHA, topic_word_prior=beta, max_time=budget,
                       max_iter=10_000, random_state=seed, n_jobs=threads).fit(
                           UCIBowCorpus(folder / "docword.txt"))

    kept = local_topics(fit)
    return dict(steps=len(kept), rules={
        rule: dict(perplexity=float(score(topics, ALPHA)),
                   recovery=float(topic_recovery(topics, truth)))
        for rule, topics in rule_averages(kept).items()})


def main():
    parser = cli.Parser(__file__, __doc__, data=True, seeds=1,
                        quick=dict(sources=["news"], size=10_000, K=20, test=300,
                                   budgets=[1.0], reference_iterations=200))
    parser.add_argument("--sources", nargs="+", default=["gcide"])
    parser.add_argument("--size", type=int, default=100_000, help="training documents")
    parser.add_argument("--K", type=int, default=100)
    parser.add_argument("--beta", type=float, default=0.1)
    parser.add_argument("--budgets", type=float, nargs="+", default=[17.25],
                        help="max_time of the fits, seconds")
    parser.add_argument("--test", type=int, default=1000, help="held-out documents")
    parser.add_argument("--reference-iterations", type=int, default=REFERENCE_ITERATIONS)
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--workdir", default="/tmp/lda_semisynthetic")
    args = parser.parse_args()
    results = dict(settings=vars(args), alpha=ALPHA, chains=[])
    for source, _, folder, _ in children.prepared(
            args.sources, [args.size], lambda source, D: prepare(args, source, D),
            lambda source, D: run_name(args, source, D)):
        for budget in args.budgets:
            for seed in range(args.seeds):
                chain = dict(source=source, budget=budget, seed=seed,
                             **score_chain(folder, args.K, args.beta, budget, seed,
                                           args.threads))
                results["chains"].append(chain)
                print(f"{source} {budget:g} s, seed {seed}, {chain['steps']} steps: " + "; ".join(
                    f"{rule} {r['perplexity']:.1f}, {r['recovery']:.3f}"
                    for rule, r in chain["rules"].items()), flush=True)
                cli.write_results(results, args.out)
    cli.write_results(results, args.out)


if __name__ == "__main__":
    main()
