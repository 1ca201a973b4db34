"""The SCIR global step with theta integrated out
(``simplexsg._ext._global_step.scir_shape_step``): its Poisson counts against their exact
negative binomial law, whatever share of the words draws as a group, and the chain's
stationary gamma law over several steps."""
import numpy as np
import pytest
import scipy.stats as stats

from simplexsg._ext._global_step import scir_shape_step
from simplexsg._random import document_streams
from simplexsg.lda.global_step import draw_theta

#: Chi-square and KS tests reject at this level; with fixed seeds each outcome is fixed, and
#: an exact kernel passes all of them at this level with probability above 0.98.
LEVEL = 1e-3

# One topic-row pattern: light words (shape beta), a word with a count, heavy words.
SHAPES = np.array([0.1, 0.1, 0.3, 2.0, 5.0, 0.1])
BETA, H, SCALE = 0.1, 0.7, 0.4
EST = (np.array([0, 1, 1, 1], dtype=np.int64), np.array([2], dtype=np.int64), np.array([3.0]))


def _step(state, scale, h, step, light_rate, n_jobs=1, seed=0):
    K = state.shape[0]
    streams = document_streams(seed, step, range(K))
    state_out, local_out = np.empty_like(state), np.empty_like(state)
    ptr, word, value = EST if K == 3 else (np.zeros(K + 1, dtype=np.int64),
                                           np.empty(0, dtype=np.int64), np.empty(0))
    scir_shape_step(state, scale, BETA, ptr, word, value, h, streams.addresses, state_out,
                    local_out, n_jobs=n_jobs, light_rate=light_rate)
    return state_out, local_out


@pytest.mark.parametrize("light_rate", [0.0, 0.5, np.inf])
def test_counts_are_independent_negative_binomials_for_any_light_rate(light_rate):
    """From shapes s_j of scale c0, a step's counts N_j (new shape - beta - est) are
    independent NB(s_j, 1 / (1 + c0 e^-h / c)) (a Poisson of a gamma); 20,000 steps of a 3 x 6
    state, row 1 (no counts): each word's histogram against that pmf, and the joint table of
    two light words against independence, by chi-square. light_rate 0 draws every word on its
    own, inf every word in the Polya urn, 0.5 splits the row."""
    state = np.tile(SHAPES, (3, 1))
    c = -np.expm1(-H)
    p = 1.0 / (1.0 + SCALE * np.exp(-H) / c)
    base = np.full_like(state, BETA)
    base[0, 2] += 3.0
    n = np.array([_step(state, SCALE, H, t, light_rate)[0] - base for t in range(20_000)])
    counts = np.rint(n).astype(np.int64)
    np.testing.assert_allclose(n, counts, atol=1e-9)
    for j, shape in enumerate(SHAPES):
        x = counts[:, 1, j]
        top = max(3, int(np.quantile(x, 0.99)))
        observed = np.bincount(np.minimum(x, top), minlength=top + 1)
        pmf = stats.nbinom.pmf(np.arange(top), shape, p)
        expected = np.append(pmf, 1.0 - pmf.sum()) * len(x)
        assert stats.chisquare(observed, expected).pvalue > LEVEL, j
    table = np.zeros((3, 3))
    np.add.at(table, (np.minimum(counts[:, 1, 0], 2), np.minimum(counts[:, 1, 5], 2)), 1)
    assert stats.chi2_contingency(table)[1] > LEVEL
    # row 0's word 2 holds a count: its shape rises by it, its N keeps the same law
    assert stats.chisquare(*_histogram(counts[:, 0, 2], SHAPES[2], p)).pvalue > LEVEL


def _histogram(x, shape, p, top=3):
    observed = np.bincount(np.minimum(x, top), minlength=top + 1)
    pmf = stats.nbinom.pmf(np.arange(top), shape, p)
    return observed, np.append(pmf, 1.0 - pmf.sum()) * len(x)


def test_the_chain_keeps_its_stationary_gamma_law():
    """With no counts, Gamma(beta, 1) coordinates are stationary for the CIR process: start
    4,000 independent rows of 8 words from theta ~ Gamma(beta, 1) (values), take three steps
    of different h (the second and third from shapes), draw theta from the last shapes: each
    word's 4,000 values against Gamma(beta, 1) by Kolmogorov-Smirnov, and the rows' sums
    against Gamma(8 beta, 1)."""
    rng = np.random.default_rng(3)
    theta = rng.gamma(BETA, size=(4000, 8))
    state, scale = theta, 0.0
    for step, h in enumerate((0.2, 1.5, 0.6)):
        state, _ = _step(state, scale, h, step, light_rate=0.5, seed=4)
        scale = -np.expm1(-h)
    drawn = draw_theta(state, scale, np.random.SeedSequence(5))
    for j in range(8):
        assert stats.kstest(drawn[:, j], stats.gamma(BETA).cdf).pvalue > LEVEL, j
    assert stats.kstest(drawn.sum(axis=1), stats.gamma(8 * BETA).cdf).pvalue > LEVEL


def test_local_topics_are_the_normalised_mean_given_the_shapes():
    """The local topics: row-normalised ``s c0 e^-h + (beta + est) (1 - e^-h)``, the step's
    mean given the state; from values (scale 0), ``theta e^-h + ...``. The result does not
    depend on n_jobs."""
    state = np.tile(SHAPES, (3, 1)) * np.array([[1.0], [2.0], [0.5]])
    c = -np.expm1(-H)
    shape = np.full_like(state, BETA)
    shape[0, 2] += 3.0
    for scale, mean_state in ((SCALE, state * SCALE), (0.0, state)):
        out, local = _step(state, scale, H, 0, 0.5)
        mean = mean_state * np.exp(-H) + shape * c
        np.testing.assert_allclose(local, mean / mean.sum(axis=1, keepdims=True), rtol=1e-12)
        out2, local2 = _step(state, scale, H, 0, 0.5, n_jobs=2)
        np.testing.assert_array_equal(out, out2)
        np.testing.assert_array_equal(local, local2)


def test_bad_scale_or_light_rate_is_refused():
    state = np.tile(SHAPES, (3, 1))
    for scale, light_rate in ((-1.0, 0.5), (np.nan, 0.5), (np.inf, 0.5), (SCALE, -1.0),
                              (SCALE, np.nan)):
        with pytest.raises(ValueError, match="scale >= 0 and light_rate >= 0"):
            _step(state, scale, H, 0, light_rate)
