"""One machine at scale: SCIRLDA streaming synthetic corpora of 10^5 and 10^6 documents from
UCI files, its peak memory and time per document, against tomotopy in memory.

For each size D, the corpus (``harness.corpora.synthetic_chunks``: Zipf word frequencies over
20,000 words, 100 true topics of Dirichlet concentration --concentration per word,
Poisson(--length) tokens a document) is written to a UCI bag-of-words file in chunks (never
held in full); the first --test documents are held out, in memory. Then, each in its own
process so that its peak resident memory (``harness.measure.peak_rss_mb`` in the child) is
its own:

* ``scir``: ``SCIRLDA(n_components=K, topic_word_prior=--beta, random_state=s, n_jobs=n)``
  for each n of --threads and s = 0, ..., --seeds - 1 (the chains' progress varies with the
  seed: one seed can reach tomotopy's perplexity in two thirds of another's time), no other argument
  (unless --scir-params or --passes), fitted on
  ``UCIBowCorpus(path)`` (streamed, constant memory) with ``evaluate_every`` giving the
  held-out perplexity about --evaluations times in the fit (its training seconds count
  reading and parsing the file, pass after pass, and not the evaluations);
* ``tomotopy``: the corpus loaded in memory, ``LDAModel`` (alpha 0.1, eta --beta, optimisation
  off), 100 iterations on 1 worker (and on 2 with --tomotopy-workers 1 2), the perplexity
  after 10, 25, 50 and 100 iterations; its training seconds do not count loading the corpus
  and building the model, recorded apart (``load_seconds``).

One evaluator: document completion (``simplexsg.metrics``: each test document's tokens shuffled
with a seed and halved, the first half folded in by 100 Gibbs sweeps, 50 discarded, the second
scored) for both; ours is ``LDA.perplexity`` (the same split; the fold-in's stream is the
model's, which moves the value by about 0.04%). Reported: peak memory, seconds per document
seen, and the time the streamed fit takes to reach tomotopy's perplexity after 100 iterations
against tomotopy's time for them; and, to place both, the perplexity of the true topics and of
the unigram model (``synthetic_references``): a fit at or above the unigram's has found no
topics yet.

    python benchmarks/lda_scale.py --sizes 100000 1000000 --workdir /tmp/lda_scale \\
        --out benchmarks/results/lda_scale.json
"""
import argparse
import json
import subprocess
import sys
import time
from pathlib import Path

import scipy.sparse as sp

from harness import cli, peers
from harness.measure import peak_rss_mb
from harness.corpora import SYNTH_CONCENTRATION, synthetic_chunks, synthetic_references
from harness.evaluation import completion_perplexity
from harness.semisynthetic import write_uci

ALPHA = 0.1
TOMOTOPY_CHECKPOINTS = (10, 25, 50, 100)
CHUNK = 20_000


def write_corpus(D, length, n_test, folder, concentration):
    """Write D training documents to ``folder/docword.txt`` (UCI, ``write_uci``) and the
    held-out ones, the first ``n_test`` drawn, to ``folder/test.npz``; return (path, tokens).
    The file is written once per size."""
    folder.mkdir(parents=True, exist_ok=True)
    path, test_path = folder / "docword.txt", folder / "test.npz"
    if not (path.with_suffix(".json").is_file() and test_path.is_file()):
        test = []

        def training_chunks():
            for X in synthetic_chunks(D + n_test, length, CHUNK, concentration):
                missing = n_test - sum(t.shape[0] for t in test)   # the first: the test set
                if missing > 0:
                    test.append(X[:missing])
                    X = X[missing:]
                yield X
        write_uci(training_chunks(), path)
        sp.save_npz(test_path, sp.vstack(test, format="csr"))
    return path, int(json.loads(path.with_suffix(".json").read_text())["tokens"])


