"""What the mean local step (``local_topics="mean"``) does to the LDA posterior, against exact
collapsed Gibbs on a small synthetic corpus.

SCIR-LDA's default local step samples the topic assignments given the SCIR step's conditional
mean of the topics instead of the current topic sample (``simplexsg.lda``). This measures the
bias that approximation puts into the posterior-mean topics, the held-out perplexity and the
posterior spread, against

* the exact reference: collapsed Gibbs for LDA with the same alpha and beta (the ``lda``
  package's Cython sweep, driven here so that every iteration after burn-in is kept), run long.
  Its posterior-mean topics are the Rao-Blackwellised average of
  ``(n_kw + beta) / (n_k + W beta)``; its posterior std of phi_kw is from the law of total
  variance, ``E[Var(phi | z)] + Var(E[phi | z])`` with ``phi_k | z ~ Dirichlet(beta + n_k)``.
  A second reference chain (another seed) gives the noise floor of every distance.

Methods, each at alpha = 0.1 and beta in {0.01, 0.1}:

* ``scir-mean`` (the default), ``scir-sample`` (the paper's exact scheme) and ``sgrld``
  (SGRLDLDA, default ``local_topics="mean"``), all with default step sizes, batch 50;
  ``scir-mean-theta``: the default's step taken on theta instead of with theta integrated out
  (``simplexsg.lda.global_step.INTEGRATE_THETA`` False, the default until 2026-12-02);
* ``*-fullbatch``: the SCIR chains with batch = D, so the counts carry no minibatch noise and
  what remains is the local step (and Monte Carlo error);
* long chains driven by ``partial_fit`` (``--steps`` steps, the first half burn-in) so that the
  samples, theta normalised (drawn from the state's shapes where it holds them), are
  available: the spread of the chain, and the plain sample
  average next to ``components_`` (which for "mean" averages conditional means);
* ``*-fit``: ``fit()`` with every default (max_iter=None: 200 steps, half burn-in), what a user
  gets.

Distances: topics of a method are matched to the reference's by the Hungarian algorithm on the
total-variation cost ``0.5 |phi_a - phi_b|_1``; ``tv`` is the mean over topics of the matched
TV, ``tv_max`` the largest. Perplexity: ``document_completion_score`` on
``completion_split(X_test, random_state=0)`` with the Gibbs fold-in (100 sweeps, 50 discarded,
seed 0), as in ``lda_peers.py``. Spread: over the K x 5 entries (k, w) with the largest
reference posterior mean in each topic, the median of std_method / std_reference.
Everything is repeated for ``--seeds`` seeds (corpus and chains); tables show medians.

    python benchmarks/lda_local_topics.py --out benchmarks/results/lda_local_topics.json
"""
import time

import numpy as np

from unittest import mock

from simplexsg import LDA
from simplexsg._optional import pyplot
from simplexsg.datasets import make_lda_corpus
from simplexsg.lda import global_step
from simplexsg.lda.global_step import draw_theta
from simplexsg.simplex import to_simplex

from harness import cli
from harness.evaluation import completion_perplexity, match_topics
from harness.measure import medians, timed_fit

K, W, D_TRAIN, D_TEST, DOC_LENGTH = 5, 100, 150, 50, 20
ALPHA, TRUE_BETA, BETAS = 0.1, 0.1, (0.01, 0.1)
TOP_WORDS = 5
#: long-chain methods: name -> (sampler, local_topics, full batch?, theta integrated out?). The
#: full-batch chains (batch = D, no minibatch noise in the counts) isolate the local step's
#: approximation.
CHAINS = {"scir-mean": ("scir", "mean", False, True),
          "scir-mean-theta": ("scir", "mean", False, False),
          "scir-sample": ("scir", "sample", False, True), "sgrld": ("sgrld", "mean", False, True),
          "scir-mean-fullbatch": ("scir", "mean", True, True),
          "scir-mean-theta-fullbatch": ("scir", "mean", True, False),
          "scir-sample-fullbatch": ("scir", "sample", True, True)}


