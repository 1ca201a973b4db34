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
import argparse
import os
import platform
from pathlib import Path

import numpy as np

from simplexsg import SCIRLDA
from simplexsg.datasets import load_uci_bow, load_wiki_sample

from _common import synthetic_chunks, write_results


def cases(data_dir):
    news = None if data_dir is None else Path(data_dir) / "corpora" / "news" / "docword.txt.gz"
    if news is not None and news.is_file():
        yield "news", 50, load_uci_bow(news)[0].tocsr()
    else:
        print("news: skipped (no $SIMPLEXSG_DATA/corpora/news; set SIMPLEXSG_DATA or --data)")
    yield "wiki", 20, load_wiki_sample().X_train
    yield "synth1e4", 100, next(synthetic_chunks(10_000, 200))


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", default=os.environ.get("SIMPLEXSG_DATA"))
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--out", default="benchmarks/results/lda_threads.json")
    args = parser.parse_args()
    results = dict(machine=platform.processor() or platform.machine(), cpus=os.cpu_count(),
                   repeats=args.repeats, cases={})
    for name, K, X in cases(args.data):
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
    write_results(results, args.out)


if __name__ == "__main__":
    main()
