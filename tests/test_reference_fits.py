"""Fits with fixed seeds compute what they computed when ``tests/data/reference_fits.json`` was
written (``tests/helpers/reference_fits.py`` says how and when to regenerate it): a refactor
changes no draw, minibatch or update of LDA, the DP mixture or the regressions."""
import json

import numpy as np
import pytest

from helpers import reference_fits

STORED = json.loads(reference_fits.REFERENCE.read_text())
#: A few ulps of libm between machines, amplified over a few steps, stay far below this; a
#: changed random stream or update moves the figures at the first digit.
RTOL, ATOL = 1e-9, 1e-12


@pytest.mark.parametrize("family", [reference_fits.lda_cases, reference_fits.dp_cases,
                                    reference_fits.regression_cases])
def test_fits_compute_the_stored_figures(family):
    computed = family()
    for name, figures in computed.items():
        np.testing.assert_allclose(figures, STORED[name], rtol=RTOL, atol=ATOL, err_msg=name)
    assert len(computed) == len([n for n in STORED if n.split("_")[0] in
                                 {n.split("_")[0] for n in computed}])
