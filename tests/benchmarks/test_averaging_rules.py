"""``benchmarks/lda_averaging.py``: the topics it records are those ``components_`` averages,
so its windows score what a fit would return."""
import numpy as np
import scipy.sparse as sp

from lda_averaging import RULES, local_topics
from simplexsg import SCIRLDA


def test_the_default_window_of_the_recorded_topics_is_components():
    """Averaged over the package's own window, the topics recorded at every step equal the
    fit's ``components_`` (up to their float32 storage); the record has one entry a step."""
    rng = np.random.default_rng(0)
    X = sp.csr_array(rng.poisson(0.3, size=(60, 40)))

    def fit():
        return SCIRLDA(4, random_state=1, max_iter=4).fit(X)

    model = fit()
    kept = local_topics(fit)
    assert kept.shape == (model.n_batch_iter_, 4, 40)
    start = RULES["default"](len(kept))
    assert start == model.burn_in_ > 0
    np.testing.assert_allclose(kept[start:].mean(axis=0, dtype=np.float64), model.components_,
                               rtol=1e-6, atol=1e-9)
    assert not np.allclose(kept[0], model.components_, rtol=1e-3)
