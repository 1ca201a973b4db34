"""Dask test helpers shared by the LDA and DP-mixture tests: a two-worker local cluster, and
faults injected where an executor gathers a step's result (``DaskExecutor._gather``)."""
import os

import dask
import distributed


def local_client():
    """A client of a LocalCluster of 2 single-threaded worker processes (a generator, for a
    pytest fixture). The Active Memory Manager would be harmless, but it is not what the tests
    are about."""
    with dask.config.set({"distributed.scheduler.active-memory-manager.start": False}):
        with distributed.LocalCluster(n_workers=2, processes=True, threads_per_worker=1,
                                      host="127.0.0.1", dashboard_address=None) as cluster:
            with distributed.Client(cluster) as client:
                yield client


def kill_a_worker_at(monkeypatch, executor, n_done):
    """Kill a worker once ``executor`` has gathered ``n_done`` steps and submitted the next
    one's tasks; returns the list that receives the killed worker's address."""
    killed = []

    def gather_after_a_kill(self, future):
        if len(self.traffic) == n_done:
            worker = sorted(self.client.nthreads())[0]
            self.client.run(os._exit, 1, workers=[worker], on_error="ignore")
            killed.append(worker)
        return future.result()

    monkeypatch.setattr(executor, "_gather", gather_after_a_kill)
    return killed


def fail_at(monkeypatch, executor, n_done, task):
    """Make step ``n_done + 1`` of ``executor`` raise KilledWorker (of ``task``) when it
    gathers; ``monkeypatch.undo()`` restores the executor."""
    original = executor._gather

    def fail(self, future):
        if len(self.traffic) == n_done:
            raise distributed.KilledWorker(task, "tcp://127.0.0.1:1", 3)
        return original(self, future)

    monkeypatch.setattr(executor, "_gather", fail)
