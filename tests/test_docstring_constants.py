"""A docstring that names a module constant also gives its value, so that a user reading
``help()`` learns the number, not only a private name (#35)."""
import importlib
import numbers
import re

import pytest

from simplexsg import (LDA, SCIRLDA, SGRLDLDA, BayesianLinearRegression,
                       BayesianLogisticRegression, DPMixture)

CONSTANT = re.compile(r"``(_?[A-Z][A-Z0-9_]{2,})``")
#: How far from the name its value may stand, in characters.
NEAR = 80
MODULES = ("simplexsg.lda.defaults", "simplexsg.lda.estimator", "simplexsg.dpmixture.defaults",
           "simplexsg.sgmcmc.regression", "simplexsg.sgmcmc.regression_defaults",
           "simplexsg.sgmcmc.models")


def spellings(value):
    """Ways a docstring writes ``value``: 1000, 1,000, 1e+03, 10^3, 0.25, 1e-6."""
    out = {str(value), f"{value:,}", f"{value:g}"}
    if isinstance(value, numbers.Integral) and value > 0 and str(value).rstrip("0") == "1":
        out.add(f"10^{len(str(value)) - 1}")
    if isinstance(value, float) and value:
        mantissa, exponent = f"{value:e}".split("e")
        out.add(f"{float(mantissa):g}e{int(exponent)}")
    return out


def constants():
    values = {}
    for name in MODULES:
        module = importlib.import_module(name)
        values.update({k: v for k, v in vars(module).items() if CONSTANT.fullmatch(f"``{k}``")})
    return values


@pytest.mark.parametrize("cls", [LDA, SCIRLDA, SGRLDLDA, DPMixture, BayesianLinearRegression,
                                 BayesianLogisticRegression])
def test_every_numeric_constant_a_docstring_names_comes_with_its_value(cls):
    values, doc = constants(), " ".join(cls.__doc__.split())
    missing = []
    for match in CONSTANT.finditer(doc):
        value = values.get(match.group(1))
        if not isinstance(value, numbers.Real) or isinstance(value, bool):
            continue
        around = doc[max(0, match.start() - NEAR):match.end() + NEAR]
        if not any(s in around for s in spellings(value)):
            missing.append(f"{match.group(1)} ({value})")
    assert not missing, f"{cls.__name__} names constants without their values: {missing}"
