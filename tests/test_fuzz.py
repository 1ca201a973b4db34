"""Property-based fuzzing of every estimator's public entry points (#12).

Random shapes, dtypes and formats (dense, list, sparse, DataFrame); NaN, inf, negative,
fractional and huge entries; empty rows and columns; parameter values at and beyond their
bounds. Each call either succeeds with finite output or raises ValueError / TypeError
(MemoryError for a model too large for the machine) naming the problem: the parameter's full
name, or for data the argument as a word (X, y, X_heldout) or the offending entry or shape. A
failed call, ``fit`` included (bad data, or a parameter set to an absurd value), leaves a
fitted model byte-identical (pickle). Bounded: 200 examples per test (derandomized: the same
ones every run), tiny data, short chains; about 10 s in all.
"""
import pickle
import re

import numpy as np
import pandas as pd
import pytest
import scipy.sparse as sp
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from sklearn.base import clone

from simplexsg import (SCIRLDA, SGRLDLDA, BayesianLinearRegression, BayesianLogisticRegression,
                       DPMixture)

from helpers.guards import hang_guard

pytestmark = [pytest.mark.slow, pytest.mark.filterwarnings(   # sklearn's, on inputs it accepts
    "ignore:A column-vector y was passed", "ignore:X has feature names",
    "ignore:R.2 score is not well-defined")]
FUZZ = settings(max_examples=200, deadline=None, derandomize=True, database=None,
                suppress_health_check=[HealthCheck.too_slow])
N_WORDS = 6
GOOD_COUNTS = np.random.default_rng(0).poisson(1.0, size=(12, N_WORDS)) + np.eye(12, N_WORDS,
                                                                                 dtype=int)
BINARY = (GOOD_COUNTS > 0).astype(np.int64)
REG_X = np.random.default_rng(0).standard_normal((20, 3))
REG_Y = REG_X @ [1.0, -1.0, 0.5] + np.random.default_rng(1).standard_normal(20)
TRAINING = {SCIRLDA: (GOOD_COUNTS,), DPMixture: (BINARY,),
            BayesianLinearRegression: (REG_X, REG_Y),
            BayesianLogisticRegression: (REG_X, (REG_Y > 0).astype(int))}
#: How a data error names the problem: the argument as a word; the offending entry (our
#: messages: "at document 0, word 2", "at index (3,)"); or, in scikit-learn's and numpy's
#: messages, the offending shape, dimension, sizes or value.
DATA_NAMED = re.compile(r"\b(X|y|X_heldout)\b|\b(document|word) \d+|\bat index \(\d"
                        r"|shape=\(\d+, \d+\)|got (\dD|scalar) array|array with dim \d"
                        r"|numbers of samples: \[\d+, \d+\]|could not convert string to float: ")

#: The same for ``score``'s y, in scikit-learn's metrics: y_true, or its mixed label types.
SCORE_DATA_NAMED = re.compile(DATA_NAMED.pattern + r"|label input types .*; Got \["
                              r"|can't handle a mix of \w+ and \w+ targets")

BAD_ENTRIES = st.sampled_from([-1, 0.5, np.nan, np.inf, -np.inf, 1e300, -0.0, 2 ** 40])
FORMATS = st.sampled_from(["dense", "int32", "float32", "csr", "csc", "coo", "list"])


def names(message, *arguments):
    """True if ``message`` names one of the ``arguments`` as a whole word."""
    return any(re.search(rf"(?<!\w){re.escape(name)}(?!\w)", message) for name in arguments)


def check_error(exc, *arguments, data=DATA_NAMED):
    """``exc`` names the problem: one of ``arguments``, or the data (``data``: how, or None);
    a MemoryError says how many GB."""
    message = str(exc)
    if isinstance(exc, MemoryError):
        assert "GB" in message, f"MemoryError without its size: {exc!r}"
    else:
        assert names(message, *arguments) or (data is not None and data.search(message)), \
            f"error does not name the problem: {exc!r}"


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
    return as_format(X, draw(FORMATS))