# ------------------------------------------------------------------ exact reference
def collapsed_gibbs(X, beta, seed, n_burn, n_keep):
    """Collapsed Gibbs for LDA (alpha = ALPHA, beta) on X; every iteration after burn-in kept.

    Returns (posterior mean of phi (K, W), posterior std of phi (K, W), seconds).
    """
    from lda._lda import _sample_topics
    from lda.utils import matrix_to_lists

    rng = np.random.default_rng(seed)
    WS, DS = (a.astype(np.intc) for a in matrix_to_lists(X))
    n_docs, n_words = X.shape
    ZS = rng.integers(K, size=WS.size).astype(np.intc)
    nzw = np.zeros((K, n_words), dtype=np.intc, order="F")
    np.add.at(nzw, (ZS, WS), 1)
    ndz = np.zeros((n_docs, K), dtype=np.intc)
    np.add.at(ndz, (DS, ZS), 1)
    nz = np.bincount(ZS, minlength=K).astype(np.intc)
    alpha, eta = np.full(K, ALPHA), np.full(n_words, beta)
    s_m, s_m2, s_v = (np.zeros((K, n_words)) for _ in range(3))
    start = time.perf_counter()
    for it in range(n_burn + n_keep):
        _sample_topics(WS, DS, ZS, nzw, ndz, nz, alpha, eta, rng.random(WS.size))
        if it >= n_burn:
            total = (nz + n_words * beta)[:, None]
            m = (nzw + beta) / total
            s_m += m
            s_m2 += m * m
            s_v += m * (1.0 - m) / (total + 1.0)
    seconds = time.perf_counter() - start
    mean = s_m / n_keep
    var = s_v / n_keep + np.maximum(s_m2 / n_keep - mean ** 2, 0.0)
    return mean, np.sqrt(var), seconds


# ------------------------------------------------------------------ SG-MCMC
def sgmcmc_chain(X, beta, seed, sampler, local_topics, n_steps, batch_size):
    """partial_fit chain with the estimator's default step sizes; epochs of shuffled minibatches.

    Returns dict(components (K, W), sample_mean, sample_std (of to_simplex(theta_) over the
    steps after burn-in, aligned to components), seconds).
    """
    n_docs = X.shape[0]
    burn = n_steps // 2
    model = LDA(K, sampler=sampler, doc_topic_prior=ALPHA, topic_word_prior=beta,
                batch_size=batch_size, total_samples=n_docs, burn_in=burn,
                local_topics=local_topics, random_state=seed)
    order_rng = np.random.default_rng([seed, 1])
    order, position = order_rng.permutation(n_docs), 0
    s, s2 = np.zeros((K, X.shape[1])), np.zeros((K, X.shape[1]))
    start = time.perf_counter()
    for t in range(n_steps):
        if position >= n_docs:
            order, position = order_rng.permutation(n_docs), 0
        model.partial_fit(X[np.sort(order[position:position + batch_size])])
        position += batch_size
        if t >= burn:
            phi = to_simplex(draw_theta(model.topic_state_, model.topic_state_scale_,
                                        np.random.SeedSequence([seed, 2, t])))
            s += phi
            s2 += phi * phi
    seconds = time.perf_counter() - start
    n_kept = n_steps - burn
    mean = s / n_kept
    return dict(components=model.components_, sample_mean=mean,
                sample_std=np.sqrt(np.maximum(s2 / n_kept - mean ** 2, 0.0)), seconds=seconds)


def fit_defaults(X, beta, seed, sampler, local_topics):
    model, seconds = timed_fit(LDA(K, sampler=sampler, doc_topic_prior=ALPHA,
                                   topic_word_prior=beta, local_topics=local_topics,
                                   random_state=seed), X)
    return model.components_, seconds


