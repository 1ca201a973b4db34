"""scikit-learn conventions every public estimator keeps (#12): numpydoc docstrings on the
public methods, ``n_jobs`` in joblib's convention, ``random_state`` as a legacy RandomState."""
import inspect
import re

import numpy as np
import pytest
from sklearn.base import BaseEstimator

import simplexsg
from simplexsg import (LDA, SCIRLDA, SGRLDLDA, BayesianLinearRegression,
                       BayesianLogisticRegression, DPMixture)

ESTIMATORS = [obj for obj in (getattr(simplexsg, name) for name in simplexsg.__all__)
              if isinstance(obj, type) and issubclass(obj, BaseEstimator)]
METHODS = ["fit", "partial_fit", "transform", "score", "perplexity", "predict", "predict_proba",
           "score_samples"]


def test_every_estimator_is_checked():
    assert set(ESTIMATORS) == {LDA, SCIRLDA, SGRLDLDA, DPMixture, BayesianLinearRegression,
                               BayesianLogisticRegression}


def numpydoc_sections(doc):
    """{header: lines} of a docstring cleaned by ``inspect.getdoc``: a header is a line
    underlined by at least as many dashes."""
    lines = doc.splitlines()
    heads = [i for i in range(len(lines) - 1) if lines[i].strip()
             and re.fullmatch(r"-{%d,}" % len(lines[i].strip()), lines[i + 1].strip())]
    return {lines[i].strip(): lines[i + 2:end] for i, end in zip(heads, heads[1:] + [len(lines)])}


def documented_parameters(lines):
    """Names of the entries of a Parameters section ("name : type" or "a, b : type")."""
    return {name for line in lines if line and not line[0].isspace()
            for name in line.split(" :")[0].split(", ")}


@pytest.mark.parametrize("cls, method", [(cls, method) for cls in ESTIMATORS
                                         for method in METHODS if hasattr(cls, method)],
                         ids=lambda value: getattr(value, "__name__", value))
def test_public_methods_have_numpydoc_parameters_and_returns(cls, method):
    function = getattr(cls, method)
    sections = numpydoc_sections(inspect.getdoc(function) or "")
    assert "Parameters" in sections and "Returns" in sections, \
        f"{cls.__name__}.{method}: sections {sorted(sections)}"
    assert any(line.strip() for line in sections["Returns"]), f"{cls.__name__}.{method}"
    arguments = {name for name, p in inspect.signature(function).parameters.items()
                 if name != "self" and p.kind not in (p.VAR_POSITIONAL, p.VAR_KEYWORD)}
    missing = arguments - documented_parameters(sections["Parameters"])
    assert not missing, f"{cls.__name__}.{method} does not document {sorted(missing)}"


def test_the_section_parser_finds_a_missing_section():
    doc = "Summary.\n\nParameters\n----------\nX : array\n    Counts.\na, b : float\n"
    sections = numpydoc_sections(doc)
    assert set(sections) == {"Parameters"}
    assert documented_parameters(sections["Parameters"]) == {"X", "a", "b"}


COUNTS = np.random.default_rng(0).poisson(1.0, size=(30, 8)) + np.eye(30, 8, dtype=int)
REG_X = np.random.default_rng(1).standard_normal((40, 3))
REG_Y = REG_X @ [1.0, -1.0, 0.5] + np.random.default_rng(2).standard_normal(40)
#: A small fit of each estimator: (estimator, training data, a fitted array that depends on
#: every random draw).
SMALL_FITS = {
    SCIRLDA: (SCIRLDA(2, max_iter=2), (COUNTS,), "components_"),
    SGRLDLDA: (SGRLDLDA(2, max_iter=2), (COUNTS,), "components_"),
    DPMixture: (DPMixture("scir", max_iter=5, batch_size=10, initial_components=3), (COUNTS,),
                "theta_"),
    BayesianLinearRegression: (BayesianLinearRegression(n_iter=100), (REG_X, REG_Y),
                               "coef_samples_"),
    BayesianLogisticRegression: (BayesianLogisticRegression(n_iter=100),
                                 (REG_X, (REG_Y > 0).astype(int)), "coef_samples_"),
}


def fitted(cls, **params):
    estimator, data, attribute = SMALL_FITS[cls]
    return getattr(estimator.__class__(**{**estimator.get_params(), **params}).fit(*data),
                   attribute)


@pytest.mark.parametrize("cls", list(SMALL_FITS), ids=lambda cls: cls.__name__)
def test_random_state_may_be_a_legacy_random_state(cls):
    first = fitted(cls, random_state=np.random.RandomState(0))
    assert np.array_equal(fitted(cls, random_state=np.random.RandomState(0)), first)
    assert not np.array_equal(fitted(cls, random_state=np.random.RandomState(1)), first)
    # one instance is a stream, as in scikit-learn: a second fit draws a new seed from it
    shared = np.random.RandomState(0)
    assert not np.array_equal(fitted(cls, random_state=shared), fitted(cls, random_state=shared))


WITH_N_JOBS = [cls for cls in SMALL_FITS if "n_jobs" in SMALL_FITS[cls][0].get_params()]


def test_n_jobs_is_a_parameter_where_work_is_threaded():
    """The DP mixture and LDA thread their kernels; the regressions' work is numpy's (its
    BLAS threads are threadpoolctl's), so they have no n_jobs."""
    assert set(WITH_N_JOBS) == {SCIRLDA, SGRLDLDA, DPMixture}


@pytest.mark.parametrize("cls", WITH_N_JOBS, ids=lambda cls: cls.__name__)
@pytest.mark.parametrize("n_jobs", [-1, None, 2])
def test_n_jobs_in_joblibs_convention_does_not_change_the_result(cls, n_jobs):
    assert np.array_equal(fitted(cls, n_jobs=n_jobs, random_state=0),
                          fitted(cls, n_jobs=1, random_state=0))
