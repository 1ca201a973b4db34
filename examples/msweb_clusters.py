"""Cluster msweb users with the DP mixture (its default sampler, "auto") and print each large cluster's top pages.

Data: UCI "Anonymous Microsoft Web Data" (not bundled): ``--data`` or ``$SIMPLEXSG_DATA/msweb``
holding ``anonymous-msweb.data`` and ``anonymous-msweb.test``. A page's lift in a cluster is its
probability there over its share of all training visits; pages are listed by probability.

    SIMPLEXSG_DATA=../shared/data python examples/msweb_clusters.py
"""
import argparse
import time

import numpy as np

from simplexsg import DPMixture
from simplexsg.datasets import load_msweb


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", default=None)
    parser.add_argument("--sampler", default="auto", choices=("auto", "scir", "sgrld", "gibbs"))
    parser.add_argument("--iterations", type=int, default=None,
                        help="iterations (default: the sampler's own, 200 sweeps for gibbs)")
    parser.add_argument("--min-share", type=float, default=0.02,
                        help="list clusters holding at least this share of the users")
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    try:
        train = load_msweb(args.data, "train")
        test = load_msweb(args.data, "test")
    except FileNotFoundError as exc:
        raise SystemExit(f"{exc}\n(msweb is not bundled: pass --data or set SIMPLEXSG_DATA to "
                         "a folder holding msweb/anonymous-msweb.data and .test, the UCI "
                         "'Anonymous Microsoft Web Data')")
    print(f"{train.X.shape[0]} users, {train.X.shape[1]} pages, {int(train.X.sum())} visits")
    dp = DPMixture(args.sampler, max_iter=args.iterations, random_state=args.seed, verbose=1)
    start = time.perf_counter()
    dp.fit(train.X)
    print(f"{dp.sampler_}: {dp.n_components_} occupied clusters, alpha {dp.alpha_:.2f}, "
          f"{time.perf_counter() - start:.1f} s; mean test log predictive per user "
          f"{dp.score(test.X):.3f}\n")
    overall = np.asarray(train.X.sum(axis=0)).ravel() / train.X.sum()
    sizes = np.bincount(dp.labels_, minlength=dp.n_components_)
    for k in np.argsort(sizes)[::-1]:
        share = sizes[k] / sizes.sum()
        if share < args.min_share:
            break
        top = np.argsort(dp.components_[k])[::-1][:6]
        pages = ", ".join(f"{train.titles[j]} ({dp.components_[k, j]:.2f}, lift "
                          f"{dp.components_[k, j] / overall[j]:.1f})" for j in top)
        print(f"cluster {k:3d}: {share:5.1%} of users: {pages}")


if __name__ == "__main__":
    main()