def as_format(X, fmt):
    """The float array X as a list, a DataFrame, a sparse matrix or an ndarray of dtype fmt."""
    if fmt == "list":
        return X.tolist()
    if fmt == "frame" and X.shape[1]:   # without columns, scikit-learn fails inside pandas
        return pd.DataFrame(X, columns=[f"x{j}" for j in range(X.shape[1])])
    if fmt in ("dense", "float64", "frame"):
        return X
    if fmt in ("csr", "csc", "coo"):
        return getattr(sp, f"{fmt}_matrix")(X)
    with np.errstate(invalid="ignore", over="ignore"):
        return X.astype(fmt)


def assert_finite(value):
    assert np.all(np.isfinite(np.asarray(value, dtype=float)))


def check_call(model, method, *args):
    """Call ``model.method(*args)``: finite output, or an error naming the data and the model
    unchanged."""
    before = pickle.dumps(model)
    try:
        out = getattr(model, method)(*args)
    except (ValueError, TypeError, MemoryError) as exc:
        check_error(exc)
        assert pickle.dumps(model) == before, f"failed {method} changed the model"
        return None
    if out is not model:
        assert_finite(out)
    return out


@pytest.fixture(scope="module")
def fitted_lda():
    return SCIRLDA(2, max_iter=2, random_state=0).fit(GOOD_COUNTS)


@pytest.fixture(scope="module")
def fitted_dp():
    return DPMixture("scir", max_iter=3, batch_size=5, initial_components=3, random_state=0).fit(BINARY)


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
#: Parameters whose errors may name a parameter they are checked against as well.
RELATED = {"gibbs_burn_in": ("n_gibbs",), "n_gibbs": ("gibbs_burn_in",),
           "burn_in": ("n_iter", "thin"), "thin": ("n_iter", "burn_in"),
           "n_iter": ("burn_in", "thin"), "zv": ("sampler",), "sampler": ("zv",)}


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
    except (ValueError, TypeError, MemoryError, FloatingPointError) as exc:
        check_error(exc, name, *RELATED.get(name, ()), data=None)
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
             "random_state", "evaluate_every", "warm_start", "checkpoint_every", "max_time", "tol",
             "n_iter_no_change", "split_merge", "init", "init_rows", "shuffle_buffer"]


@FUZZ
@given(name=st.sampled_from(DP_PARAMS), value=ODD_VALUES)
def test_dpmixture_parameters_at_and_beyond_their_bounds(name, value):
    check_params(DPMixture("scir", max_iter=3, batch_size=5, initial_components=3, random_state=0),
                 name, value, (BINARY,), lambda m: m.score_samples(BINARY))


@FUZZ
@given(X=count_matrices())
def test_dpmixture_fit_on_arbitrary_input(X):
    model = DPMixture("scir", max_iter=2, batch_size=3, initial_components=3, random_state=0)
    if check_call(model, "fit", X) is not None:
        assert_finite(model.components_)
        np.testing.assert_allclose(model.components_.sum(axis=1), 1.0)
        np.testing.assert_allclose(model.weights_.sum(), 1.0)
        assert model.labels_.shape == (np.shape(X)[0],)


@FUZZ
@given(X=count_matrices(n_words=BINARY.shape[1]), method=st.sampled_from(
    ["predict", "predict_proba", "score_samples", "score", "partial_fit"]))
def test_dpmixture_entry_points_on_arbitrary_input(fitted_dp, X, method):
    model = pickle.loads(pickle.dumps(fitted_dp))        # partial_fit may change it
    check_call(model, method, X)
    assert_finite(model.components_)


REG_PARAMS = ["prior_scale", "fit_intercept", "sampler", "step_size", "batch_size", "n_iter",
              "burn_in", "thin", "friction", "zv", "random_state", "warm_start",
              "checkpoint_every"]
