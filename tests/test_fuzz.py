"""Property-based fuzzing of every estimator's public entry points (#12).

Random shapes, dtypes and sparse formats; NaN, inf, negative, fractional and huge entries;
empty rows and columns; parameter values at and beyond their bounds. Each call either
succeeds with finite output or raises ValueError / TypeError (MemoryError for a model too
large for the machine) naming the problem, and a failed call leaves a fitted model
byte-identical (pickle). Bounded: a few dozen examples per test, tiny data, short chains.
"""
import pickle

import numpy as np
import pytest
import scipy.sparse as sp
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from sklearn.base import clone

from simplexsg import (SCIRLDA, SGRLDLDA, BayesianLinearRegression, BayesianLogisticRegression,
                       DPMixture)

FUZZ = settings(max_examples=40, deadline=None, derandomize=True, database=None,
                suppress_health_check=[HealthCheck.too_slow])
N_WORDS = 6
GOOD_COUNTS = np.random.default_rng(0).poisson(1.0, size=(12, N_WORDS)) + np.eye(12, N_WORDS,
                                                                                 dtype=int)
#: Words a data error may use to name the problem.
DATA_WORDS = ("X", "count", "document", "feature", "sample", "NaN", "nan", "infinity", "inf",
              "empty", "shape", "dimension", "array", "row", "column", "token", "word", "integer",
              "negative", "y", "label", "class", "dtype")

BAD_ENTRIES = st.sampled_from([-1, 0.5, np.nan, np.inf, -np.inf, 1e300, -0.0, 2 ** 40])
FORMATS = st.sampled_from(["dense", "int32", "float32", "csr", "csc", "coo", "list"])


@st.composite
def count_matrices(draw, n_words=None):
    """A (rows, words) matrix of small counts with, sometimes, one bad entry, an empty row or
    column, in some format."""
    rows = draw(st.integers(0, 5))
    words = draw(st.integers(0, 8)) if n_words is None else n_words
    X = np.asarray(draw(st.lists(st.integers(0, 4), min_size=rows * words,
                                 max_size=rows * words)), dtype=float).reshape(rows, words)
    if rows and words and draw(st.booleans()):
        X[draw(st.integers(0, rows - 1)), draw(st.integers(0, words - 1))] = draw(BAD_ENTRIES)
    fmt = draw(FORMATS)
    if fmt == "list":
        return X.tolist()
    if fmt in ("int32", "float32"):
        with np.errstate(invalid="ignore", over="ignore"):
            return X.astype(fmt)
    return X if fmt == "dense" else getattr(sp, f"{fmt}_matrix")(X)


def assert_finite(value):
    assert np.all(np.isfinite(np.asarray(value, dtype=float)))


def check_call(model, method, *args, words=DATA_WORDS):
    """Call ``model.method(*args)``: finite output, or a named error and the model unchanged."""
    before = pickle.dumps(model)
    try:
        out = getattr(model, method)(*args)
    except (ValueError, TypeError, MemoryError) as exc:
        named = ("GB",) if isinstance(exc, MemoryError) else words
        assert any(w in str(exc) for w in named), f"{method}: unnamed error {exc!r}"
        assert pickle.dumps(model) == before, f"failed {method} changed the model"
        return None
    if out is not model:
        assert_finite(out)
    return out


@pytest.fixture(scope="module")
def fitted_lda():
    return SCIRLDA(2, max_iter=2, random_state=0).fit(GOOD_COUNTS)


@FUZZ
@given(X=count_matrices())
def test_lda_fit_on_arbitrary_input(X):
    model = SCIRLDA(2, max_iter=1, random_state=0)
    if check_call(model, "fit", X) is not None:
        assert_finite(model.components_)
        np.testing.assert_allclose(model.components_.sum(axis=1), 1.0)


@FUZZ
@given(X=count_matrices(n_words=N_WORDS), method=st.sampled_from(
    ["transform", "perplexity", "score", "partial_fit"]))
def test_lda_inference_and_partial_fit_on_arbitrary_input(fitted_lda, X, method):
    model = pickle.loads(pickle.dumps(fitted_lda))       # partial_fit may change it
    check_call(model, method, X)
    assert_finite(model.components_)


@FUZZ
@given(X=count_matrices())
def test_lda_inference_with_a_wrong_vocabulary_size(fitted_lda, X):
    for method in ("transform", "perplexity"):
        if np.shape(X)[1:] != (N_WORDS,) and len(np.shape(X)) == 2:
            with pytest.raises(ValueError):
                getattr(fitted_lda, method)(X)
        else:
            check_call(fitted_lda, method, X)


ODD_VALUES = st.sampled_from([-1, 0, 0.0, 0.5, 1e-300, np.nan, np.inf, -np.inf, "x", [1, 2],
                              (1.0,), True, None, 2, 1e6])
