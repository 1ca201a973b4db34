"""LDA at scale where the topics can be learnt: semi-synthetic corpora (real topics, documents
drawn from them), streamed from UCI files; ours against tomotopy, gensim and scikit-learn at
equal time, by held-out perplexity and by recovery of the true topics.

The protocol of Arora et al. (2013): for each source corpus of the data folder (--sources),
K topics (--K) are fitted with topic-word prior beta (--beta) by a long tomotopy run
(``harness.semisynthetic.reference_topics``, cached in --workdir); D documents (--sizes) are
drawn from them (proportions ~ Dirichlet(0.1), lengths resampled from the source's own) and
written to a UCI file in chunks, never held in full; --test held-out documents are drawn apart
(the same for every D). Each method then runs in a process of its own, so that its peak
resident memory is its own, and reports a curve of (training seconds, held-out perplexity,
topic recovery):

* ``scir``: ``SCIRLDA(K, topic_word_prior=beta, n_jobs=--threads, random_state=seed)`` with
  nothing else, streamed from ``UCIBowCorpus(path)``, one fit per point of the curve: after
  1, 5 and 20 passes (``max_iter``) and with ``max_time`` a fraction (--time-fractions) of
  tomotopy-100's time on 2 workers: what a user who stops there gets;
* ``tomotopy_1``, ``tomotopy_2``: the corpus in memory, ``LDAModel`` (alpha 0.1, eta beta,
  optimisation off) on 1 and 2 workers, after 10, 25, 50 and 100 iterations (the seconds count
  building the model);
* ``gensim``: ``LdaMulticore`` (online VB, 2 workers, its defaults) streamed from the same
  file, a pass a point, while within the time of tomotopy-100 on 2 workers;
* ``sklearn``: ``LatentDirichletAllocation`` online VB streamed by ``partial_fit`` on blocks of
  the file, a pass a point, within the same time.

One evaluator for all (``harness.evaluation.completion_perplexity``: document completion, the
first half of each test document folded in by 100 Gibbs sweeps with the model's topics and
alpha 0.1, the second half scored), and one recovery measure (``topic_recovery``: mean L1 of
the true topics to the fitted ones, matched one-to-one). The two ends of the scale: the true
topics' perplexity and the unigram model's (the topics' average); ``gap closed`` =
(unigram - fit) / (unigram - truth).

    python benchmarks/lda_semisynthetic.py --sources news gcide --sizes 10000 100000 \\
        --workdir /tmp/lda_semisynthetic --out benchmarks/results/lda_semisynthetic.json

writes the results and their figure (``plot_curves``: perplexity and recovery against seconds
per method) beside them; ``--summary-only FILE ...`` prints saved results and redraws them.
"""
import argparse
import json
import time
from pathlib import Path

import numpy as np
import scipy.sparse as sp

from harness import children, cli, peers
from harness.measure import peak_rss_mb
from harness.evaluation import completion_perplexity
from harness.semisynthetic_plot import plot_curves
from harness.semisynthetic import (ALPHA, REFERENCE_ITERATIONS, corpus_chunks,
                                   heldout_documents, reference_topics, topic_recovery,
                                   write_uci)

TOMOTOPY_CHECKPOINTS = (10, 25, 50, 100)
SCIR_PASSES = (1, 5, 20)
#: Documents per ``partial_fit`` call of scikit-learn's streamed fit (its own minibatches of
#: 128 documents run inside each call).
SKLEARN_BLOCK = 2000


# ---------------------------------------------------------------------------- the corpora
def prepare(args, source, D):
    """The folder of (source, K, beta, D): ``docword.txt`` and ``test.npz`` (written once),
    ``truth.npy``; returns (folder, the file's info)."""
    truth, lengths = reference_topics(source, args.K, args.beta, args.data,
                                      Path(args.workdir) / "reference",
                                      iterations=args.reference_iterations)
    base = Path(args.workdir) / (f"{source}_K{args.K}_beta{args.beta:g}"
                                 f"_it{args.reference_iterations}")
    folder = base / f"D{D}"
    folder.mkdir(parents=True, exist_ok=True)
    np.save(folder / "truth.npy", truth)
    test_path = base / "test.npz"
    if not test_path.is_file():
        sp.save_npz(test_path, heldout_documents(truth, lengths, args.test, ALPHA, seed=1))
    path = folder / "docword.txt"
    if not path.with_suffix(".json").is_file():
        write_uci(corpus_chunks(truth, lengths, D, ALPHA, seed=0), path)
    return folder, json.loads(path.with_suffix(".json").read_text())