def child(args):
    """Run one method in this process; print its result as JSON."""
    from simplexsg import SCIRLDA
    from simplexsg.datasets import UCIBowCorpus, load_uci_bow

    folder = Path(args.child_folder)
    X_test = sp.load_npz(folder / "test.npz")
    if args.child == "scir":
        corpus = UCIBowCorpus(folder / "docword.txt")
        n_docs = len(corpus)
        # evaluate about --evaluations times over the fit: its steps are known once the
        # minibatches are (simplexsg.lda.defaults.fit_length, the plan fit makes)
        from simplexsg.corpus import BowStream
        from simplexsg.lda.defaults import DEFAULT_SWEEPS, fit_length
        from simplexsg.lda.inputs import mean_document_length
        params = json.loads(args.scir_params)
        total = fit_length(
            params.get("batch_size"), args.passes, None, n_docs, n_docs,
            lambda: mean_document_length(BowStream(corpus, corpus.n_features)),
            n_topics=args.K, n_words=corpus.n_features,
            n_gibbs=params.get("n_gibbs", DEFAULT_SWEEPS)).steps_from(0)
        model = SCIRLDA(args.K, topic_word_prior=args.beta, random_state=args.seed,
                        n_jobs=args.workers, max_iter=args.passes,
                        evaluate_every=max(1, total // args.evaluations), **params)
        start = time.perf_counter()
        model.fit(corpus, X_heldout=X_test)
        wall = time.perf_counter() - start
        result = dict(wall_seconds=wall, training_seconds=model.training_seconds_,
                      steps=model.n_batch_iter_, batch_size=model.batch_size_,
                      passes=model.n_iter_, documents_seen=model.n_documents_seen_,
                      seconds_per_document=model.training_seconds_ / model.n_documents_seen_,
                      curve=[dict(seconds=e["seconds"], perplexity=e["perplexity"],
                                  step=e["step"]) for e in model.history_],
                      final_perplexity=model.perplexity(X_test))
    else:
        start = time.perf_counter()
        X = load_uci_bow(folder / "docword.txt")[0].tocsr()
        model = peers.tomotopy_model(X, args.K, ALPHA, args.beta, seed=0)
        load_seconds = time.perf_counter() - start
        del X
        score = completion_perplexity(X_test, n_jobs=1)
        curve = [dict(iterations=it, seconds=fit.seconds, perplexity=score(fit.topics, fit.alpha))
                 for it, fit in peers.tomotopy_train(model, TOMOTOPY_CHECKPOINTS, X_test.shape[1],
                                                     ALPHA, args.beta, args.workers)]
        result = dict(curve=curve, workers=args.workers, load_seconds=load_seconds)
    result["peak_rss_mb"] = peak_rss_mb()
    print(json.dumps(result))


def run_child(args, folder, method, **extra):
    command = [sys.executable, __file__, "--child", method, "--child-folder", str(folder),
               "--K", str(args.K), "--beta", str(args.beta),
               "--evaluations", str(args.evaluations), "--scir-params", args.scir_params]
    if args.passes:
        command += ["--passes", str(args.passes)]
    for key, value in extra.items():
        command += [f"--{key}", str(value)]
    out = subprocess.run(command, capture_output=True, text=True, check=True,
                         cwd=Path(__file__).parent)
    return json.loads(out.stdout.strip().splitlines()[-1])


def time_to_reach(curve, target):
    """Training seconds of the first checkpoint at or below ``target`` perplexity, or None."""
    return next((e["seconds"] for e in curve if e["perplexity"] <= target), None)


def main():
    parser = cli.Parser(__file__, __doc__, seeds=1,
                        seeds_help="random_state 0, ..., N - 1 of SCIRLDA (one fit each)",
                        quick=dict(sizes=[10_000], test=200, K=20, threads=[1],
                                   evaluations=5))
    parser.add_argument("--sizes", type=int, nargs="+", default=[100_000, 1_000_000])
    parser.add_argument("--length", type=int, default=100, help="mean tokens per document")
    parser.add_argument("--test", type=int, default=1000, help="held-out documents")
    parser.add_argument("--K", type=int, default=100)
    parser.add_argument("--concentration", type=float, default=SYNTH_CONCENTRATION,
                        help="the true topics' Dirichlet concentration per word (smaller: "
                             "topics that are easier to tell apart)")
    parser.add_argument("--beta", type=float, default=0.1)
    parser.add_argument("--threads", type=int, nargs="*", default=[1, 2],
                        help="n_jobs of SCIRLDA (one fit each; none: tomotopy only)")
    parser.add_argument("--evaluations", type=int, default=20)
    parser.add_argument("--tomotopy-workers", type=int, nargs="*", default=[1],
                        help="tomotopy's workers (one fit each; none: ours only)")
    parser.add_argument("--scir-params", default="{}",
                        help="JSON of SCIRLDA overrides (default: none, the defaults)")
    parser.add_argument("--passes", type=int,
                        help="SCIRLDA's max_iter (default: None, the default passes)")
    parser.add_argument("--workdir", default="/tmp/lda_scale")
    parser.add_argument("--child", choices=["scir", "tomotopy"], help=argparse.SUPPRESS)
    parser.add_argument("--child-folder", help=argparse.SUPPRESS)
    parser.add_argument("--workers", type=int, default=1, help=argparse.SUPPRESS)
    parser.add_argument("--seed", type=int, default=0, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        return child(args)
    results = dict(settings=vars(args), alpha=ALPHA, sizes={})
    for D in args.sizes:
        folder = Path(args.workdir) / (f"D{D}_L{args.length}" + (
            "" if args.concentration == SYNTH_CONCENTRATION else f"_c{args.concentration}"))
        start = time.perf_counter()
        path, tokens = write_corpus(D, args.length, args.test, folder, args.concentration)
        print(f"D={D}: {tokens} tokens in {path} ({time.perf_counter() - start:.0f} s to write)",
              flush=True)
        references = synthetic_references(
            completion_perplexity(sp.load_npz(folder / "test.npz"), n_jobs=1),
            args.concentration)
        print("  references: the true topics {true_topics:.1f}, the unigram model {unigram:.1f}"
              .format(**references), flush=True)
        entry = dict(documents=D, tokens=tokens, file_mb=path.stat().st_size / 2**20,
                     references=references)
        ours_runs = [(f"scir_{threads}_seed{seed}", threads, seed)
                     for threads in args.threads for seed in range(args.seeds)]
        for key, threads, seed in ours_runs:
            ours = entry[key] = run_child(args, folder, "scir", workers=threads, seed=seed)
            print(f"  scir ({threads} thread{'s' * (threads > 1)}, seed {seed}): "
                  f"{ours['training_seconds']:.0f} s for {ours['passes']} passes, "
                  f"{ours['seconds_per_document'] * 1e6:.0f} us per document, "
                  f"{ours['peak_rss_mb']:.0f} MB, final perplexity "
                  f"{ours['final_perplexity']:.1f}", flush=True)
        for workers in args.tomotopy_workers:
            t = entry[f"tomotopy_{workers}"] = run_child(args, folder, "tomotopy",
                                                         workers=workers)
            final = t["curve"][-1]
            print(f"  tomotopy ({workers} worker{'s' * (workers > 1)}): 100 iterations "
                  f"{final['seconds']:.0f} s, perplexity {final['perplexity']:.1f}, "
                  f"{t['peak_rss_mb']:.0f} MB", flush=True)
            for key, threads, seed in ours_runs:
                reach = time_to_reach(entry[key]["curve"], final["perplexity"])
                t[f"{key}_seconds_to_reach_100"] = reach
                t[f"{key}_time_ratio"] = None if reach is None else reach / final["seconds"]
                print(f"    scir ({threads} thread{'s' * (threads > 1)}, seed {seed}) reaches it "
                      f"in {'never' if reach is None else f'{reach:.0f} s'}"
                      + ("" if reach is None else f" ({reach / final['seconds']:.2f} of its time)"),
                      flush=True)
        results["sizes"][str(D)] = entry
    cli.write_results(results, args.out)


if __name__ == "__main__":
    main()
