"""``SCIRLDA`` and ``SGRLDLDA``: ``simplexsg.lda.estimator.LDA`` with ``sampler`` fixed, for
users who name the sampler by the class (each sets ``_fixed_sampler``, which ``fit`` checks)."""
import numpy as np

from .defaults import DEFAULT_SWEEPS
from .estimator import LDA


class SCIRLDA(LDA):
    """``LDA(sampler="scir")``: LDA with the topics sampled by the stochastic CIR process.

    The parameters, their defaults, the fitted attributes and the methods are those of
    ``LDA``, documented there; this class fixes ``sampler``.

    Parameters
    ----------
    sampler : {"scir"}, default "scir"
        Fixed: another value raises ValueError in ``fit`` (``LDA(sampler="sgrld")`` samples
        with SGRLD). The other parameters are ``LDA``'s.

    See Also
    --------
    LDA : The parameters, fitted attributes and methods.
    SGRLDLDA : The same model sampled by SGRLD.
    """

    _fixed_sampler = "scir"     # LDA.__init__ already defaults to it


class SGRLDLDA(LDA):
    """``LDA(sampler="sgrld")``: LDA with the topics sampled by SGRLD (Patterson & Teh 2013).

    The parameters, their defaults, the fitted attributes and the methods are those of
    ``LDA``, documented there; this class fixes ``sampler``.

    Parameters
    ----------
    sampler : {"sgrld"}, default "sgrld"
        Fixed: another value raises ValueError in ``fit`` (``LDA(sampler="scir")`` samples
        with SCIR). The other parameters are ``LDA``'s.

    See Also
    --------
    LDA : The parameters, fitted attributes and methods.
    SCIRLDA : The same model sampled by SCIR.
    """

    _fixed_sampler = "sgrld"

    # LDA's signature with sampler="sgrld": scikit-learn reads the parameters and their
    # defaults from it (tests/lda/test_lda.py checks the two agree).
    def __init__(self, n_components=10, *, sampler="sgrld", doc_topic_prior=None,
                 topic_word_prior=None, batch_size=None, step_size=None, step_offset=None,
                 step_decay=None, n_gibbs=DEFAULT_SWEEPS, gibbs_burn_in=None, max_iter=None,
                 burn_in=None, total_samples=None, local_topics="mean", rao_blackwell=True,
                 learn_doc_topic_prior=False, doc_topic_prior_prior=(1.0, 1.0),
                 local_warm_start=False, max_time=None, tol=None, n_iter_no_change=3,
                 shuffle_buffer=None, dtype=np.float64, warm_start=False,
                 checkpoint_every=None, checkpoint_path=None, n_jobs=1, client=None,
                 random_state=None, verbose=0, evaluate_every=0, n_topic_samples=0):
        super().__init__(
            n_components, sampler=sampler, doc_topic_prior=doc_topic_prior,
            topic_word_prior=topic_word_prior, batch_size=batch_size, step_size=step_size,
            step_offset=step_offset, step_decay=step_decay, n_gibbs=n_gibbs,
            gibbs_burn_in=gibbs_burn_in, max_iter=max_iter, burn_in=burn_in,
            total_samples=total_samples, local_topics=local_topics, rao_blackwell=rao_blackwell,
            learn_doc_topic_prior=learn_doc_topic_prior,
            doc_topic_prior_prior=doc_topic_prior_prior, local_warm_start=local_warm_start,
            max_time=max_time, tol=tol, n_iter_no_change=n_iter_no_change,
            shuffle_buffer=shuffle_buffer, dtype=dtype, warm_start=warm_start,
            checkpoint_every=checkpoint_every, checkpoint_path=checkpoint_path, n_jobs=n_jobs,
            client=client, random_state=random_state, verbose=verbose,
            evaluate_every=evaluate_every, n_topic_samples=n_topic_samples)
