"""scikit-learn's estimator checks for simplexsg's estimators, as ``parametrize_with_checks``
does, less the checks that cannot apply: ``check_array_api_input`` tests array-API inputs
(CuPy, PyTorch, ...), which none of the estimators declares (``array_api_support`` is False);
scikit-learn would only skip it at run time unless SCIPY_ARRAY_API is set."""
import pytest
from sklearn.utils.estimator_checks import _get_check_estimator_ids, estimator_checks_generator

NOT_APPLICABLE = {"check_array_api_input"}


def _name(check):
    return getattr(check, "func", check).__name__


def parametrize_checks(estimators, expected_failed_checks=None):
    cases = []
    for estimator in estimators:
        expected = expected_failed_checks(estimator) if expected_failed_checks else None
        for case in estimator_checks_generator(estimator, legacy=True, mark="xfail",
                                               expected_failed_checks=expected):
            check = case.values[1] if hasattr(case, "values") else case[1]
            if _name(check) not in NOT_APPLICABLE:
                cases.append(case)
    return pytest.mark.parametrize("estimator, check", cases, ids=_get_check_estimator_ids)
