"""Where an LDA fit stands, so that an interrupted fit or a checkpoint resumes exactly."""
import dataclasses

from .._fitting import array_digest
from ..corpus import BowStream
from .defaults import FitLength


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
    """The plan of one ``fit`` (``length``, ``simplexsg.lda.defaults.FitLength``, its passes
    counted from ``first_epoch``) and how far it got: passes ``first_epoch .. end_epoch - 1``
    (numbered across the fits of a chain, since a pass's minibatch order derives from its
    number), the pass in progress ``epoch`` and the steps of it done ``step``. Immutable: the
    loop rebinds it."""

    fingerprint: dict
    length: FitLength
    first_epoch: int
    epoch: int = None
    step: int = 0

    def __post_init__(self):
        if self.epoch is None:
            object.__setattr__(self, "epoch", self.first_epoch)

    @property
    def min_passes(self):
        return self.length.min_passes

    @property
    def end_epoch(self):
        return self.first_epoch + self.length.passes

    @property
    def batch_size(self):
        """Documents a minibatch in the pass in progress."""
        return self.length.batch_size(self.epoch - self.first_epoch)

    @property
    def steps_left(self):
        return self.length.steps_from(self.epoch - self.first_epoch) - self.step

    @property
    def passes_done(self):
        """Complete passes of this fit (one stopped at the last step of a pass counts it)."""
        done = self.epoch - self.first_epoch
        return done + (done < self.length.passes and self.step >= self.length.steps(done))

    def advance(self):
        return dataclasses.replace(self, step=self.step + 1)

    def next_pass(self):
        return dataclasses.replace(self, epoch=self.epoch + 1, step=0)
