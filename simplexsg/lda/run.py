"""Where an LDA fit stands, so that an interrupted fit or a checkpoint resumes exactly."""
import dataclasses

from .._fitting import array_digest
from ..corpus import BowStream


def data_fingerprint(corpus, heldout, params):
    """What a resumed fit must see again: a digest of the training and held-out counts (for a
    stream: its size), and the parameters that shape the chain."""
    def digest(X):
        if X is None:
            return None
        if isinstance(X, BowStream):
            return ("stream", X.n_documents, X.n_features)
        return (X.shape, array_digest(X.indptr, X.indices, X.data))
    return {"X": digest(corpus), "X_heldout": digest(heldout), **params}


@dataclasses.dataclass(frozen=True)
class FitRun:
    """The plan of one ``fit`` and how far it got: passes ``first_epoch .. end_epoch - 1``
    (numbered across the fits of a chain, since a pass's minibatch order derives from its
    number), of ``pass_steps[p]`` minibatches of ``batch_sizes[p]`` documents (p counted from
    ``first_epoch``), the pass in progress ``epoch`` and the steps of it done ``step``.
    Immutable: the loop rebinds it."""

    fingerprint: dict
    batch_sizes: tuple
    pass_steps: tuple
    first_epoch: int
    passes: int
    min_passes: int
    epoch: int = None
    step: int = 0

    def __post_init__(self):
        if self.epoch is None:
            object.__setattr__(self, "epoch", self.first_epoch)

    @property
    def end_epoch(self):
        return self.first_epoch + self.passes

    @property
    def batch_size(self):
        """Documents a minibatch in the pass in progress (the last pass's once done)."""
        return self.batch_sizes[min(self.epoch, self.end_epoch - 1) - self.first_epoch]

    @property
    def steps_per_pass(self):
        """Steps of the pass in progress (the last pass's once done)."""
        return self.pass_steps[min(self.epoch, self.end_epoch - 1) - self.first_epoch]

    @property
    def steps_left(self):
        return sum(self.pass_steps[self.epoch - self.first_epoch:]) - self.step

    @property
    def passes_done(self):
        """Complete passes of this fit (one stopped at the last step of a pass counts it)."""
        return self.epoch - self.first_epoch + (self.step >= self.steps_per_pass)

    def advance(self):
        return dataclasses.replace(self, step=self.step + 1)

    def next_pass(self):
        return dataclasses.replace(self, epoch=self.epoch + 1, step=0)