# ------------------------------------------------------------------ comparisons
def perplexity_fn(X_test):
    perplexity = completion_perplexity(X_test)
    return lambda topics: perplexity(topics, ALPHA)


def run_seed(seed, beta, args):
    X, true_topics, _ = make_lda_corpus(D_TRAIN + D_TEST, W, K, doc_length=DOC_LENGTH,
                                        doc_topic_prior=ALPHA, topic_word_prior=TRUE_BETA,
                                        random_state=seed)
    X_train, X_test = X[:D_TRAIN], X[D_TRAIN:]
    perplexity = perplexity_fn(X_test)
    ref_mean, ref_std, ref_seconds = collapsed_gibbs(X_train, beta, [seed, 100],
                                                     args.ref_burn_in, args.ref_iter)
    ref_perp = perplexity(ref_mean)
    # top entries of each topic under the reference, for the spread comparison
    top = np.argsort(-ref_mean, axis=1)[:, :TOP_WORDS]
    rows = np.repeat(np.arange(K), TOP_WORDS)
    cols = top.ravel()

    def distances(topics):
        perm, tvs = match_topics(topics, ref_mean)
        perp = perplexity(topics)
        return perm, dict(tv=float(tvs.mean()), tv_max=float(tvs.max()), perplexity=perp,
                          perplexity_rel_diff=(perp - ref_perp) / ref_perp)

    out = {"reference": dict(perplexity=ref_perp, seconds=ref_seconds,
                             tv_to_true=float(match_topics(true_topics, ref_mean)[1].mean()),
                             true_topics_perplexity=perplexity(true_topics),
                             std_top_entries=ref_std[rows, cols].tolist(),
                             mean_top_entries=ref_mean[rows, cols].tolist())}
    b_mean, b_std, b_seconds = collapsed_gibbs(X_train, beta, [seed, 101], args.ref_burn_in,
                                               args.ref_iter)
    perm, entry = distances(b_mean)
    entry["spread_ratio"] = float(np.median(b_std[perm][rows, cols] / ref_std[rows, cols]))
    entry["seconds"] = b_seconds
    out["gibbs-2nd-chain"] = entry
    for name, (sampler, local_topics, full_batch, integrate) in CHAINS.items():
        with mock.patch.object(global_step, "INTEGRATE_THETA", integrate):
            chain = sgmcmc_chain(X_train, beta, seed, sampler, local_topics, args.steps,
                                 D_TRAIN if full_batch else args.batch_size)
        perm, entry = distances(chain["components"])
        perm_s, sample_avg = distances(chain["sample_mean"])
        entry["sample_avg_tv"] = sample_avg["tv"]
        entry["sample_avg_perplexity"] = sample_avg["perplexity"]
        std = chain["sample_std"][perm_s][rows, cols]
        entry["spread_ratio"] = float(np.median(std / ref_std[rows, cols]))
        entry["std_top_entries"] = std.tolist()
        entry["seconds"] = chain["seconds"]
        out[name] = entry
        if full_batch:
            continue
        with mock.patch.object(global_step, "INTEGRATE_THETA", integrate):
            components, seconds = fit_defaults(X_train, beta, seed, sampler, local_topics)
        entry = distances(components)[1]
        entry["seconds"] = seconds
        out[name + "-fit"] = entry
    return out


METRICS = ("tv", "tv_max", "sample_avg_tv", "perplexity", "perplexity_rel_diff", "spread_ratio",
           "seconds")


def summarise(runs):
    names = list(runs[0])
    table = {}
    for name in names:
        table[name] = medians([r[name] for r in runs],
                              [m for m in METRICS + ("tv_to_true", "true_topics_perplexity")
                               if m in runs[0][name]])
    return table