LDA_PARAMS = ["n_components", "doc_topic_prior", "topic_word_prior", "batch_size", "step_size",
              "step_offset", "step_decay", "n_gibbs", "gibbs_burn_in", "max_iter", "burn_in",
              "total_samples", "local_topics", "learn_doc_topic_prior", "doc_topic_prior_prior",
              "local_warm_start", "max_time", "tol", "n_iter_no_change", "warm_start",
              "checkpoint_every", "n_jobs", "random_state", "evaluate_every", "sampler"]


def check_params(estimator, name, value, fit_args, score):
    """Fit with one parameter set to ``value``: finite output, or an error naming it."""
    if name in ("n_components", "n_gibbs", "max_iter", "n_iter", "initial_components") \
            and value == 1e6:
        value = 10 ** 9 if name == "n_components" else value
        if name != "n_components":
            return                                 # a valid but long run: not a fuzz case
    model = clone(estimator).set_params(**{name: value})
    try:
        model.fit(*fit_args)
    except (ValueError, TypeError) as exc:
        assert name in str(exc) or name.split("_")[0] in str(exc), \
            f"{name}={value!r}: error does not name it: {exc!r}"
        return
    except MemoryError as exc:
        assert "GB" in str(exc)
        return
    assert_finite(score(model))


@FUZZ
@given(name=st.sampled_from(LDA_PARAMS), value=ODD_VALUES,
       cls=st.sampled_from([SCIRLDA, SGRLDLDA]))
def test_lda_parameters_at_and_beyond_their_bounds(name, value, cls):
    if name == "sampler":
        value = "sgrld" if cls is SCIRLDA else value
    check_params(cls(2, max_iter=1, random_state=0), name, value, (GOOD_COUNTS,),
                 lambda m: m.components_)


DP_PARAMS = ["sampler", "base_concentration", "alpha_prior", "initial_components", "batch_size",
             "step_size", "stick_step_size", "max_iter", "total_samples", "n_jobs",
             "random_state", "evaluate_every"]


@FUZZ
@given(name=st.sampled_from(DP_PARAMS), value=ODD_VALUES)
def test_dpmixture_parameters_at_and_beyond_their_bounds(name, value):
    binary = (GOOD_COUNTS > 0).astype(np.int64)
    check_params(DPMixture(max_iter=3, batch_size=5, initial_components=3, random_state=0),
                 name, value, (binary,), lambda m: m.score_samples(binary))


@FUZZ
@given(X=count_matrices(n_words=N_WORDS), method=st.sampled_from(
    ["predict", "predict_proba", "score_samples", "partial_fit"]))
def test_dpmixture_entry_points_on_arbitrary_input(X, method):
    binary = (GOOD_COUNTS > 0).astype(np.int64)
    model = DPMixture(max_iter=3, batch_size=5, initial_components=3, random_state=0).fit(binary)
    check_call(model, method, X)


REG_PARAMS = ["prior_scale", "fit_intercept", "sampler", "step_size", "batch_size", "n_iter",
              "burn_in", "thin", "friction", "zv", "random_state"]


@st.composite
def regression_data(draw, classes=False):
    n, d = draw(st.integers(0, 6)), draw(st.integers(0, 3))
    X = np.asarray(draw(st.lists(st.floats(-3, 3), min_size=n * d, max_size=n * d)),
                   dtype=float).reshape(n, d)
    y = np.asarray(draw(st.lists(st.integers(0, 1) if classes else st.floats(-3, 3),
                                 min_size=n, max_size=n)), dtype=float)
    if n and d and draw(st.booleans()):
        X[draw(st.integers(0, n - 1)), draw(st.integers(0, d - 1))] = draw(BAD_ENTRIES)
    if n and draw(st.booleans()):
        y[draw(st.integers(0, n - 1))] = draw(BAD_ENTRIES)
    if draw(st.booleans()):
        y = y[:-1]                                  # a length mismatch
    return X, y


@FUZZ
@given(data=regression_data(), name=st.sampled_from([None] + REG_PARAMS), value=ODD_VALUES,
       cls=st.sampled_from([BayesianLinearRegression, BayesianLogisticRegression]))
def test_regression_entry_points(data, name, value, cls):
    X, y = data
    if cls is BayesianLogisticRegression:
        y = np.where(np.isfinite(y), np.abs(np.round(y)) % 2, y)
    model = cls(n_iter=50, random_state=0)
    if name is not None:
        if name == "n_iter" and value == 1e6:
            return
        model.set_params(**{name: value})
    try:
        model.fit(X, y)
    except (ValueError, TypeError) as exc:
        named = DATA_WORDS + ("noise_variance",) + ((name,) if name else ())
        assert any(w in str(exc) for w in named), f"unnamed error {exc!r}"
        return
    except FloatingPointError as exc:            # a diverging chain, named with its step size
        assert "step" in str(exc)
        return
    before = pickle.dumps(model)
    assert_finite(model.predict(X))
    for bad in (np.full((2, X.shape[1] + 1), 1.0), np.full((1, X.shape[1]), np.nan)):
        with pytest.raises(ValueError):
            model.predict(bad)
    assert pickle.dumps(model) == before