REGRESSIONS = [BayesianLinearRegression, BayesianLogisticRegression]
X_FORMATS = st.sampled_from(["float64", "float32", "int32", "uint8", "bool", "object", "list",
                             "frame", "csr", "csc", "coo"])
Y_FORMATS = st.sampled_from(["float64", "int64", "bool", "labels", "list", "column"])


def as_target(y, fmt):
    """y (n,) in the format ``fmt``; "labels": strings, "neg" for y <= 0, else "pos"."""
    if fmt == "labels":
        return np.where(y > 0, "pos", "neg")
    if fmt == "column":
        return y[:, None]
    return as_format(y, fmt)


@st.composite
def regression_data(draw, classes=False, n_features=None):
    """(X, y) of a few rows, with sometimes a bad entry in X or y, a length mismatch, and
    X and y in some format and dtype."""
    n = draw(st.integers(0, 6))
    d = draw(st.integers(0, 3)) if n_features is None else n_features
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
    return as_format(X, draw(X_FORMATS)), as_target(y, draw(Y_FORMATS))


def regression_score(model, X):
    return model.predict_proba(X) if hasattr(model, "predict_proba") else model.predict(X)


@FUZZ
@given(cls=st.sampled_from(REGRESSIONS), data=st.data())
def test_regression_fit_on_arbitrary_data(cls, data):
    X, y = data.draw(regression_data(classes=cls is BayesianLogisticRegression))
    model = cls(n_iter=50, random_state=0)
    try:
        model.fit(X, y)
    except (ValueError, TypeError) as exc:
        check_error(exc, "noise_variance")          # noise_variance=None needs residuals
        return
    except FloatingPointError as exc:              # a diverging chain, named with its step size
        check_error(exc, "step_size", data=None)
        return
    assert_finite(regression_score(model, X))


@pytest.fixture(scope="module")
def fitted_regressions():
    return {cls: cls(n_iter=50, random_state=0).fit(*TRAINING[cls]) for cls in REGRESSIONS}


@FUZZ
@given(cls=st.sampled_from(REGRESSIONS), n_features=st.sampled_from([REG_X.shape[1], None]),
       data=st.data())
def test_regression_inference_on_arbitrary_input(fitted_regressions, cls, n_features, data):
    model = fitted_regressions[cls]
    X, y = data.draw(regression_data(cls is BayesianLogisticRegression, n_features))
    for method in ("predict", "predict_proba") if cls is BayesianLogisticRegression \
            else ("predict",):
        check_call(model, method, X)
    before = pickle.dumps(model)
    try:
        score = model.score(X, y)
    except (ValueError, TypeError) as exc:      # scikit-learn's metrics call score's y y_true
        check_error(exc, "y_true", data=SCORE_DATA_NAMED)
        assert pickle.dumps(model) == before
        return
    # R^2 of fewer than 2 rows is undefined: scikit-learn's score is NaN (and warns) there
    if not (cls is BayesianLinearRegression and len(y) < 2):
        assert_finite(score)


@FUZZ
@given(name=st.sampled_from(REG_PARAMS + ["noise_variance"]), value=ODD_VALUES,
       cls=st.sampled_from(REGRESSIONS))
def test_regression_parameters_at_and_beyond_their_bounds(name, value, cls):
    if name == "noise_variance" and cls is BayesianLogisticRegression:
        name = "prior_scale"
    check_params(cls(n_iter=50, random_state=0), name, value, TRAINING[cls],
                 lambda m: regression_score(m, REG_X))


# ------------------------------------------------------------------------------------------
# A failed fit, on bad data or with an absurd parameter, leaves the fitted model as it was
# ------------------------------------------------------------------------------------------