def plot(results, path):
    plt = pyplot()
    names = [n for n in results["summary"][str(BETAS[0])] if n != "reference"]
    fig, axes = plt.subplots(1, 2, figsize=(12, 4.5))
    width = 0.8 / len(BETAS)
    for i, beta in enumerate(BETAS):
        summary = results["summary"][str(beta)]
        x = np.arange(len(names)) + i * width
        axes[0].bar(x, [summary[n]["tv"] for n in names], width, label=f"beta = {beta}")
        axes[1].bar(x, [100 * summary[n]["perplexity_rel_diff"] for n in names], width,
                    label=f"beta = {beta}")
    for ax, label in zip(axes, ("mean TV per topic to collapsed Gibbs",
                                "perplexity vs collapsed Gibbs (%)")):
        ax.set_xticks(np.arange(len(names)) + width / 2, names, rotation=30, ha="right")
        ax.set_ylabel(label)
        ax.legend()
    fig.suptitle(f"K={K}, W={W}, D={D_TRAIN}, doc length {DOC_LENGTH}; medians over "
                 f"{results['seeds']} seeds")
    fig.tight_layout()
    fig.savefig(path, dpi=120)


def main():
    parser = cli.Parser(__file__, __doc__, seeds=3,
                        quick=dict(seeds=1, steps=400, ref_iter=2000, ref_burn_in=200))
    parser.add_argument("--steps", type=int, default=5000, help="SG-MCMC long-chain steps")
    parser.add_argument("--batch-size", type=int, default=50)
    parser.add_argument("--ref-iter", type=int, default=20000,
                        help="collapsed Gibbs iterations kept")
    parser.add_argument("--ref-burn-in", type=int, default=2000)
    args = parser.parse_args()

    results = {
        "data": f"make_lda_corpus({D_TRAIN} + {D_TEST} docs, W={W}, K={K}, doc_length="
                f"{DOC_LENGTH}, doc_topic_prior={ALPHA}, topic_word_prior={TRUE_BETA}, "
                "random_state=seed); first rows train, rest test",
        "reference": f"collapsed Gibbs ({args.ref_burn_in} burn-in + {args.ref_iter} kept "
                     "iterations, lda package sweep), alpha and beta as the methods",
        "methods": {"long chains": f"partial_fit, {args.steps} steps (half burn-in), batch "
                                   f"{args.batch_size}, default step sizes",
                    "*-fit": "fit() with every default"},
        "alpha": ALPHA, "betas": BETAS, "seeds": args.seeds, "runs": {}, "summary": {},
    }
    header = (f"{'beta':>5} {'method':>21} {'TV':>6} {'TVmax':>6} {'TVavg':>6} {'perp':>7} "
              f"{'dperp%':>7} {'sd-ratio':>8} {'sec':>6}")
    for beta in BETAS:
        runs = []
        for seed in range(args.seeds):
            runs.append(run_seed(seed, beta, args))
            print(f"beta {beta} seed {seed} done", flush=True)
        results["runs"][str(beta)] = runs
        results["summary"][str(beta)] = summary = summarise(runs)
        ref = summary["reference"]
        print(f"\nbeta = {beta}: collapsed Gibbs perplexity {ref['perplexity']:.2f} "
              f"(true topics {ref['true_topics_perplexity']:.2f}, TV(ref, true) "
              f"{ref['tv_to_true']:.3f}); medians over {args.seeds} seeds")
        print(header)
        for name, row in summary.items():
            if name == "reference":
                continue
            print(f"{beta:5} {name:>21} {row['tv']:6.3f} {row['tv_max']:6.3f} "
                  f"{row['sample_avg_tv'] if 'sample_avg_tv' in row else float('nan'):6.3f} "
                  f"{row['perplexity']:7.2f} {100 * row['perplexity_rel_diff']:+7.2f} "
                  f"{row.get('spread_ratio', float('nan')):8.2f} {row['seconds']:6.1f}")
    cli.write_results(results, args.out, plot)


if __name__ == "__main__":
    main()
