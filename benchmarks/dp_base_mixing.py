"""Does the DP mixture's exact sampler find the partitions its posterior favours? On rows drawn
from the true mixtures of ``dp_scale.py`` (their clusters known), the log joint density of the
chain's partition, ``log p(X | z, b) + log p(z | alpha)`` (components and weights integrated
out, alpha at its best for each partition), against the true partition's, at the base
concentration b of the fit; with the b that the rows favour given each partition.

A true partition far more probable than the chain's means the chain has not found the
posterior's partitions (a sampler's failure); a chain's partition more probable than the truth
means the posterior itself prefers it (the model's choice, which no sampler changes).

For each source (--sources, as in ``dp_scale.py``; the mixtures are cached in --workdir) the
first --rows training rows of its data sets (the rows of ``dp_scale.py``'s file of that many
rows) are fitted in memory by ``DPMixture(base_concentration=b, random_state=--seed, n_jobs=2,
**--params)`` for each schedule of --schedules: ``0.5`` a fit at 0.5; ``0.5,0.05`` a fit at
0.5 continued at 0.05 (``warm_start``), the chain's b lowered in steps. After each stage:
seconds so far, sweeps, occupied components, ARI and true clusters of at least 0.1% recovered
(on the training rows, by the chain's allocations), the log joint of the chain's partition and
of the truth's at that stage's b, and the b that maximises ``p(X | z, b)`` given the chain's
partition (``base_mode``).

    python benchmarks/dp_base_mixing.py --sources healthtweets wordnet_glosses msweb \\
        --rows 100000 --schedules 0.5 0.05 0.5,0.15,0.05 --workdir /tmp/dps
"""
import json
import time

import numpy as np
import scipy.sparse as sp
from sklearn.metrics import adjusted_rand_score

from dp_scale import add_mixture_options, true_mixture
from harness import cli
from harness.mixture_semisynthetic import (base_mode, partition_log_likelihood,
                                           partition_log_prior, recovery, row_chunks)
from harness.semisynthetic import topic_cdfs
from simplexsg import DPMixture


def log_joint(X, labels, base):
    """``log p(X | z, b) + log p(z | alpha)`` at the alpha that maximises the second."""
    return partition_log_likelihood(X, labels, base) + partition_log_prior(labels)[0]


def training_rows(args, source):
    """The first ``args.rows`` training rows of ``source``'s data sets and their clusters."""
    (profiles, weights, lengths), _ = true_mixture(args, source)
    chunks = list(row_chunks(topic_cdfs(profiles), weights, lengths, args.rows, seed=0))
    return (sp.vstack([X for X, _ in chunks]).tocsr(),
            np.concatenate([labels for _, labels in chunks]))


def run_schedule(X, labels, schedule, args):
    """The stages of one schedule (base concentrations in order), each a dict."""
    model = DPMixture(base_concentration=schedule[0], random_state=args.seed, n_jobs=2,
                      **json.loads(args.params))
    stages, seconds = [], 0.0           # of fitting, the scoring left out
    for i, base in enumerate(schedule):
        if i:
            model.set_params(base_concentration=base, warm_start=True)
        began = time.perf_counter()
        model.fit(X)
        seconds += time.perf_counter() - began
        z = model.labels_
        stages.append(dict(base=base, seconds=seconds, sweeps=model.n_iter_,
                           occupied=model.n_components_, ari=adjusted_rand_score(labels, z),
                           recovered=recovery(labels, z, 0.001),
                           log_joint=log_joint(X, z, base),
                           truth_log_joint=log_joint(X, labels, base),
                           base_mode=base_mode(X, z)))
    return stages


def measure(args, source):
    X, labels = training_rows(args, source)
    entry = dict(source=source, rows=X.shape[0], true_clusters=int(np.unique(labels).size),
                 true_recovered=recovery(labels, labels, 0.001)[0],
                 truth_base_mode=base_mode(X, labels), schedules={})
    for text in args.schedules:
        entry["schedules"][text] = run_schedule(
            X, labels, [float(b) for b in text.split(",")], args)
    return entry


def summarise(results):
    lines = []
    for entry in results["sources"]:
        lines.append(f"{entry['source']}, {entry['rows']:,} rows: {entry['true_clusters']} "
                     f"true clusters ({entry['true_recovered']} of >= 0.1%), the truth "
                     f"favours b = {entry['truth_base_mode']:.3f}")
        for text, stages in entry["schedules"].items():
            for stage in stages:
                lines.append(
                    f"  {text:>14} at {stage['base']:<6g} {stage['seconds']:6.1f} s "
                    f"{stage['sweeps']:4d} sweeps {stage['occupied']:5d} clusters  ARI "
                    f"{stage['ari']:.3f}  recovered {stage['recovered'][0]:4d}  log joint "
                    f"{stage['log_joint']:.1f} (truth {stage['truth_log_joint']:.1f}, "
                    f"chain - truth {stage['log_joint'] - stage['truth_log_joint']:+.1f})  "
                    f"favours b = {stage['base_mode']:.3f}")
    return "\n".join(lines)


def main():
    parser = cli.Parser(__file__, __doc__, data=True, summary_only=True,
                        quick=dict(sources=["synthetic"], rows=3000,
                                   schedules=["0.5", "0.5,0.05"]))
    parser.add_argument("--sources", nargs="+",
                        default=["healthtweets", "wordnet_glosses", "msweb"])
    parser.add_argument("--rows", type=int, default=100_000, help="training rows")
    parser.add_argument("--schedules", nargs="+", default=["0.5", "0.05", "0.5,0.15,0.05"],
                        help="base concentrations of the stages of a fit, comma-separated")
    parser.add_argument("--params", default="{}",
                        help="JSON of DPMixture parameters set in every fit (default: none)")
    parser.add_argument("--seed", type=int, default=0)
    add_mixture_options(parser)
    args = parser.parse_args()
    if args.summary_only:
        return cli.print_summaries(args.summary_only, summarise)
    results = dict(settings={k: v for k, v in vars(args).items() if k != "out"}, sources=[])
    for source in args.sources:
        results["sources"].append(measure(args, source))
        print(summarise(dict(sources=results["sources"][-1:])), flush=True)
        cli.write_results(results, args.out)
    return None


if __name__ == "__main__":
    main()
