"""The convergence check of every estimator: ``simplexsg.stopping.PlateauMonitor``, the
``Plateau`` rule on a pluggable score, recorded."""
import copy
import pickle

import numpy as np
import pytest

from simplexsg.stopping import Plateau, PlateauMonitor


class Curve:
    """A score that reads the model's current value (a picklable class, as a monitor's score
    must be)."""

    def __call__(self, model):
        return model["value"]


NOISY = (100, 99.5, 101, 98, 97.5, 97.2, 97.9, 97.0, 96.9, 96.95)


@pytest.mark.parametrize("tol, patience", [(1e-2, 3), (1e-3, 2), (0.0, 1), (0.5, 2)])
def test_the_monitor_stops_exactly_when_the_plateau_rule_does(tol, patience):
    rule, monitor = Plateau(tol, patience), PlateauMonitor(Curve(), tol, patience)
    for step, value in enumerate(NOISY):
        assert monitor.check({"value": value}, step) == rule.update(value)
    assert (monitor.best, monitor.misses) == (rule.best, rule.misses)
    assert [e["step"] for e in monitor.history] == list(range(len(NOISY)))
    assert [e["score"] for e in monitor.history] == list(NOISY)
    assert all(e["check_seconds"] >= 0 for e in monitor.history)


def test_the_first_checks_score_nothing_and_entries_note_the_record():
    calls = []

    def score(model):
        calls.append(model)
        return 10.0
    monitor = PlateauMonitor(score, tol=0.1, patience=2, first_check=2, name="perplexity")
    assert [monitor.check(step, step, seconds=0.5 * step) for step in range(5)] == \
        [False, False, False, False, True]          # scored from the third check: 3 scores
    assert calls == [2, 3, 4]
    assert [(e["step"], e["perplexity"], e["seconds"]) for e in monitor.history] == \
        [(2, 10.0, 1.0), (3, 10.0, 1.5), (4, 10.0, 2.0)]
    assert set(monitor.history[0]) == {"step", "perplexity", "check_seconds", "seconds"}


def test_a_shallow_copy_is_a_snapshot_and_the_monitor_pickles():
    monitor = PlateauMonitor(Curve(), tol=0.01, patience=2)
    monitor.check({"value": 5.0}, 1)
    saved = copy.copy(monitor)
    monitor.check({"value": 5.0}, 2)
    assert (len(saved.history), saved.misses, saved.checks) == (1, 0, 1)
    assert (len(monitor.history), monitor.misses, monitor.checks) == (2, 1, 2)
    clone = pickle.loads(pickle.dumps(monitor))
    assert clone.history == monitor.history
    assert clone.check({"value": 5.0}, 3) is monitor.check({"value": 5.0}, 3) is True
    assert np.isinf(PlateauMonitor(Curve()).best)