def run_name(args, source, D):
    """The name of (source, K, beta, D) in the results and messages."""
    return f"{source}_K{args.K}_beta{args.beta:g}_D{D}"


def references(folder, truth):
    """Perplexity of the true topics and of the unigram model (their average) on the test set."""
    score = completion_perplexity(sp.load_npz(folder.parent / "test.npz"), n_jobs=2)
    return {"true_topics": score(truth, ALPHA), "unigram": score(truth.mean(axis=0)[None], ALPHA)}


# ---------------------------------------------------------------------------- the children
def point(fit, score, truth, **extra):
    """One point of a curve: seconds, perplexity and recovery of ``fit`` (a ``peers.Fit``)."""
    return dict(seconds=fit.seconds, perplexity=score(fit.topics, fit.alpha),
                recovery=topic_recovery(fit.topics, truth), **extra)


def child(args):
    """Run one method in this process; print its result as JSON."""
    from simplexsg import SCIRLDA
    from simplexsg.datasets import load_uci_bow
    from simplexsg.readers import UCIBowCorpus

    folder = Path(args.child_folder)
    truth = np.load(folder / "truth.npy")
    score = completion_perplexity(sp.load_npz(folder.parent / "test.npz"), n_jobs=2)
    path = folder / "docword.txt"
    result = {}
    if args.child == "scir":
        run = json.loads(args.run)
        model = SCIRLDA(args.K, topic_word_prior=args.beta, n_jobs=args.threads,
                        random_state=args.seed, **run)
        start = time.perf_counter()
        model.fit(UCIBowCorpus(path))
        wall = time.perf_counter() - start
        fit = peers.Fit(model.components_, model.doc_topic_prior_, model.training_seconds_)
        curve = [point(fit, score, truth, passes=model.n_iter_, steps=model.n_batch_iter_,
                       wall_seconds=wall, **run)]
        result = dict(batch_size=model.batch_size_, stop_reason=model.stop_reason_)
    elif args.child.startswith("tomotopy"):
        start = time.perf_counter()
        X = load_uci_bow(path)[0].tocsr()
        load = time.perf_counter() - start
        curve = [point(fit, score, truth, iterations=it) for it, fit in peers.tomotopy_curve(
            X, args.K, ALPHA, args.beta, 0, TOMOTOPY_CHECKPOINTS, args.threads)]
        result = dict(load_seconds=load)
    elif args.child == "gensim":
        curve = [point(fit, score, truth, passes=p) for p, fit in peers.gensim_stream_passes(
            UCIBowCorpus(path), args.K, ALPHA, args.beta, 0, args.threads, args.max_passes,
            args.time_limit)]
    else:
        corpus = UCIBowCorpus(path)
        curve = [point(fit, score, truth, passes=p) for p, fit in peers.sklearn_stream_passes(
            lambda: corpus.iter_csr(SKLEARN_BLOCK), corpus.n_documents, args.K, ALPHA, args.beta,
            0, args.threads, args.max_passes, args.time_limit)]
    result.update(curve=curve,
                  peak_rss_mb=peak_rss_mb())
    print(json.dumps(result))


def run_child(args, folder, method, **extra):
    return children.run_child(__file__, method, folder, K=args.K, beta=args.beta, **extra)


# ---------------------------------------------------------------------------- summaries
def gap_closed(perplexity, refs):
    return (refs["unigram"] - perplexity) / (refs["unigram"] - refs["true_topics"])


def first_reaching(curve, perplexity, recovery):
    """The first point (fewest seconds) at or below both ``perplexity`` and ``recovery``."""
    hits = [p for p in curve if p["perplexity"] <= perplexity and p["recovery"] <= recovery]
    return min(hits, key=lambda p: p["seconds"], default=None)


def at_time(curve, seconds):
    """The last point of ``curve`` within ``seconds`` (None if none)."""
    within = [p for p in curve if p["seconds"] <= seconds]
    return max(within, key=lambda p: p["seconds"], default=None)


