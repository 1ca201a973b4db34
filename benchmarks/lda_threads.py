"""End-to-end SCIRLDA fits on 1 and 2 threads: speed-up and bit-identity.

Each case fits ``SCIRLDA(n_components=K, random_state=0, n_jobs=n)`` with its defaults (glue,
token conversion, local and global steps all counted: ``training_seconds_``) for n = 1 and 2,
--repeats times each (median; the 1- and 2-thread fits alternate, so that the shared
machine's other load falls on both alike), and checks that the fitted topics are identical
bit for bit.
Cases: the news corpus of ``$SIMPLEXSG_DATA/corpora`` at K = 50 (skipped without the data),
the bundled Wikipedia sample at K = 20 and a synthetic Zipf corpus of 10^4 documents at K = 100.

    SIMPLEXSG_DATA=/path/to/data python benchmarks/lda_threads.py \\
        --out benchmarks/results/lda_threads.json
"""
import numpy as np

from simplexsg import SCIRLDA

from harness import cli, corpora

#: name -> K, the counts; the first needs the data folder.
CASES = {"news": (50, lambda data: corpora.uci_counts("news", data)),
         "wiki": (20, lambda data: corpora.wiki()[0]),
         "synth1e4": (100, lambda data: next(corpora.synthetic_chunks(10_000, 200)))}


def main():
    parser = cli.Parser(__file__, __doc__, quick=dict(repeats=1, cases=["wiki"]), data=True)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--cases", nargs="+", choices=list(CASES), default=list(CASES))
    args = parser.parse_args()
    results = dict(repeats=args.repeats, cases={}, skipped={})
    for name in args.cases:
        K, load = CASES[name]
        try:
            X = load(args.data)
        except corpora.Absent as exc:
            print(f"{name}: skipped ({exc})", flush=True)
            results["skipped"][name] = str(exc)
            continue
        times, topics = {1: [], 2: []}, {}
        for _ in range(args.repeats):     # interleaved: the machine's other load hits both
            for n_jobs in (1, 2):
                model = SCIRLDA(K, random_state=0, n_jobs=n_jobs).fit(X)
                times[n_jobs].append(model.training_seconds_)
                topics[n_jobs] = model.components_
        seconds = {n_jobs: float(np.median(t)) for n_jobs, t in times.items()}
        identical = bool(np.array_equal(topics[1], topics[2]))
        results["cases"][name] = dict(K=K, documents=X.shape[0], tokens=int(X.sum()),
                                      seconds_1=seconds[1], seconds_2=seconds[2],
                                      speedup=seconds[1] / seconds[2], identical=identical)
        print(f"{name} (K={K}): 1 thread {seconds[1]:.2f} s, 2 threads {seconds[2]:.2f} s, "
              f"speed-up {seconds[1] / seconds[2]:.2f}x, identical: {identical}", flush=True)
    cli.write_results(results, args.out)


if __name__ == "__main__":
    main()
