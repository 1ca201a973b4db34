"""Compiled Cython kernels (built by setup.py; see each .pyx for its conventions), one job a file:

* ``_bitgen``: bit generators usable without the GIL (numpy's, and per-document streams);
* ``_simplex``: the simplex samplers' per-row transitions, SCIR and SGRLD;
* ``_global_step``: LDA's fused global step over the topic rows (cimports ``_simplex``);
* ``_lda_gibbs``: LDA's local Gibbs kernel (cimports ``_sparse``);
* ``_sparse``: generic CSR helpers (index checks, grouping by key, token arrays, transpose);
* ``_dp``: the DP mixture's allocations (slice sampler, split-merge proposals);
* ``_uci``: parsing of UCI bag-of-words lines.

A ``.pxd`` beside a ``.pyx`` declares the ``cdef`` functions other kernels cimport.
"""
