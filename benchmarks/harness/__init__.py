"""The benchmarks' harness: what every script in ``benchmarks/`` shares, so that no script
imports another.

* ``cli``: the common options (``--out FILE``, ``--quick``, ``--seeds``, ``--data``,
  ``--summary-only``) and writing one JSON file with the environment recorded;
* ``corpora``: the registry of corpora: the bundled Wikipedia sample, the synthetic LDA
  corpora, the shared real corpora of ``$SIMPLEXSG_DATA`` (or ``--data``; absent ones are
  skipped with a message), the other bundled ones, and the SGLD benchmarks' split of
  tabular data;
* ``evaluation``: the one document-completion evaluation, and topic matching;
* ``peers``: one runner per peer LDA library (tomotopy, gensim, scikit-learn, ``lda``);
* ``measure``: timing and medians over seeds;
* ``study``: the LDA study's grid and its paired summaries (``lda_study``, ``lda_levers``,
  ``lda_averaging``, ``lda_passes``);
* ``posterior``: the exact references of the SGLD benchmarks (a preconditioned MALA chain,
  moments by importance sampling);
* ``scaling_reference``, ``scaling_runs``, ``scaling_report``: ``sgld_scaling``'s problem
  and its reference posterior (Laplace, checked against the exact references), its runs
  (chains to the error target, eta tuned per method and N), and its table and figure;
* ``semisynthetic``: corpora drawn from topics fitted on a real corpus (Arora et al. 2013),
  streamed to UCI files, and the recovery of the true topics (``lda_semisynthetic``);
* ``suite``: ``make bench``, every script's ``--quick`` form in turn.

The scripts run as ``python benchmarks/NAME.py``, which puts this folder's parent on
``sys.path``: they import ``from harness import ...``, and never each other.
"""
