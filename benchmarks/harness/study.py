"""The LDA study's grid, shared by ``lda_study.py`` (the defaults against the peers) and the
paired studies of our own settings (``lda_levers.py``, ``lda_averaging.py``,
``lda_passes.py``): its corpora (``corpora.LDA_GROUPS``), K by corpus size, alpha 0.1, beta in
{0.01, 0.1}, its evaluator (``evaluation.fixed_point_perplexity``), one thread; and the paired
studies' summary of ratios.
"""
import statistics

from threadpoolctl import threadpool_limits

from . import corpora
from .evaluation import fixed_point_perplexity

ALPHA, BETAS = 0.1, (0.01, 0.1)
K_SMALL, K_LARGE, LARGE_TOKENS = (20, 50, 100, 200), (50, 100), 300_000  # training tokens
#: The short form of a paired study: the bundled corpus, one K, one beta, one seed.
QUICK = dict(corpora=["wiki"], K=[20], betas=[0.1], seeds=1)


def add_grid_options(parser, corpora_default):
    """``--corpora`` (names or groups), ``--K`` (default: by corpus size), ``--betas``."""
    parser.add_argument("--corpora", nargs="+", default=corpora_default,
                        help="names, or tuning / heldout / all")
    parser.add_argument("--K", nargs="+", type=int,
                        help=f"default: {K_SMALL}, or {K_LARGE} above {LARGE_TOKENS} "
                        "training tokens")
    parser.add_argument("--betas", nargs="+", type=float, default=list(BETAS))


def corpus_stats(name, X_train, X_test):
    tokens = int(X_train.sum())
    return {"group": corpora.lda_group_of(name), "D_train": X_train.shape[0],
            "D_test": X_test.shape[0], "W": X_train.shape[1], "train_tokens": tokens,
            "mean_tokens_per_doc": round(tokens / X_train.shape[0], 2)}


def study_corpora(names, data_dir, results):
    """Yield ``(name, X_train, score, Ks)`` for each corpus that loads: ``score`` the shared
    evaluator on its test set, ``Ks`` the grid's K for its size. Each corpus's statistics (or
    why it was skipped) go to ``results["corpora"]`` (``results["skipped"]``)."""
    for name in names:
        try:
            X_train, X_test = corpora.lda_corpus(name, data_dir)
        except FileNotFoundError as exc:
            print(f"skipping {name}: {exc}", flush=True)
            results["skipped"][name] = str(exc)
            continue
        stats = results["corpora"][name] = corpus_stats(name, X_train, X_test)
        score = fixed_point_perplexity(X_test)
        if name in corpora.SYNTHETIC:
            stats["references"] = corpora.synthetic_references(score)
        print(f"{name}: {stats}", flush=True)
        yield name, X_train, score, (K_SMALL if stats["train_tokens"] < LARGE_TOKENS
                                     else K_LARGE)


def study_grid(args, results):
    """Yield ``(corpus, X_train, score, K, beta, seed)`` over the study's grid on one thread:
    the corpora ``args.corpora`` (their statistics go to ``results``), ``args.K`` (None: K by
    corpus size), ``args.betas``, seeds 0, ..., ``args.seeds`` - 1."""
    with threadpool_limits(1):
        for name, X_train, score, grid in study_corpora(
                corpora.lda_corpus_names(args.corpora), args.data, results):
            for K in args.K or grid:
                for beta in args.betas:
                    for seed in range(args.seeds):
                        yield name, X_train, score, K, beta, seed


def ratio_summary(ratios):
    """Median, smallest and largest of perplexity ratios, and how many are beyond 1%."""
    return dict(rows=len(ratios), median=statistics.median(ratios), min=min(ratios),
                max=max(ratios), worse_1pct=sum(r > 1.01 for r in ratios),
                better_1pct=sum(r < 0.99 for r in ratios))


def print_ratio_summary(summary, first_column):
    """One line per entry of ``summary`` (``ratio_summary``, and ``time_median`` if there)."""
    timed = any("time_median" in s for s in summary.values())
    print(f"{first_column:<22}{'rows':>5}{'median':>8}{'min':>8}{'max':>8}{'>1% worse':>11}"
          f"{'>1% better':>12}" + (f"{'time':>7}" if timed else ""))
    for name, s in summary.items():
        print(f"{name:<22}{s['rows']:>5}{s['median']:>8.3f}{s['min']:>8.3f}{s['max']:>8.3f}"
              f"{s['worse_1pct']:>11}{s['better_1pct']:>12}"
              + (f"{s['time_median']:>7.2f}" if timed else ""))