#: Values no parameter below accepts (n_jobs: 0 stands for -1, which means every CPU).
ABSURD = st.sampled_from([-1, -2.5, np.nan, -np.inf, "x", [-1, -1]])
REFIT_PARAMS = {
    SCIRLDA: ["n_components", "doc_topic_prior", "topic_word_prior", "batch_size", "step_size",
              "n_gibbs", "max_iter", "total_samples", "local_topics", "tol", "n_jobs",
              "random_state", "sampler", "warm_start"],
    DPMixture: ["sampler", "base_concentration", "alpha_prior", "initial_components",
                "batch_size", "step_size", "max_iter", "total_samples", "n_jobs",
                "random_state", "evaluate_every", "warm_start"],
    BayesianLinearRegression: ["prior_scale", "noise_variance", "sampler", "step_size",
                               "batch_size", "n_iter", "thin", "random_state", "warm_start"],
    BayesianLogisticRegression: ["prior_scale", "fit_intercept", "sampler", "step_size",
                                 "batch_size", "n_iter", "burn_in", "thin", "friction", "zv",
                                 "random_state"],
}


@pytest.fixture(scope="module")
def fitted_models(fitted_lda, fitted_dp, fitted_regressions):
    return {SCIRLDA: fitted_lda, DPMixture: fitted_dp, **fitted_regressions}


@st.composite
def bad_data(draw, cls):
    """Data ``cls.fit`` must refuse: a bad entry, an empty or wrong-shaped array, a sparse
    matrix (regressions), a length mismatch or wrong classes (y), in some format."""
    counts = cls in (SCIRLDA, DPMixture)
    n, d = draw(st.integers(1, 5)), draw(st.integers(1, 4))
    X = np.ones((n, d))
    y = np.arange(n) % 2 if cls is BayesianLogisticRegression else np.linspace(0.0, 1.0, n)
    flaw = draw(st.sampled_from(["entry", "empty", "1-d", "3-d", "string"]
                                + (["zeros"] if counts else ["sparse", "y"])))
    if flaw == "entry":
        bad = [-1, 0.5, np.nan, np.inf, 1e300] if counts else [np.nan, np.inf, -np.inf, 1e300]
        X[draw(st.integers(0, n - 1)), draw(st.integers(0, d - 1))] = draw(st.sampled_from(bad))
        X = as_format(X, draw(st.sampled_from(["dense", "float32", "csr", "coo", "list"] if counts
                                              else ["dense", "frame", "list"])))
    elif flaw == "empty":
        X = np.ones((0, d)) if draw(st.booleans()) else np.ones((n, 0))
    elif flaw == "1-d":
        X = X[0]
    elif flaw == "3-d":
        X = X[..., None]
    elif flaw == "string":
        X = "counts"
    elif flaw == "zeros":                          # no counts at all
        X = as_format(np.zeros((n, d)), draw(FORMATS))
    elif flaw == "sparse":
        X = as_format(X, draw(st.sampled_from(["csr", "csc", "coo"])))
    else:
        y = draw(st.sampled_from([y[:-1], np.full(n, np.nan), np.full(n, 7.0),
                                  np.ones((n, 2))]))
        if cls is BayesianLinearRegression and y.ndim == 1 and np.isfinite(y).all():
            y = np.array(["a"] * len(y))           # one class is fine for a regression
    return (X,) if counts else (X, y)


@FUZZ
@given(cls=st.sampled_from(list(REFIT_PARAMS)), data=st.data())
def test_a_failed_fit_on_bad_data_leaves_a_fitted_model_unchanged(fitted_models, cls, data):
    model = fitted_models[cls]
    args = data.draw(bad_data(cls))
    before = pickle.dumps(model)
    with pytest.raises((ValueError, TypeError, MemoryError)) as failure:
        model.fit(*args)
    check_error(failure.value)
    assert pickle.dumps(model) == before


@FUZZ
@given(cls=st.sampled_from(list(REFIT_PARAMS)), data=st.data())
def test_a_failed_fit_with_an_absurd_parameter_leaves_a_fitted_model_unchanged(
        fitted_models, cls, data):
    name, value = data.draw(st.sampled_from(REFIT_PARAMS[cls])), data.draw(ABSURD)
    if name == "n_jobs" and value == -1:
        value = 0
    model = pickle.loads(pickle.dumps(fitted_models[cls])).set_params(**{name: value})
    before = pickle.dumps(model)
    with pytest.raises((ValueError, TypeError)) as failure:
        model.fit(*TRAINING[cls])
    check_error(failure.value, name, *RELATED.get(name, ()), data=None)
    assert pickle.dumps(model) == before


