"""SCIR-LDA on a local Dask cluster of 1 and 2 worker processes against the in-process fit.

One pass of ``SCIRLDA(n_components=K, batch_size=B, random_state=0)`` over the synthetic
corpus of ``harness.corpora.synthetic_chunks`` (10^5 documents of mean length 100, V = 20,000), in
this process and with ``client=`` a ``LocalCluster`` of n = 1, 2 worker processes (one
thread each, loopback only). Per case: steps per second (``n_batch_iter_ /
training_seconds_``), the seconds per step spent waiting for the local step (the fit's
``timings_["local"]``) and in the rest (the global step on the driver), the bytes the driver
sends and receives per step (``LDA.client_traffic_``, against K x V x 8 bytes of the topic
matrix), the seconds to place the corpus on the workers, and whether the topics equal the
in-process ones bit for bit.

    python benchmarks/lda_dask.py --out benchmarks/results/lda_dask.json
    python benchmarks/lda_dask.py --quick       # 10^4 documents
"""
import numpy as np

from simplexsg import SCIRLDA

from harness import cli
from harness.corpora import SYNTH_WORDS, synthetic_chunks
from harness.measure import timed_fit


def fit(X, K, batch_size, client=None):
    return timed_fit(SCIRLDA(K, batch_size=batch_size, max_iter=1, random_state=0,
                             client=client), X)


def main():
    parser = cli.Parser(__file__, __doc__, quick=dict(documents=10_000))
    parser.add_argument("--documents", type=int, default=100_000)
    parser.add_argument("--topics", type=int, default=100)
    parser.add_argument("--batch-size", type=int, default=1000)
    args = parser.parse_args()
    import dask
    from distributed import Client, LocalCluster

    n_docs = args.documents
    K, B = args.topics, args.batch_size
    X = next(synthetic_chunks(n_docs, 100))
    reference, _ = fit(X, K, B)
    steps = reference.n_batch_iter_
    rows = [dict(case="in-process", steps_per_second=steps / reference.training_seconds_,
                 local_seconds=None, global_seconds=None, sent=0, received=0, setup=0.0,
                 identical=True)]
    for n_workers in (1, 2):
        with dask.config.set({"distributed.scheduler.active-memory-manager.start": False}), \
                LocalCluster(n_workers=n_workers, processes=True, threads_per_worker=1,
                             host="127.0.0.1", dashboard_address=None) as cluster, \
                Client(cluster) as client:
            model, wall = fit(X, K, B, client)
        traffic, local = model.client_traffic_, model.timings_["local"]
        rows.append(dict(
            case=f"{n_workers} worker{'s' * (n_workers > 1)}",
            steps_per_second=steps / model.training_seconds_,
            local_seconds=local / steps,
            global_seconds=(model.training_seconds_ - local) / steps,
            sent=float(np.mean([t["sent"] for t in traffic])),
            received=float(np.mean([t["received"] for t in traffic])),
            words=float(np.mean([t["words"] for t in traffic])),
            setup=wall - model.training_seconds_,
            identical=bool(np.array_equal(model.components_, reference.components_))))
    print(f"{n_docs} documents, {int(X.sum())} tokens, V = {SYNTH_WORDS}, K = {K}, batch {B}, "
          f"{steps} steps; topic matrix K x V x 8 = {K * SYNTH_WORDS * 8 / 2**20:.1f} MiB")
    print("| case | steps/s | local s/step | driver s/step | MiB sent/step | MiB received/step "
          "| setup s | identical |")
    print("|---|---|---|---|---|---|---|---|")
    for r in rows:
        timing = ("-", "-") if r["local_seconds"] is None else (
            f"{r['local_seconds']:.3f}", f"{r['global_seconds']:.3f}")
        print(f"| {r['case']} | {r['steps_per_second']:.2f} | {timing[0]} | {timing[1]} | "
              f"{r['sent'] / 2**20:.2f} | {r['received'] / 2**20:.2f} | {r['setup']:.1f} | "
              f"{r['identical']} |")
    cli.write_results(dict(documents=n_docs, tokens=int(X.sum()), words=SYNTH_WORDS, topics=K,
                           batch_size=B, steps=steps, cases=rows), args.out)


if __name__ == "__main__":
    main()