def summarise(entry):
    """Ratios against tomotopy-100 (2 workers) and the equal-time comparisons, printed."""
    refs, target = entry["references"], entry["methods"]["tomotopy_2"]["curve"][-1]
    lines = [f"    truth {refs['true_topics']:.1f}, unigram {refs['unigram']:.1f}; tomotopy-100 "
             f"(2 workers) {target['perplexity']:.1f}, L1 {target['recovery']:.3f}, "
             f"{target['seconds']:.1f} s"]
    for method, result in entry["methods"].items():
        for p in result["curve"]:
            lines.append(f"    {method:<12} {p['seconds']:7.1f} s  perplexity "
                         f"{p['perplexity']:8.1f}  L1 {p['recovery']:.3f}  gap closed "
                         f"{gap_closed(p['perplexity'], refs):5.2f}  "
                         + " ".join(f"{k}={p[k]}" for k in ("passes", "iterations", "max_time")
                                    if k in p))
    scir = entry["methods"].get("scir")
    if scir:
        hit = first_reaching(scir["curve"], target["perplexity"], target["recovery"])
        entry["scir_time_ratio"] = None if hit is None else hit["seconds"] / target["seconds"]
        lines.append("    scir reaches tomotopy-100 on both measures: "
                     + ("never" if hit is None else
                        f"in {hit['seconds']:.1f} s ({entry['scir_time_ratio']:.2f} of its time)"))
    print("\n".join(lines), flush=True)


def main():
    parser = cli.Parser(__file__, __doc__, data=True, seeds=1, summary_only=True,
                        quick=dict(sources=["news"], sizes=[10_000], K=20, test=300,
                                   time_fractions=[0.5], reference_iterations=200))
    parser.add_argument("--sources", nargs="+", default=["news", "gcide"])
    parser.add_argument("--sizes", type=int, nargs="+", default=[10_000, 100_000])
    parser.add_argument("--K", type=int, default=100)
    parser.add_argument("--beta", type=float, default=0.01)
    parser.add_argument("--test", type=int, default=1000, help="held-out documents")
    parser.add_argument("--reference-iterations", type=int, default=REFERENCE_ITERATIONS,
                        help="tomotopy iterations of the reference topics' fit")
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--time-fractions", type=float, nargs="*", default=[0.25, 0.5],
                        help="scir's max_time as fractions of tomotopy-100's time (2 workers)")
    parser.add_argument("--scir-passes", type=int, nargs="*", default=list(SCIR_PASSES))
    parser.add_argument("--scir-params", default="{}",
                        help="JSON of SCIRLDA overrides for every scir run (default: none)")
    parser.add_argument("--methods", nargs="+",
                        default=["tomotopy_2", "tomotopy_1", "scir", "gensim", "sklearn"])
    parser.add_argument("--workdir", default="/tmp/lda_semisynthetic")
    children.add_child_options(parser)
    parser.add_argument("--run", default="{}", help=argparse.SUPPRESS)
    parser.add_argument("--seed", type=int, default=0, help=argparse.SUPPRESS)
    parser.add_argument("--max-passes", type=int, default=50, help=argparse.SUPPRESS)
    parser.add_argument("--time-limit", type=float, default=0.0, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        return child(args)
    if args.summary_only:
        return children.reprint(args.summary_only, summarise, plot_curves)
    results = dict(settings={k: v for k, v in vars(args).items() if k != "out"}, alpha=ALPHA,
                   runs={})
    for source, D, folder, info in children.prepared(
            args.sources, args.sizes, lambda source, D: prepare(args, source, D),
            lambda source, D: run_name(args, source, D)):
        key = run_name(args, source, D)
        print(f"{key}: {info['tokens']} tokens, {info['documents']} documents", flush=True)
        entry = results["runs"][key] = dict(
            source=source, documents=D, tokens=info["tokens"],
            references=references(folder, np.load(folder / "truth.npy")), methods={})
        methods, common = entry["methods"], dict(threads=args.threads)
        methods["tomotopy_2"] = run_child(args, folder, "tomotopy_2", threads=2)
        budget = methods["tomotopy_2"]["curve"][-1]["seconds"]
        if "tomotopy_1" in args.methods:
            methods["tomotopy_1"] = run_child(args, folder, "tomotopy_1", threads=1)
        overrides = json.loads(args.scir_params)
        runs = ([dict(max_iter=p, **overrides) for p in args.scir_passes]
                + [dict(max_time=round(f * budget, 2), **overrides)
                   for f in args.time_fractions])
        if "scir" in args.methods and runs:  # (no runs: the corpora and tomotopy alone)
            points = [run_child(args, folder, "scir", run=json.dumps(run), seed=seed,
                                **common) for seed in range(args.seeds) for run in runs]
            methods["scir"] = dict(
                curve=sorted((p["curve"][0] for p in points), key=lambda p: p["seconds"]),
                peak_rss_mb=max(p["peak_rss_mb"] for p in points),
                batch_size=points[0]["batch_size"])
        for peer in ("gensim", "sklearn"):
            if peer in args.methods:
                methods[peer] = run_child(args, folder, peer, time_limit=budget, **common)
        summarise(entry)
    cli.write_results(results, args.out, plot=plot_curves)


if __name__ == "__main__":
    main()