@pytest.mark.parametrize("message", ["every row must be positive", "n must be >= 1",
                                     "step size h=1e-300 is too small", "Input contains NaN.",
                                     "stick_step_size must be > 0", "Xs must be finite"])
def test_the_check_refuses_an_error_that_does_not_name_the_problem(message):
    with pytest.raises(AssertionError, match="does not name the problem"):
        check_error(ValueError(message), "step_size", "n_components")


# ---------------------------------------------------------------- defaults on tiny inputs
#: ``max_time`` of each fit below; a fit may overrun it by one step or iteration, and the
#: start (validation, a DP mixture's pilot chain) is counted by the estimators that say so.
TINY_BUDGET = 2.0
#: A fit still running after this many seconds is taken for a hang and fails the test.
HANG_SECONDS = 60
TINY = settings(max_examples=25, deadline=None, derandomize=True, database=None,
                suppress_health_check=[HealthCheck.too_slow])
HUGE_COUNT = 2 ** 31


@st.composite
def tiny_counts(draw):
    """1-3 rows x 1-3 columns of counts: zeros, small counts and huge ones."""
    rows, columns = draw(st.integers(1, 3)), draw(st.integers(1, 3))
    cells = st.sampled_from([0, 0, 1, 2, 5, 10 ** 4, HUGE_COUNT])
    return np.array(draw(st.lists(cells, min_size=rows * columns, max_size=rows * columns)),
                    dtype=np.int64).reshape(rows, columns)


@st.composite
def tiny_regression(draw, classes):
    """1-3 rows x 1-3 features of zeros, ordinary and huge values, and their targets."""
    rows, columns = draw(st.integers(1, 3)), draw(st.integers(1, 3))
    values = st.sampled_from([0.0, 0.0, 1.0, -2.5, 1e6, -1e9])
    X = np.array(draw(st.lists(values, min_size=rows * columns, max_size=rows * columns)),
                 dtype=float).reshape(rows, columns)
    targets = st.sampled_from([0, 1]) if classes else values
    return X, np.array(draw(st.lists(targets, min_size=rows, max_size=rows)), dtype=float)


def fit_within_budget(model, *data):
    """Fit ``model`` at its defaults (with ``max_time=TINY_BUDGET`` where it has one): it
    returns, or raises an error that names the problem, long before ``HANG_SECONDS``."""
    budget = "max_time" in model.get_params()
    model.set_params(random_state=0, **({"max_time": TINY_BUDGET} if budget else {}))
    try:
        with hang_guard(HANG_SECONDS):
            model.fit(*data)
    except (ValueError, TypeError, MemoryError) as exc:
        check_error(exc, "noise_variance", "y")
        return None
    if budget:
        assert model.stop_reason_ in ("max_iter", "max_time", "converged")
    return model


@TINY
@given(cls=st.sampled_from([SCIRLDA, SGRLDLDA, DPMixture]), X=tiny_counts())
def test_count_models_at_their_defaults_finish_on_tiny_inputs(cls, X):
    model = fit_within_budget(cls(), X)
    if model is None:
        assert X.sum() == 0 or X.max() == HUGE_COUNT
        return
    assert_finite(model.components_)
    np.testing.assert_allclose(model.components_.sum(axis=1), 1.0)
    assert_finite(model.transform(X) if cls is not DPMixture else model.predict_proba(X))


@TINY
@given(cls=st.sampled_from(REGRESSIONS), data=st.data())
def test_regressions_at_their_defaults_finish_on_tiny_inputs(cls, data):
    X, y = data.draw(tiny_regression(classes=cls is BayesianLogisticRegression))
    model = fit_within_budget(cls(), X, y)
    if model is not None:
        assert_finite(regression_score(model, X))
