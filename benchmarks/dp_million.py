"""The DP mixture at 10^6 rows: exact Gibbs and SCIR in memory, and SCIR streamed from a UCI
file, each with the same training budget (#13).

Data: a mixture of K = 40 multinomials over 300 categories (components Dirichlet(0.1), weights
Dirichlet(0.5), rows of 1 + Poisson(19) counts), 10^6 training rows (``--rows``) written to a
UCI file in ``--workdir`` and 5,000 held-out rows. Each fit is ``DPMixture(sampler,
max_time=--seconds, max_iter=NO_ITER_LIMIT, tol=None)`` (``max_time`` only caps ``max_iter``:
the budget ends the fit) with no other setting; reported: iterations, held-out score (mean log predictive
per row), ARI and occupied clusters.

    python benchmarks/dp_million.py --seconds 120 --out benchmarks/results/dp_million.json
    # about 8 minutes
"""
import json
import time
from pathlib import Path

import numpy as np
import scipy.sparse as sp
from sklearn.metrics import adjusted_rand_score

from simplexsg import DPMixture
from simplexsg.datasets import UCIBowCorpus, make_multinomial_mixture, save_uci_bow

from harness import cli

N_ROWS, N_TEST, K, CHUNK = 1_000_000, 5_000, 40, 100_000
#: ``max_iter`` of every fit: more iterations than any budget allows, so ``max_time`` ends it.
NO_ITER_LIMIT = 10**9


def mixture(n_rows=N_ROWS):
    """(X, labels, X_test, labels_test): ``n_rows`` training rows and N_TEST held-out ones,
    drawn in chunks of CHUNK rows from one mixture (the first rows the same for any
    ``n_rows``)."""
    weights = np.random.default_rng(11).dirichlet(np.full(K, 0.5))
    components = make_multinomial_mixture(1, 300, K, weights=weights, concentration=0.1,
                                          random_state=11)[2]
    rng = np.random.default_rng(12)
    blocks, labels = [], []
    for _ in range(-(-(n_rows + N_TEST) // CHUNK)):
        label = rng.choice(K, size=CHUNK, p=weights)
        blocks.append(sp.csr_matrix(rng.multinomial(1 + rng.poisson(19, size=CHUNK),
                                                    components[label])))
        labels.append(label)
    X, labels = sp.vstack(blocks, format="csr"), np.concatenate(labels)
    return X[:n_rows], labels[:n_rows], X[n_rows:n_rows + N_TEST], labels[n_rows:n_rows + N_TEST]


def main():
    parser = cli.Parser(__file__, __doc__, quick=dict(rows=100_000, seconds=10.0))
    parser.add_argument("--seconds", type=float, default=120.0)
    parser.add_argument("--rows", type=int, default=N_ROWS, help="training rows")
    parser.add_argument("--workdir", default="/tmp", help="where the UCI file is written")
    args = parser.parse_args()
    X, labels, X_test, labels_test = mixture(args.rows)
    path = Path(args.workdir) / "dp_million.docword.txt"
    save_uci_bow(X, path)
    results = []
    for name, sampler, data in (("gibbs, in memory", "gibbs", X), ("scir, in memory", "scir", X),
                                ("scir, streamed", "scir", UCIBowCorpus(path))):
        start = time.perf_counter()
        dp = DPMixture(sampler, max_time=args.seconds, max_iter=NO_ITER_LIMIT, tol=None,
                       random_state=0).fit(data)
        sizes = np.bincount(labels)
        results.append(dict(
            run=name, wall_seconds=time.perf_counter() - start, iterations=dp.n_iter_,
            score=dp.score(X_test), ari=adjusted_rand_score(labels_test, dp.predict(X_test)),
            clusters=int(dp.n_components_),
            true_clusters_1pct=int(np.sum(sizes >= 0.01 * args.rows))))
        print(json.dumps(results[-1]), flush=True)
    cli.write_results(dict(rows=args.rows, seconds=args.seconds, runs=results), args.out)


if __name__ == "__main__":
    main()
