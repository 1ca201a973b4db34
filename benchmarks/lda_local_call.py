"""The fixed cost of a training step's local call, in milliseconds: the LDA local kernel on one
default minibatch, whole and in parts, and the transpose of its counts for the global step.

Per corpus of the data folder (--corpora), the topics a training call reads (``_local``, the
local topics of the last step) after a short default fit (``SCIRLDA(K,
max_time=--fit-seconds)``), so that the documents' topic usage is a fit's, then one minibatch
of --docs documents drawn at random, and the median of --repeats runs of:

* ``call``: ``gibbs_sweeps`` as a training step runs it (``n_gibbs`` sweeps, ``gibbs_burn_in``
  discarded, counts in expectation);
* ``one sweep``: the same with one sweep kept: the call's fixed part plus one sweep;
* ``tables``: the same words, no tokens: the per-word tables alone (with no document long
  enough to draw by rejection, no word's top topics: the columns and alpha sums only);
* ``transpose``: ``transpose_counts`` of the call's counts (words x K to topic rows).

On short documents and a large vocabulary (gcide, healthtweets) the fixed part is most of a
call; on long ones (news) the sweeps are.

    SIMPLEXSG_DATA=/path/to/data python benchmarks/lda_local_call.py \\
        --out benchmarks/results/lda_local_call.json
"""
from pathlib import Path

import numpy as np

from simplexsg import SCIRLDA
from simplexsg._ext._lda_gibbs import gibbs_sweeps
from simplexsg._ext._sparse import transpose_counts
from simplexsg._random import document_streams
from simplexsg.datasets import load_uci_bow
from simplexsg.lda.defaults import DEFAULT_SWEEP_BURN_IN, DEFAULT_SWEEPS
from simplexsg.lda.gibbs import csr_to_tokens

from harness import cli
from harness.measure import median_seconds


def measure(X, args):
    """The parts' median milliseconds on one minibatch of the corpus ``X`` (CSR)."""
    model = SCIRLDA(args.K, n_jobs=args.threads, random_state=0,
                    max_time=args.fit_seconds).fit(X)
    topics = np.ascontiguousarray(model._local)
    alpha = np.full(args.K, float(model.doc_topic_prior_))
    rows = np.sort(np.random.default_rng(0).choice(X.shape[0], min(args.docs, X.shape[0]),
                                                   replace=False))
    tokens = csr_to_tokens(X[rows], args.threads)
    no_tokens = np.zeros(len(rows) + 1, dtype=np.int64), np.zeros(0, dtype=np.int32)

    def call(doc_ptr, word_ids, n_sweeps, burn_in):
        def run(repeat):
            streams = document_streams(0, repeat, range(len(rows)))
            return gibbs_sweeps(doc_ptr, word_ids, tokens.vocab, topics, alpha,
                                streams.addresses, n_sweeps, burn_in, None, True, args.threads,
                                rao_blackwell=True)
        return run

    seconds, counts = median_seconds(call(tokens.doc_ptr, tokens.word_ids, DEFAULT_SWEEPS,
                                          DEFAULT_SWEEP_BURN_IN), args.repeats)
    one_sweep, _ = median_seconds(call(tokens.doc_ptr, tokens.word_ids, 1, 0), args.repeats)
    tables, _ = median_seconds(call(*no_tokens, 1, 0), args.repeats)
    indptr, topic_ids, values, _ = counts
    transpose, _ = median_seconds(
        lambda repeat: transpose_counts(indptr, topic_ids, values, args.K, args.threads),
        args.repeats)
    return [dict(documents=len(rows), tokens=len(tokens.word_ids), words=len(tokens.vocab),
                 counts=len(values), call_ms=1e3 * seconds, one_sweep_ms=1e3 * one_sweep,
                 tables_ms=1e3 * tables, transpose_ms=1e3 * transpose)]


def summarise(results):
    lines = [f"{'corpus':>16} {'docs':>6} {'tokens':>8} {'words':>7} {'counts':>9} "
             f"{'call ms':>8} {'1 sweep':>8} {'tables':>7} {'transpose':>9}"]
    for r in results["runs"]:
        lines.append(f"{r['data']:>16} {r['documents']:6d} {r['tokens']:8d} {r['words']:7d} "
                     f"{r['counts']:9d} {r['call_ms']:8.1f} {r['one_sweep_ms']:8.1f} "
                     f"{r['tables_ms']:7.1f} {r['transpose_ms']:9.1f}")
    return "\n".join(lines)


def main():
    parser = cli.Parser(__file__, __doc__, data=True,
                        quick=dict(corpora=["healthtweets"], repeats=3, fit_seconds=2.0))
    parser.add_argument("--corpora", nargs="+",
                        default=["gcide", "healthtweets", "parlspeech_en", "news"])
    parser.add_argument("--docs", type=int, default=2500, help="documents in the minibatch")
    parser.add_argument("--K", type=int, default=100)
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--repeats", type=int, default=21)
    parser.add_argument("--fit-seconds", type=float, default=5.0)
    args = parser.parse_args()
    if not args.data:
        cli.skip("no data folder (--data or SIMPLEXSG_DATA)", args.out)

    def corpora():
        for name in args.corpora:
            path = Path(args.data) / "corpora" / name / "docword.txt.gz"
            if path.is_file():
                yield name, load_uci_bow(path)[0].tocsr()
            else:
                print(f"skipped {name}: {path} absent")

    cli.measure_each(args, corpora(), lambda X: measure(X, args), summarise)


if __name__ == "__main__":
    main()
