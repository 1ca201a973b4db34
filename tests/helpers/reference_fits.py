"""Short fits with fixed seeds whose results are stored in ``tests/data/reference_fits.json``.

A refactor must not change what a fit with a fixed ``random_state`` computes: every draw, every
minibatch, the order of the steps. ``tests/test_reference_fits.py`` refits these cases and
compares the figures with the stored ones. The fits are a few steps long, so that a difference of
a few ulps in a libm function between machines stays far below the tolerance, while any change of
a random stream, a minibatch or an update changes the figures at the first digit.

When a change of results is intended (a new default, a corrected update), regenerate the file
and say so in the commit::

    .venv/bin/python tests/helpers/reference_fits.py --write
"""
import argparse
import json
import tempfile
from pathlib import Path

import numpy as np

import simplexsg
from simplexsg import datasets
from simplexsg.readers import UCIBowCorpus

REFERENCE = Path(__file__).resolve().parents[1] / "data" / "reference_fits.json"


def _lda_corpus():
    X, _, _ = datasets.make_lda_corpus(60, 40, 3, doc_length=30, random_state=5)
    return X


def _summary(*arrays):
    """The figures compared: a few entries and the sum of each array, as floats."""
    out = []
    for a in arrays:
        a = np.asarray(a, dtype=np.float64)
        out += [float(a.sum()), *map(float, a.ravel()[:6])]
    return out


def lda_cases():
    X = _lda_corpus()
    cases = {}
    for name, params in {
        "lda_scir": dict(),
        "lda_sgrld": dict(sampler="sgrld"),
        "lda_learned_alpha": dict(learn_doc_topic_prior="per_topic"),
        "lda_sample_topics": dict(local_topics="sample", rao_blackwell=False, n_topic_samples=2),
        "lda_fixed_burn_in": dict(burn_in=2, batch_size=25, local_warm_start=True),
    }.items():
        model = simplexsg.LDA(3, max_iter=2, random_state=7, **params).fit(X)
        cases[name] = _summary(model.components_, model.topic_state_,
                               np.atleast_1d(model.doc_topic_prior_), model.doc_topic_)
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "docword.txt"
        datasets.save_uci_bow(X, path)
        model = simplexsg.LDA(3, max_iter=2, batch_size=20, random_state=7).fit(
            UCIBowCorpus(path))
        cases["lda_streamed"] = _summary(model.components_, model.topic_state_)
    model = simplexsg.LDA(3, total_samples=120, random_state=7)
    for start in (0, 20, 40):
        model.partial_fit(X[start:start + 20])
    cases["lda_partial_fit"] = _summary(model.components_, model.topic_state_)
    cases["lda_transform"] = _summary(model.transform(X[:5]), [model.score(X[:10])])
    return cases


def dp_cases():
    X, _ = datasets.make_multinomial_mixture(150, 30, 3, row_length=15, random_state=3)[:2]
    cases = {}
    for sampler in ("gibbs", "scir", "sgrld"):
        model = simplexsg.DPMixture(sampler, max_iter=4, random_state=11).fit(X)
        cases[f"dp_{sampler}"] = _summary(model.weights_, model.components_, model.labels_,
                                          [model.alpha_], model.predict_proba(X[:5]))
    model = simplexsg.DPMixture("scir", total_samples=150, random_state=11)
    for start in (0, 50, 100):
        model.partial_fit(X[start:start + 50])
    cases["dp_partial_fit"] = _summary(model.weights_, model.components_)
    return cases


def regression_cases():
    rng = np.random.default_rng(2)
    X = rng.normal(size=(80, 3))
    y = X @ [1.0, -2.0, 0.5] + 0.3 * rng.normal(size=80)
    cases = {}
    for sampler in ("sgld", "sgldcv"):
        model = simplexsg.BayesianLinearRegression(sampler=sampler, n_iter=150,
                                                   random_state=4).fit(X, y)
        cases[f"linear_{sampler}"] = _summary(model.coef_, [model.intercept_],
                                              model.coef_samples_)
    labels = (y > 0).astype(int)
    model = simplexsg.BayesianLogisticRegression(n_iter=150, zv=True, random_state=4).fit(
        X, labels)
    cases["logistic_zv"] = _summary(model.coef_, [model.intercept_], model.coef_samples_)
    return cases


def all_cases():
    return {**lda_cases(), **dp_cases(), **regression_cases()}


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--write", action="store_true", help=f"write {REFERENCE}")
    parser.add_argument("--out", type=Path, help="write the figures to this file instead")
    args = parser.parse_args()
    figures = json.dumps(all_cases(), indent=1)
    target = REFERENCE if args.write else args.out
    if target is None:
        print(figures)
    else:
        target.parent.mkdir(exist_ok=True)
        target.write_text(figures + "\n")
