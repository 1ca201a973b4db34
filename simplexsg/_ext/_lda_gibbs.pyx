"""Local Gibbs sweeps for LDA with the topics fixed and each document's topic proportions
integrated out (the "local step" of stochastic-gradient LDA; Patterson & Teh 2013, Baker et
al. 2018).

For a token i of word w in document d, with the other tokens' assignments fixed::

    p(z_i = k | rest) ∝ (alpha_k + n_dk^{-i}) * phi[k, w]

Sweep 0 assigns the tokens in order, each from ∝ (alpha_k + n_dk so far) * phi[k, w] (a cold
start), or, when the caller passes a document's assignments from an earlier visit, the chain
starts from them instead (a warm start: the sweeps are the same Gibbs kernel, so the stationary
law p(z_d | phi, alpha) is unchanged; only the starting point moves); then ``n_sweeps`` full
sweeps follow. Each document's n_dk after each of the last ``n_sweeps - burn_in`` sweeps is
added into an int64 accumulator, and so are the word-topic counts n_wk, summed over the
documents: sums of integers, the same for any number of threads. Optionally each document's
n_dk after its last sweep is copied out too: one draw of the counts from the chain (unbiased
where the average is not, e.g. for the likelihood of alpha).

Each draw is exact: a draw from the conditional above, not a Metropolis-Hastings move. Let
``f_k = phi[k, w] / max_j phi[j, w]`` (so f_k <= 1), n_k = n_dk^{-i}, and split the topics of
word w into its *top* topics (at most TOP_MAX, those with f_k above a cut-off, 1/32 unless
more than TOP_MAX pass it, by decreasing f: ``_top_topics``) and
the rest, whose largest f is ``eps_w``. The unnormalised conditional ``(alpha_k + n_k) f_k`` is
bounded by the envelope

    g(k) = alpha_k f_k + n_k f_k   (k a top topic: equal to the conditional)
    g(k) = alpha_k f_k + n_k eps_w (any other k: f_k <= eps_w),

a mixture of three parts with known totals: ``n_k f_k`` over the top topics (summed per token:
a few terms, since a word has few topics), ``alpha_k f_k`` drawn by inverting the word's
cumulative sums (computed once per call: they do not change while phi is fixed), and
``n_k eps_w`` over the other topics (total: eps_w times the other tokens not on a top topic),
drawn by taking the topic of a uniformly chosen other token of the document, chosen again
while it is a top topic. A proposal k is accepted with probability
``(alpha_k + n_k) f_k / g(k)`` (1 for a top topic): rejection sampling, so an accepted k is an
exact draw. After ``2 + (topics in use) / 8`` rejections the token is drawn the
exact way of SparseLDA (Yao, Mimno and McCallum, 2009): the count part ``n_k f_k`` summed over
the topics the document uses, then the alpha part; every path returns an exact draw, so does
their mixture. A token costs O(top topics of its word) when the word fits the document's topics
(nearly every token, once the chain has moved) and O(topics in the document) at worst.

The alpha part is inverted by binary search of the word's cumulative sums (O(log K)), not by
an O(1) table (Walker's alias method, or Chen and Asau's guide table, which gives the same k
as the search): a guide table, tried, made the kernel slower (0.81x at K = 100 on short
documents, 0.92-0.94x at K = 1000 on gibbs_throughput's topics), since its extra table costs a
cache miss per draw while the search's first probes stay cached for a word drawn many times;
an alias table needs the same extra access and a dearer build per word and minibatch.

Which way draws a token is chosen by comparing the two scans: directly (O(topics in use)) when
the document uses at most ``direct_margin`` more topics than the word has top topics, by
rejection (O(top topics) plus its proposals) otherwise. The choice depends only on the current
state and the word, never on the draw itself, so each draw stays exact either way.
Throughput against `lda` and tomotopy: benchmarks/gibbs_throughput.py.

The word-topic counts are not incremented token by token in a (words x topics) array (a cache
miss per token at large K): each token's topics of the kept sweeps are recorded in order, and
after the sweeps the tokens are grouped by word and counted, one word at a time, into sparse
(word, topic, count) triples.

Counts in expectation (``rao_blackwell``, the training step's counts). Given the other
tokens, a kept token of word w lands on topic k with probability ``(alpha_k + n_k) f_k / T``
(T the conditional's total): instead of its draw, that whole vector is counted
(Rao-Blackwellised), which has the draw's expectation and less noise; the chain itself, and so
its law, is the same. Its count part ``n_k f_k / T`` covers the topics in use
(``_add_expectation``, O(topics in use) a kept draw); its alpha part ``A_w / T``, with A_w =
``sum_k alpha_k f_k``, is summed per word, and the global step spreads it over the K topics by
``alpha_k phi[k, w] / sum_j alpha_j phi[j, w]`` (``simplexsg.lda.global_step``). A document's
count parts are summed per run of its tokens (tokens of one word come together) in a dense
scratch row of K per run, then rounded to multiples of 2^-24 (``EXPECTATION_UNIT``) and added
into a (minibatch words x K) int64 array that the threads share, by atomic adds
(``_emit_expectations``; half the memory of the word tables ``fit`` and ``alpha_cdf``); after
the sweeps its rows become sparse (``_expected_word_topic``). Integer sums depend neither on
the threads nor on how the documents are split. Summed in place, their cost does not grow
with the minibatch (docs/benchmarks/lda.rst, "Expected counts summed in place").

Documents are independent given the topics. Document d draws only from its own bit generator
``bitgens[d]``, so the result depends on the generators and the data, never on the threads.

This file is the kernel alone: the CSR helpers it uses (index checks, the grouping of tokens by
word) and the minibatch's token arrays are in ``_sparse.pyx``.
"""
from cython.parallel cimport parallel, prange, threadid
from libc.math cimport INFINITY
from libc.stdint cimport int32_t, int64_t, uintptr_t
from libc.stdlib cimport calloc, free, malloc, qsort
from posix.stdlib cimport posix_memalign
from numpy.random cimport bitgen_t

from ._sparse cimport _first_outside, _group_by_key

import numpy as np

ctypedef fused real:
    float
    double

cdef extern from *:
    """
    #define SIMPLEXSG_PREFETCH(p) __builtin_prefetch((const void*) (p))
    #define SIMPLEXSG_PREFETCH_WRITE(p) __builtin_prefetch((const void*) (p), 1)
    #define SIMPLEXSG_ATOMIC_ADD(p, v) __atomic_fetch_add((p), (v), __ATOMIC_RELAXED)
    """
    void SIMPLEXSG_PREFETCH(const void* p) noexcept nogil
    void SIMPLEXSG_PREFETCH_WRITE(const void* p) noexcept nogil
    void SIMPLEXSG_ATOMIC_ADD(int64_t* p, int64_t v) noexcept nogil

cdef enum:
    TOP_MAX = 32         # top topics kept per word
    PREFETCH_AHEAD = 8   # tokens ahead whose word rows the start of a visit prefetches
    PREFETCH_LINES = 16  # lines of each of a word's two rows prefetched
    DIRECT_MARGIN = 24   # default: direct draws while topics in use <= top topics + this
    WORD_BLOCK = 64      # words a thread takes at a time when building their tables
    N_TOP_CUTS = 6       # cut-offs of the top topics, below
#: ``direct_margin`` that makes every draw go the rejection way (a word has at most TOP_MAX top
#: topics), for tests.
REJECTION_ALWAYS = -1 - TOP_MAX
#: A word's top topics are those past the first of these f_k that at most TOP_MAX topics pass.
cdef double[N_TOP_CUTS] TOP_CUTS = [1.0 / 32, 1.0 / 8, 1.0 / 4, 1.0 / 2, 3.0 / 4, 15.0 / 16]
#: Counts in expectation are summed across documents as integer multiples of 1 / this (2^24):
#: integer sums do not depend on their order, so neither on the threads nor on how the
#: documents are split (``simplexsg.lda.distributed``), and their float64 totals stay exact
#: up to 2^29. Rounding moves a run's value by at most 3e-8.
cdef double EXPECTATION_UNIT = 16777216.0


cdef struct WordTable:
    double eps                 # largest f_k of the topics not in top
    int32_t n_top              # 0 for a word no document of the call draws by rejection
    int32_t top[TOP_MAX]       # the topics with f_k > eps, by decreasing f_k
    double top_fit[TOP_MAX]    # their f_k


cdef struct Expectations:
    # A thread's state for the counts in expectation (``rao_blackwell``): for the document
    # being swept, acc[r * K + k] sums n_k / T over the kept draws of its r-th run of
    # tokens (a run: consecutive tokens of one word), T the conditional's total; the topics
    # with a column in use are ``touched[:n_touched]`` (``is_touched`` flags them).
    double* acc
    Py_ssize_t acc_size
    int32_t* touched
    char* is_touched
    Py_ssize_t n_touched


cdef inline Py_ssize_t _invert(const double* cdf, Py_ssize_t n, double x) noexcept nogil:
    """Smallest k with x < cdf[k] (binary search; x < cdf[n - 1])."""
    cdef Py_ssize_t lo = 0, hi = n - 1, mid
    while lo < hi:
        mid = (lo + hi) >> 1
        if x < cdf[mid]:
            hi = mid
        else:
            lo = mid + 1
    return lo


cdef inline double _count_cdf(const double* fit, const int64_t* n_dk, const int32_t* topics,
                              Py_ssize_t n_used, double* cdf) noexcept nogil:
    """The conditional's count part: ``cdf[j]`` = sum of ``n_dk[k] f_k`` over the first j + 1
    topics in use; returns the whole sum (0 with no topic in use). O(topics in use)."""
    cdef Py_ssize_t j, k
    cdef double count_mass = 0.0
    for j in range(n_used):
        k = topics[j]
        count_mass += <double> n_dk[k] * fit[k]
        cdf[j] = count_mass
    return count_mass


cdef inline Py_ssize_t _draw_from_cdf(const double* cdf, double count_mass,
                                      const double* alpha_cdf, const int32_t* topics,
                                      Py_ssize_t n_topics, bitgen_t* rng) noexcept nogil:
    """The exact draw of SparseLDA given ``_count_cdf``'s ``cdf`` and ``count_mass``: the count
    part over the topics in use, else the alpha part by inverting its cumulative sums.
    O(topics in use + log K)."""
    cdef Py_ssize_t j
    cdef double alpha_mass = alpha_cdf[n_topics - 1]
    cdef double x = rng.next_double(rng.state) * (count_mass + alpha_mass)
    if x < count_mass:
        j = 0
        while not x < cdf[j]:
            j += 1
        return topics[j]
    x -= count_mass
    return _invert(alpha_cdf, n_topics, x if x < alpha_mass else 0.0)


cdef inline Py_ssize_t _direct_draw(const double* fit, const double* alpha_cdf, const int64_t* n_dk,
                                    const int32_t* topics, Py_ssize_t n_used, double* cdf,
                                    Py_ssize_t n_topics, bitgen_t* rng) noexcept nogil:
    """``_draw_from_cdf`` after ``_count_cdf``."""
    return _draw_from_cdf(cdf, _count_cdf(fit, n_dk, topics, n_used, cdf), alpha_cdf, topics,
                          n_topics, rng)


cdef inline Py_ssize_t _other_token_topic(const double* fit, double eps, const int32_t* z,
                                          Py_ssize_t i, Py_ssize_t n_other,
                                          bitgen_t* rng) noexcept nogil:
    """The topic of a uniformly chosen other token of the document whose topic is not one of
    the word's top topics (``fit > eps``): picks again until it finds one, so the topic k comes
    with probability n_k / (other tokens off the top topics). The caller makes sure there is
    one."""
    cdef Py_ssize_t j, k
    while True:
        j = <Py_ssize_t> (rng.next_double(rng.state) * n_other)
        if j >= n_other:                    # rounding at the top end
            j = n_other - 1
        if j >= i:                          # skip the token being drawn
            j += 1
        k = z[j]
        if not fit[k] > eps:
            return k


cdef Py_ssize_t _draw_topic(const double* fit, const double* alpha_cdf, const WordTable* word,
                            const double* alpha, const int64_t* n_dk,
                            const int32_t* z, Py_ssize_t i, Py_ssize_t n_other,
                            const int32_t* topics, Py_ssize_t n_used, double* cdf,
                            Py_ssize_t n_topics, bitgen_t* rng) noexcept nogil:
    """One exact draw from ∝ (alpha_k + n_dk[k]) fit[k] for token i (module docstring).

    ``fit`` and ``alpha_cdf`` are the word's f_k and cumulative sums of alpha_k f_k. ``n_dk``
    excludes token i; the other tokens are ``z[0 .. n_other]`` without index i (so in the
    sequential start, where ``n_other == i``, the tokens before i). ``topics[:n_used]`` lists
    the topics with n_dk > 0; ``cdf`` is scratch of n_topics entries.
    """
    cdef Py_ssize_t trial, j, k, max_trials = 2 + (n_used >> 3)
    cdef int64_t n_top_tokens = 0, c
    cdef double top_mass = 0.0, alpha_mass = alpha_cdf[n_topics - 1], eps = word.eps
    cdef double rest_mass, total, x, f
    for j in range(word.n_top):             # the top topics' part, exactly
        c = n_dk[word.top[j]]
        n_top_tokens += c
        top_mass += <double> c * word.top_fit[j]
        cdf[j] = top_mass
    rest_mass = eps * <double> (n_other - n_top_tokens)
    total = top_mass + alpha_mass + rest_mass
    for trial in range(max_trials):
        x = rng.next_double(rng.state) * total
        if x < top_mass:                    # accepted: g(k) is the conditional there
            j = 0
            while not x < cdf[j]:
                j += 1
            return word.top[j]
        x -= top_mass
        if x < alpha_mass:
            k = _invert(alpha_cdf, n_topics, x)
            f = fit[k]
            if f > eps:                     # a top topic: its g(k) is the conditional
                return k
        elif rest_mass > 0.0:
            k = _other_token_topic(fit, eps, z, i, n_other, rng)
            f = fit[k]
        else:                               # x rounded up past the top and alpha parts
            continue
        if rng.next_double(rng.state) * (alpha[k] * f + n_dk[k] * eps) < (alpha[k] + n_dk[k]) * f:
            return k
    return _direct_draw(fit, alpha_cdf, n_dk, topics, n_used, cdf, n_topics, rng)


cdef inline void _add_token(Py_ssize_t k, int64_t* n_dk, int32_t* topics, int32_t* position,
                            Py_ssize_t* n_used) noexcept nogil:
    """n_dk[k] += 1, keeping ``topics[:n_used]`` = the topics with n_dk > 0."""
    if n_dk[k] == 0:
        position[k] = <int32_t> n_used[0]
        topics[n_used[0]] = <int32_t> k
        n_used[0] += 1
    n_dk[k] += 1


cdef inline void _remove_token(Py_ssize_t k, int64_t* n_dk, int32_t* topics, int32_t* position,
                               Py_ssize_t* n_used) noexcept nogil:
    """n_dk[k] -= 1; a topic whose count drops to 0 leaves the list, the last one takes its
    place."""
    cdef int32_t last
    n_dk[k] -= 1
    if n_dk[k] == 0:
        n_used[0] -= 1
        last = topics[n_used[0]]
        topics[position[k]] = last
        position[last] = position[k]


cdef inline Py_ssize_t _prefetch_step(Py_ssize_t n_topics) noexcept nogil:
    """Entries between the lines ``_prefetch_word`` loads: at most PREFETCH_LINES lines a row,
    at least one line (8 doubles) apart. Computed once per kernel call."""
    return max(8, (n_topics + PREFETCH_LINES - 1) // PREFETCH_LINES)


cdef inline void _prefetch_word(Py_ssize_t w, const double* fit, const double* alpha_cdf,
                                const WordTable* tables, Py_ssize_t n_topics,
                                Py_ssize_t step) noexcept nogil:
    """Start loading what the draws of word w read: its table's count of top topics and the
    lines ``step`` entries apart of its rows of f_k and of alpha cdf (all of them up to
    K = 128; beyond, the first probes of the binary search and a sample of f_k), and the
    cdf's last entry. A hint only: what is drawn does not change."""
    cdef Py_ssize_t j = 0
    SIMPLEXSG_PREFETCH(&tables[w].n_top)
    while j < n_topics:
        SIMPLEXSG_PREFETCH(fit + w * n_topics + j)
        SIMPLEXSG_PREFETCH(alpha_cdf + w * n_topics + j)
        j += step
    SIMPLEXSG_PREFETCH(alpha_cdf + w * n_topics + n_topics - 1)


cdef inline void _prefetch_start(const int32_t* words, Py_ssize_t n_tokens, const double* fit,
                                 const double* alpha_cdf, const WordTable* tables,
                                 Py_ssize_t n_topics, Py_ssize_t step) noexcept nogil:
    """``_prefetch_word`` for a document's first PREFETCH_AHEAD tokens."""
    cdef Py_ssize_t i
    for i in range(min(n_tokens, PREFETCH_AHEAD)):
        _prefetch_word(words[i], fit, alpha_cdf, tables, n_topics, step)


cdef inline void _add_expectation(Expectations* e, Py_ssize_t row, double* run_alpha,
                                  double alpha_mass, double total, const int64_t* n_dk,
                                  const int32_t* topics, Py_ssize_t n_used) noexcept nogil:
    """Counts a token's draw by its conditional ``(alpha_k + n_dk[k]) fit[k] / total``
    (``n_dk`` without the token; ``total`` the conditional's total, ``alpha_mass`` its alpha
    part): ``n_dk[k] / total`` added to ``e.acc[row + k]`` for the topics in use (``fit`` is
    applied once per run, in ``_emit_expectations``), ``alpha_mass / total`` to
    ``run_alpha[0]``."""
    cdef Py_ssize_t j, k
    cdef double* acc = e.acc + row
    total = 1.0 / total
    run_alpha[0] += alpha_mass * total
    for j in range(n_used):
        k = topics[j]
        if not e.is_touched[k]:
            e.is_touched[k] = 1
            e.touched[e.n_touched] = <int32_t> k
            e.n_touched += 1
        acc[k] += <double> n_dk[k] * total


cdef void _sample_document(const int32_t* words, Py_ssize_t n_tokens, int32_t* z,
                           const double* fit, const double* alpha_cdf, const WordTable* tables,
                           const double* alpha, Py_ssize_t n_topics,
                           bitgen_t* rng, int n_sweeps, int burn_in,
                           int64_t* n_dk, int32_t* topics, int32_t* position, double* cdf,
                           int64_t* n_dk_sum, int32_t* kept, int64_t* n_dk_last,
                           bint warm, Py_ssize_t direct_margin,
                           Py_ssize_t prefetch_step, Expectations* expect,
                           double* run_alpha) noexcept nogil:
    """All sweeps of one document. ``z`` holds the document's assignments: read as the start
    when ``warm``, else drawn by the sequential start; the final ones on return. ``n_dk``,
    ``topics``, ``position`` and ``cdf`` are scratch of length n_topics; ``n_dk_sum`` is the
    document's output row for the sum of its counts over the kept sweeps, or NULL; ``kept``
    (n_tokens x kept sweeps), or NULL, receives each token's topic after each kept sweep;
    ``n_dk_last`` the document's row for its counts after the last sweep, or NULL. A token of
    word w is drawn directly while the document uses at most ``tables[w].n_top +
    direct_margin`` topics, else by rejection. With ``expect`` (else NULL), each kept draw
    is counted by its conditional instead (``_add_expectation``), into ``expect`` and the
    document's runs' entries of ``run_alpha``."""
    cdef Py_ssize_t i, j, k, w, n_used = 0, n_kept = n_sweeps - burn_in, run
    cdef int sweep
    cdef bint counted, direct
    cdef double count_mass, alpha_mass
    for k in range(n_topics):
        n_dk[k] = 0
    if n_dk_sum != NULL:
        for k in range(n_topics):
            n_dk_sum[k] = 0
    # A visit's first touch of a word's rows misses the cache (a minibatch's rows span
    # megabytes), and one draw waits for the last: for short documents that was most of a
    # visit's fixed cost. Prefetching PREFETCH_AHEAD tokens ahead lets the misses overlap.
    # The first PREFETCH_AHEAD are prefetched by the caller, before the visit.
    for i in range(n_tokens):
        if i + PREFETCH_AHEAD < n_tokens:
            _prefetch_word(words[i + PREFETCH_AHEAD], fit, alpha_cdf, tables, n_topics,
                           prefetch_step)
        if warm:                                                # the previous visit's state
            k = z[i]
        else:                                                   # sweep 0: sequential start
            w = words[i]
            if n_used <= tables[w].n_top + direct_margin:
                k = _direct_draw(fit + w * n_topics, alpha_cdf + w * n_topics, n_dk, topics,
                                 n_used, cdf, n_topics, rng)
            else:
                k = _draw_topic(fit + w * n_topics, alpha_cdf + w * n_topics, tables + w, alpha,
                                n_dk, z, i, i, topics, n_used, cdf, n_topics, rng)
            z[i] = <int32_t> k
        _add_token(k, n_dk, topics, position, &n_used)
    for sweep in range(n_sweeps):
        run = -1
        for i in range(n_tokens):
            w = words[i]
            _remove_token(z[i], n_dk, topics, position, &n_used)
            counted = expect != NULL and sweep >= burn_in
            direct = n_used <= tables[w].n_top + direct_margin
            if counted or direct:       # one pass serves the draw and the counting
                count_mass = _count_cdf(fit + w * n_topics, n_dk, topics, n_used, cdf)
            if counted:
                if i == 0 or w != words[i - 1]:
                    run += 1
                alpha_mass = alpha_cdf[w * n_topics + n_topics - 1]
                _add_expectation(expect, run * n_topics, run_alpha + run, alpha_mass,
                                 count_mass + alpha_mass, n_dk, topics, n_used)
            if direct:
                k = _draw_from_cdf(cdf, count_mass, alpha_cdf + w * n_topics, topics, n_topics,
                                   rng)
            else:
                k = _draw_topic(fit + w * n_topics, alpha_cdf + w * n_topics, tables + w, alpha,
                                n_dk, z, i, n_tokens - 1, topics, n_used, cdf, n_topics, rng)
            z[i] = <int32_t> k
            if sweep >= burn_in and kept != NULL:
                kept[i * n_kept + sweep - burn_in] = <int32_t> k
            _add_token(k, n_dk, topics, position, &n_used)
        if sweep >= burn_in and n_dk_sum != NULL:
            for j in range(n_used):
                k = topics[j]
                n_dk_sum[k] += n_dk[k]
    if n_dk_last != NULL:
        for k in range(n_topics):
            n_dk_last[k] = n_dk[k]


cdef inline int64_t _in_units(double v) noexcept nogil:
    """v >= 0 rounded to the nearest multiple of 1 / EXPECTATION_UNIT, in those units."""
    return <int64_t> (v * EXPECTATION_UNIT + 0.5)


cdef Expectations* _new_expectations(Py_ssize_t n_topics) noexcept nogil:
    """A thread's ``Expectations``, empty; NULL when memory runs out."""
    cdef Expectations* e = <Expectations*> calloc(1, sizeof(Expectations))
    if e == NULL:
        return NULL
    e.touched = <int32_t*> malloc(n_topics * sizeof(int32_t))
    e.is_touched = <char*> calloc(n_topics, sizeof(char))
    if e.touched == NULL or e.is_touched == NULL:
        _free_expectations(e)
        return NULL
    return e


cdef void _free_expectations(Expectations* e) noexcept nogil:
    if e != NULL:
        free(e.acc)
        free(e.touched)
        free(e.is_touched)
        free(e)


cdef int _reserve_runs(Expectations* e, Py_ssize_t n_topics, Py_ssize_t n_runs) noexcept nogil:
    """Room in ``e.acc`` (zeros) for a document of ``n_runs`` runs. Returns 1 when memory
    runs out, else 0."""
    if n_topics * n_runs > e.acc_size:
        free(e.acc)
        e.acc_size = max(n_topics * n_runs, 2 * e.acc_size)
        e.acc = <double*> calloc(e.acc_size, sizeof(double))
        if e.acc == NULL:
            e.acc_size = 0
            return 1
    return 0


cdef inline void _prefetch_run(const Expectations* e, Py_ssize_t w, Py_ssize_t n_topics,
                               int64_t* sums, int64_t* alpha_sums) noexcept nogil:
    """Start loading the entries of ``sums`` and ``alpha_sums`` that a run of word w adds to."""
    cdef Py_ssize_t j
    SIMPLEXSG_PREFETCH_WRITE(alpha_sums + w)
    for j in range(e.n_touched):
        SIMPLEXSG_PREFETCH_WRITE(sums + w * n_topics + e.touched[j])


cdef void _emit_expectations(Expectations* e, const int32_t* words, Py_ssize_t n_tokens,
                             const double* fit, const double* run_alpha, Py_ssize_t n_topics,
                             int64_t* sums, int64_t* alpha_sums) noexcept nogil:
    """Adds each run's expected counts of the document just swept, ``acc`` times the word's
    f_k in units of 1 / EXPECTATION_UNIT, to its word's row of ``sums`` (minibatch words x
    K), and its alpha part ``run_alpha[run]`` in the same units to ``alpha_sums[word]``, by
    atomic adds (the arrays are shared by the threads), and clears ``acc``.

    An atomic add waits for its cache line before the next one starts, and a run's entries
    lie on as many lines as it has topics, seldom cached: the next run's lines are requested
    while this run's are added to (a hint only: what is added does not change)."""
    cdef Py_ssize_t i, j, k, w, run = -1, next_run = 0
    cdef int64_t v
    if n_tokens > 0:
        _prefetch_run(e, words[0], n_topics, sums, alpha_sums)
    for i in range(n_tokens):
        if i < next_run:
            continue
        next_run = i + 1
        while next_run < n_tokens and words[next_run] == words[i]:
            next_run += 1
        if next_run < n_tokens:
            _prefetch_run(e, words[next_run], n_topics, sums, alpha_sums)
        run += 1
        w = words[i]
        SIMPLEXSG_ATOMIC_ADD(alpha_sums + w, _in_units(run_alpha[run]))
        for j in range(e.n_touched):
            k = e.touched[j]
            v = _in_units(e.acc[run * n_topics + k] * fit[w * n_topics + k])
            e.acc[run * n_topics + k] = 0.0
            if v > 0:
                SIMPLEXSG_ATOMIC_ADD(sums + w * n_topics + k, v)
    for j in range(e.n_touched):
        e.is_touched[e.touched[j]] = 0
    e.n_touched = 0


cdef inline void _insert_top(int32_t* top, double* top_fit, Py_ssize_t n, Py_ssize_t k,
                             double f) noexcept nogil:
    """Insert topic k of f_k ``f`` into the ``n`` entries of the top list, kept by decreasing
    f_k (a tie goes after the entries already there)."""
    cdef Py_ssize_t j = n
    while j > 0 and top_fit[j - 1] < f:
        top_fit[j] = top_fit[j - 1]
        top[j] = top[j - 1]
        j -= 1
    top_fit[j] = f
    top[j] = <int32_t> k


cdef void _top_topics(const double* fit, Py_ssize_t n_topics, const int32_t* first,
                      Py_ssize_t n_first, double eps_first, WordTable* word) noexcept nogil:
    """The top topics of a word and ``eps`` from its f_k in ``fit`` (max 1): those with f_k
    above the first cut-off of TOP_CUTS that at most TOP_MAX topics pass (none when more than
    TOP_MAX pass every cut-off: the word is about as likely under many topics), by decreasing
    f_k (ties in topic order); ``eps`` is the largest f_k of the others, so every top topic
    has f_k > eps.

    The caller's pass over the row gives ``n_first``, the number of f_k above TOP_CUTS[0],
    ``first``, those topics in increasing order (the first TOP_MAX of them), and
    ``eps_first``, the largest f_k not above it: when n_first <= TOP_MAX they are the answer,
    sorted here. Otherwise one pass counts the topics past the other cut-offs and one collects
    those past the chosen one. O(n_topics) only then."""
    cdef Py_ssize_t k, j, i, n = 0
    cdef Py_ssize_t n1 = 0, n2 = 0, n3 = 0, n4 = 0, n5 = 0   # past each further cut-off
    cdef double f, cut, eps = eps_first
    cdef int32_t top[TOP_MAX]
    cdef double top_fit[TOP_MAX]
    if n_first <= TOP_MAX:
        for i in range(n_first):
            k = first[i]
            _insert_top(top, top_fit, n, k, fit[k])
            n += 1
    else:
        for k in range(n_topics):
            f = fit[k]
            n1 += f > TOP_CUTS[1]
            n2 += f > TOP_CUTS[2]
            n3 += f > TOP_CUTS[3]
            n4 += f > TOP_CUTS[4]
            n5 += f > TOP_CUTS[5]
        cut = (TOP_CUTS[1] if n1 <= TOP_MAX else TOP_CUTS[2] if n2 <= TOP_MAX
               else TOP_CUTS[3] if n3 <= TOP_MAX else TOP_CUTS[4] if n4 <= TOP_MAX
               else TOP_CUTS[5] if n5 <= TOP_MAX else INFINITY)
        eps = 0.0
        for k in range(n_topics):
            f = fit[k]
            if f > cut:
                _insert_top(top, top_fit, n, k, f)
                n += 1
            elif f > eps:
                eps = f
    for j in range(n):
        word.top[j] = top[j]
        word.top_fit[j] = top_fit[j]
    word.n_top = <int32_t> n
    word.eps = eps


cdef void _word_tables(const real* phi, Py_ssize_t n_topics, Py_ssize_t stride,
                       const int64_t* vocab, Py_ssize_t n_words, const double* alpha,
                       const unsigned char* needs_top, double* fit, double* alpha_cdf,
                       WordTable* tables, int n_threads) noexcept nogil:
    """Per word w of the minibatch: its row ``fit[w]`` of f_k (all 0 when its column has no
    positive entry: the caller refuses it), the cumulative sums ``alpha_cdf[w]`` of
    alpha_k f_k, and, where ``needs_top[w]``, its ``WordTable`` (elsewhere n_top = 0: the
    word's documents are too short ever to draw it by rejection). A thread takes WORD_BLOCK
    words at a time and gathers their columns row by row of phi (the words are sorted, so a
    row's entries for them share cache lines and come in order), then makes each word's row
    in two passes over its K entries."""
    cdef Py_ssize_t b, w, k, n_past, first, end
    cdef Py_ssize_t n_blocks = (n_words + WORD_BLOCK - 1) // WORD_BLOCK
    cdef double top, scale, cum, eps_past, f
    cdef double* row
    for b in prange(n_blocks, nogil=True, num_threads=n_threads, schedule="dynamic"):
        first = b * WORD_BLOCK
        end = min(first + WORD_BLOCK, n_words)
        for k in range(n_topics):           # the block's columns
            for w in range(first, end):
                fit[w * n_topics + k] = phi[k * stride + vocab[w]]
        for w in range(first, end):
            row = fit + w * n_topics
            top = 0.0
            for k in range(n_topics):       # the column's largest entry
                if row[k] > top:
                    top = row[k]
            scale = 1.0 / top if top > 0.0 else 0.0
            cum = 0.0
            n_past = 0
            eps_past = 0.0
            for k in range(n_topics):       # f_k, the alpha sums, the topics past TOP_CUTS[0]
                f = row[k] * scale if scale < INFINITY else row[k] / top   # a subnormal column
                row[k] = f
                cum = cum + alpha[k] * f
                alpha_cdf[w * n_topics + k] = cum
                if not needs_top[w]:
                    continue
                if f > TOP_CUTS[0]:
                    if n_past < TOP_MAX:
                        tables[w].top[n_past] = <int32_t> k
                    n_past = n_past + 1
                elif f > eps_past:
                    eps_past = f
            if needs_top[w]:
                _top_topics(row, n_topics, tables[w].top, n_past, eps_past, &tables[w])
            else:
                tables[w].n_top = 0
                tables[w].eps = 0.0


cdef int _compare_int32(const void* a, const void* b) noexcept nogil:
    cdef int32_t x = (<const int32_t*> a)[0], y = (<const int32_t*> b)[0]
    return (x > y) - (x < y)


cdef Py_ssize_t _flush_word(int64_t* sums, int32_t* touched, Py_ssize_t m, Py_ssize_t n_topics,
                            int32_t* out_topic, int64_t* out_value) noexcept nogil:
    """Writes one word's sums, ``sums[touched[:m]]`` (the topics with a positive sum, in any
    order), as increasing topics and their sums to ``out_topic`` / ``out_value``, clears
    them and returns m."""
    cdef Py_ssize_t j, k
    if m * 16 < n_topics:                   # few topics: sort them; else scan all in order
        qsort(touched, m, sizeof(int32_t), &_compare_int32)
    else:
        m = 0
        for k in range(n_topics):
            if sums[k] > 0:
                touched[m] = <int32_t> k
                m = m + 1
    for j in range(m):
        k = touched[j]
        out_topic[j] = <int32_t> k
        out_value[j] = sums[k]
        sums[k] = 0
    return m


def _compact_rows(int64_t[::1] indptr, const int64_t[::1] slot_ptr,
                  const int32_t[::1] slot_topic, const int64_t[::1] slot_value, int n_threads):
    """(indptr, topics, values) of rows written at ``slot_ptr[w]``, ``indptr[w + 1]`` entries
    each (turned into offsets in place), copied next to each other."""
    cdef Py_ssize_t n_words = indptr.shape[0] - 1, w, j
    for w in range(n_words):
        indptr[w + 1] += indptr[w]
    cdef int32_t[::1] topics = np.empty(indptr[n_words], dtype=np.int32)
    cdef int64_t[::1] values = np.empty(indptr[n_words], dtype=np.int64)
    for w in prange(n_words, nogil=True, num_threads=n_threads, schedule="static"):
        for j in range(indptr[w + 1] - indptr[w]):
            topics[indptr[w] + j] = slot_topic[slot_ptr[w] + j]
            values[indptr[w] + j] = slot_value[slot_ptr[w] + j]
    return np.asarray(indptr), np.asarray(topics), np.asarray(values)


cdef int _count_by_word(const int64_t* word_start, const int64_t* order, Py_ssize_t n_words,
                        const int32_t* kept, Py_ssize_t n_kept, Py_ssize_t n_topics,
                        const int64_t* slot_ptr, int32_t* out_topic, int64_t* out_count,
                        int64_t* nnz, int n_threads) noexcept nogil:
    """Word-topic counts of the kept assignments, one word at a time, in parallel over the
    words: word w's distinct topics (increasing) and counts go to ``out_topic/out_count[
    slot_ptr[w]:]``, their number to ``nnz[w]``. Returns 1 when scratch space cannot be
    allocated, else 0."""
    cdef Py_ssize_t w, s, j, m, k
    cdef int64_t* counts = NULL
    cdef int32_t* touched = NULL
    cdef int failed = 0
    cdef int* failed_ptr = &failed      # shared: a plain int assigned in the block is private
    with parallel(num_threads=n_threads):
        counts = <int64_t*> calloc(n_topics, sizeof(int64_t))
        touched = <int32_t*> malloc(n_topics * sizeof(int32_t))
        if counts == NULL or touched == NULL:
            failed_ptr[0] = 1
        for w in prange(n_words, schedule="dynamic"):
            if counts == NULL or touched == NULL:
                continue
            m = 0
            for j in range(word_start[w], word_start[w + 1]):
                for s in range(n_kept):
                    k = kept[order[j] * n_kept + s]
                    if counts[k] == 0:
                        touched[m] = <int32_t> k
                        m = m + 1
                    counts[k] += 1
            nnz[w] = _flush_word(counts, touched, m, n_topics, out_topic + slot_ptr[w],
                                 out_count + slot_ptr[w])
        free(counts)
        free(touched)
    return failed


def gibbs_sweeps(const int64_t[::1] doc_ptr, const int32_t[::1] word_ids,
                 const int64_t[::1] vocab, const real[:, ::1] phi, const double[::1] alpha,
                 const uintptr_t[::1] bitgens, int n_sweeps, int burn_in,
                 int64_t[:, ::1] n_dk_sum=None, bint word_topic=False, int n_jobs=1,
                 int64_t[:, ::1] n_dk_last=None, int32_t[::1] assignments=None,
                 Py_ssize_t direct_margin=DIRECT_MARGIN, bint rao_blackwell=False):
    """Gibbs sweeps over the topic assignments of every document of a minibatch.

    Parameters
    ----------
    doc_ptr : int64 (n_docs + 1,)
        Document d's tokens are ``word_ids[doc_ptr[d]:doc_ptr[d + 1]]``; ``doc_ptr[0] == 0``,
        non-decreasing (empty documents allowed), ``doc_ptr[n_docs] == n_tokens``.
    word_ids : int32 (n_tokens,)
        Local word id of each token, in ``0 .. W_b - 1``.
    vocab : int64 (W_b,)
        Column of ``phi`` of each local word (its id in the full vocabulary).
    phi : float32 or float64 C-contiguous (K, W)
        ``phi[k, vocab[w]]`` ∝ topic k's probability of word w, finite and >= 0, positive for
        some k; any positive factor per word (column) is allowed, since it cancels in the
        conditional. Read in place: only the minibatch's columns are touched.
    alpha : float64 (K,)
        Dirichlet prior of the document-topic proportions, > 0.
    bitgens : uintp (n_docs,)
        ``bitgen_t*`` of each document's numpy BitGenerator (see ``bitgen_addresses``); the
        caller keeps those objects alive and unused by others during the call.
    n_sweeps, burn_in : int
        Full sweeps after the sequential start, and how many of them are discarded
        (``n_sweeps > burn_in >= 0``).
    n_dk_sum : int64 (n_docs, K), output, or None
        Overwritten with the sum over the kept sweeps of each document's topic counts. None
        skips them (a training step needs only the word-topic counts); the other outputs are
        the same with or without it.
    word_topic : bool
        Also count the minibatch's word-topic assignments over the kept sweeps (fold-in /
        transform needs only n_dk).
    n_jobs : int
        OpenMP threads over documents (dynamic schedule) and over the words' tables; no
        effect on the result.
    n_dk_last : int64 (n_docs, K), output, or None
        Overwritten with each document's topic counts after its last sweep (one sample, not an
        average; rows sum to the documents' lengths). None skips them. The other outputs are
        the same with or without it.
    assignments : int32 (n_tokens,), input and output, or None
        Each token's topic. On entry, a document whose first token holds -1 is started cold
        (sequential start); a document whose tokens all hold topics in ``0 .. K - 1`` is
        started from them (warm start, e.g. the assignments of its last visit). On return,
        every token's topic after the last sweep. None: every document starts cold.
    direct_margin : int
        A token of word w is drawn directly (the SparseLDA draw, O(topics in use)) while its
        document uses at most ``direct_margin`` topics more than w has top topics, by
        rejection from the envelope (O(top topics) and the proposals) otherwise; both are
        exact, so this changes the speed, not the law. ``REJECTION_ALWAYS`` (below -TOP_MAX):
        rejection always (for tests).
    rao_blackwell : bool
        Count each kept draw by its conditional's expectation, not by its topic (module
        docstring); needs ``word_topic``. The draws of the chain are the same either way.

    Returns
    -------
    None, or with ``word_topic`` the sum over the kept sweeps of the word-topic counts as
    sparse rows ``(indptr int64 (W_b + 1,), topics int32 (nnz,), counts, alpha_counts)``: word
    w's topics with a positive count, increasing, are ``topics[indptr[w]:indptr[w + 1]]``.
    Plain counts: ``counts`` int64 (nnz,), ``alpha_counts`` None. With ``rao_blackwell``:
    ``counts`` float64 (nnz,), the count part's expectations, and ``alpha_counts`` float64
    (W_b,), word w's expected count of the alpha part, to be spread over the topics by
    ``alpha_k phi[k, w]``.
    """
    cdef Py_ssize_t n_docs = doc_ptr.shape[0] - 1
    cdef Py_ssize_t n_tokens = word_ids.shape[0]
    cdef Py_ssize_t n_words = vocab.shape[0], n_topics = phi.shape[0], stride = phi.shape[1]
    cdef Py_ssize_t n_kept = n_sweeps - burn_in
    cdef Py_ssize_t d, i, bad = -1
    cdef bint last_counts = n_dk_last is not None, sum_counts = n_dk_sum is not None

    if n_docs < 0:
        raise ValueError("doc_ptr must have n_docs + 1 >= 1 entries")
    if n_topics < 1 or alpha.shape[0] != n_topics:
        raise ValueError(f"alpha has {alpha.shape[0]} entries but phi has {n_topics} topics")
    if bitgens.shape[0] != n_docs:
        raise ValueError(f"bitgens has {bitgens.shape[0]} entries for {n_docs} documents")
    if sum_counts and (n_dk_sum.shape[0] != n_docs or n_dk_sum.shape[1] != n_topics):
        raise ValueError(f"n_dk_sum must have shape ({n_docs}, {n_topics})")
    if last_counts and (n_dk_last.shape[0] != n_docs or n_dk_last.shape[1] != n_topics):
        raise ValueError(f"n_dk_last must have shape ({n_docs}, {n_topics})")
    if not 0 <= burn_in < n_sweeps:
        raise ValueError(f"need n_sweeps > burn_in >= 0, got n_sweeps={n_sweeps}, "
                         f"burn_in={burn_in}")
    if n_jobs < 1:
        raise ValueError(f"n_jobs must be >= 1, got {n_jobs}")
    if rao_blackwell and not word_topic:
        raise ValueError("rao_blackwell needs word_topic=True")
    if doc_ptr[0] != 0 or doc_ptr[n_docs] != n_tokens:
        raise ValueError(f"doc_ptr must start at 0 and end at n_tokens={n_tokens}")
    with nogil:
        for d in range(n_docs):
            if doc_ptr[d + 1] < doc_ptr[d] or (bitgens[d] == 0 and doc_ptr[d + 1] > doc_ptr[d]):
                bad = d
                break
    if bad >= 0:
        raise ValueError(f"doc_ptr decreases or bitgens is NULL at document {bad}")
    bad = _first_outside(word_ids, n_words)
    if bad >= 0:
        raise ValueError(f"word_ids[{bad}] = {word_ids[bad]} is outside 0..{n_words - 1}")
    bad = _first_outside(vocab, stride)
    if bad >= 0:
        raise ValueError(f"vocab[{bad}] = {vocab[bad]} is outside 0..{stride - 1}")
    if assignments is not None:
        if assignments.shape[0] != n_tokens:
            raise ValueError(f"assignments has {assignments.shape[0]} entries for {n_tokens} "
                             "tokens")
        with nogil:
            for d in range(n_docs):
                if doc_ptr[d + 1] > doc_ptr[d] and assignments[doc_ptr[d]] != -1:
                    for i in range(doc_ptr[d], doc_ptr[d + 1]):
                        if not 0 <= assignments[i] < n_topics:
                            bad = d
                            break
                if bad >= 0:
                    break
        if bad >= 0:
            raise ValueError(f"assignments of document {bad} must all lie in 0..{n_topics - 1}, "
                             "or start with -1 (cold start)")

    cdef int n_threads = <int> min(n_jobs, max(n_docs, 1))
    cdef Py_ssize_t prefetch_step = _prefetch_step(n_topics)
    cdef Py_ssize_t row = (n_topics + 15) // 16 * 16      # entries: 64-byte multiples
    cdef char* scratch = NULL
    cdef int64_t* n_dk_scratch = NULL
    cdef int32_t* used_scratch = NULL
    cdef int32_t* position_scratch = NULL
    cdef double* cdf_scratch = NULL
    cdef int out_of_memory = 0
    cdef int* failed = &out_of_memory
    cdef int32_t[::1] z = np.empty(n_tokens, dtype=np.int32) if assignments is None else assignments
    cdef bint warm, have_assignments = assignments is not None
    cdef double[:, ::1] fit = np.empty((n_words, n_topics), dtype=np.float64)
    cdef double[:, ::1] alpha_cdf = np.empty((n_words, n_topics), dtype=np.float64)
    cdef bint record_kept = word_topic and not rao_blackwell      # plain counts: the topics
    cdef int32_t[::1] kept = np.empty(n_tokens * n_kept if record_kept else 0, dtype=np.int32)
    cdef int32_t* kept_ptr = NULL
    cdef int64_t* n_last_ptr = NULL
    cdef int64_t* n_sum_ptr = NULL
    # runs: a document's consecutive tokens of one word; run_ptr[d] is document d's first
    cdef Py_ssize_t n_runs = 0
    cdef int64_t[::1] run_ptr = np.zeros(n_docs + 1 if rao_blackwell else 1, dtype=np.int64)
    if rao_blackwell:
        with nogil:
            for d in range(n_docs):
                for i in range(doc_ptr[d], doc_ptr[d + 1]):
                    if i == doc_ptr[d] or word_ids[i] != word_ids[i - 1]:
                        n_runs += 1
                run_ptr[d + 1] = n_runs
    cdef double[::1] run_alpha = np.zeros(n_runs, dtype=np.float64)
    # the expected counts, in units of 1 / EXPECTATION_UNIT, summed by all threads
    cdef int64_t[:, ::1] expected = np.zeros((n_words if rao_blackwell else 0, n_topics),
                                             dtype=np.int64)
    cdef int64_t[::1] expected_alpha = np.zeros(n_words if rao_blackwell else 0, dtype=np.int64)
    cdef uintptr_t[::1] thread_state = np.zeros(n_threads, dtype=np.uintp)
    cdef Expectations* expect = NULL
    cdef double* run_alpha_base = &run_alpha[0] if n_runs else NULL
    cdef unsigned char[::1] needs_top = np.zeros(max(n_words, 1), dtype=np.uint8)
    cdef WordTable* tables = <WordTable*> malloc(max(n_words, 1) * sizeof(WordTable))
    if tables == NULL:
        raise MemoryError(f"tables of {n_words} words")
    try:
        # a word needs its top topics only if one of its documents can draw by rejection:
        # a draw's document uses at most its other tokens' topics, so one of more than
        # direct_margin + 1 tokens
        with nogil:
            for d in range(n_docs):
                if doc_ptr[d + 1] - doc_ptr[d] - 1 > direct_margin:
                    for i in range(doc_ptr[d], doc_ptr[d + 1]):
                        needs_top[word_ids[i]] = 1
        if n_words:
            _word_tables(&phi[0, 0], n_topics, stride, &vocab[0], n_words, &alpha[0],
                         &needs_top[0], &fit[0, 0], &alpha_cdf[0, 0], tables,
                         <int> min(n_jobs, n_words))
        with nogil:
            for i in range(n_words):
                if not alpha_cdf[i, n_topics - 1] > 0.0:
                    bad = i
                    break
        if bad >= 0:
            raise ValueError(f"the topics give word {vocab[bad]} probability 0 under every topic")
        with nogil, parallel(num_threads=n_threads):
            # Each thread's scratch (n_dk, the topics in use, their positions, cumulative
            # sums) comes from its own allocation, 64-byte aligned: as rows of shared arrays
            # (padded to 64 bytes) the kernel ran 1.3x, not 2x, faster on 2 threads.
            if posix_memalign(<void**> &scratch, 64, row * (sizeof(int64_t) + 2 * sizeof(int32_t)
                                                      + sizeof(double))) == 0:
                n_dk_scratch = <int64_t*> scratch
                used_scratch = <int32_t*> (scratch + row * sizeof(int64_t))
                position_scratch = used_scratch + row
                cdf_scratch = <double*> (position_scratch + row)
            else:
                scratch = NULL
                failed[0] = 1
            expect = NULL
            if rao_blackwell:
                expect = _new_expectations(n_topics)
                if expect == NULL:
                    failed[0] = 1
                thread_state[threadid()] = <uintptr_t> expect
            for d in prange(n_docs, schedule="dynamic"):
                if scratch == NULL or (rao_blackwell and expect == NULL):
                    continue
                if rao_blackwell and _reserve_runs(expect, n_topics, run_ptr[d + 1] - run_ptr[d]):
                    failed[0] = 1
                    continue
                if sum_counts:
                    n_sum_ptr = &n_dk_sum[d, 0]
                else:
                    n_sum_ptr = NULL
                if record_kept:
                    kept_ptr = &kept[0] + doc_ptr[d] * n_kept
                else:
                    kept_ptr = NULL
                if last_counts:
                    n_last_ptr = &n_dk_last[d, 0]
                else:
                    n_last_ptr = NULL
                warm = have_assignments and doc_ptr[d + 1] > doc_ptr[d] and z[doc_ptr[d]] >= 0
                # the first words of the next document too (most often this thread's next),
                # so that its first draws find their rows loaded
                _prefetch_start(&word_ids[0] + doc_ptr[d], doc_ptr[d + 1] - doc_ptr[d],
                                &fit[0, 0], &alpha_cdf[0, 0], tables, n_topics, prefetch_step)
                if d + 1 < n_docs:
                    _prefetch_start(&word_ids[0] + doc_ptr[d + 1], doc_ptr[d + 2] - doc_ptr[d + 1],
                                    &fit[0, 0], &alpha_cdf[0, 0], tables, n_topics, prefetch_step)
                _sample_document(&word_ids[0] + doc_ptr[d], doc_ptr[d + 1] - doc_ptr[d],
                                 &z[0] + doc_ptr[d], &fit[0, 0], &alpha_cdf[0, 0], tables,
                                 &alpha[0], n_topics, <bitgen_t*> bitgens[d], n_sweeps,
                                 burn_in, n_dk_scratch, used_scratch, position_scratch,
                                 cdf_scratch, n_sum_ptr, kept_ptr, n_last_ptr, warm,
                                 direct_margin, prefetch_step, expect,
                                 run_alpha_base + run_ptr[d] if rao_blackwell else NULL)
                if rao_blackwell and run_ptr[d + 1] > run_ptr[d]:
                    _emit_expectations(expect, &word_ids[0] + doc_ptr[d],
                                       doc_ptr[d + 1] - doc_ptr[d], &fit[0, 0],
                                       run_alpha_base + run_ptr[d], n_topics,
                                       &expected[0, 0], &expected_alpha[0])
            free(scratch)
        if rao_blackwell and not out_of_memory:
            return _expected_word_topic(expected, expected_alpha, n_jobs)
    finally:
        free(tables)
        for i in range(thread_state.shape[0]):
            _free_expectations(<Expectations*> thread_state[i])
    if out_of_memory:
        raise MemoryError(f"scratch of {n_topics} topics per thread")
    if not word_topic:
        return None
    return _sparse_word_topic(word_ids, n_words, kept, n_kept, n_topics, n_jobs)


def _sparse_word_topic(const int32_t[::1] word_ids, Py_ssize_t n_words,
                       const int32_t[::1] kept, Py_ssize_t n_kept, Py_ssize_t n_topics,
                       int n_jobs):
    """(indptr, topics, counts, None) of the word-topic counts of the kept assignments (the
    return value of ``gibbs_sweeps``); every stage runs on ``n_jobs`` threads, with a result
    that does not depend on them."""
    cdef Py_ssize_t n_tokens = word_ids.shape[0], w, j
    cdef int n_threads = <int> max(1, min(n_jobs, n_words))
    cdef int64_t[::1] word_start = np.zeros(n_words + 1, dtype=np.int64)
    cdef int64_t[::1] order = np.empty(n_tokens, dtype=np.int64)
    cdef int64_t[::1] slot_ptr = np.zeros(n_words + 1, dtype=np.int64)
    cdef int64_t[::1] indptr = np.zeros(n_words + 1, dtype=np.int64)
    cdef int failed = 0
    if n_tokens == 0 or n_words == 0:
        return np.asarray(indptr), np.empty(0, dtype=np.int32), np.empty(0, dtype=np.int64), None
    with nogil:
        failed = _group_by_key(&word_ids[0], n_tokens, n_words, &word_start[0], &order[0],
                               n_threads)
        for w in range(n_words):            # room for each word's distinct topics
            slot_ptr[w + 1] = slot_ptr[w] + min((word_start[w + 1] - word_start[w]) * n_kept,
                                                n_topics)
    if failed:
        raise MemoryError("scratch space of the word-topic counts")
    cdef int32_t[::1] slot_topic = np.empty(slot_ptr[n_words], dtype=np.int32)
    cdef int64_t[::1] slot_count = np.empty(slot_ptr[n_words], dtype=np.int64)
    with nogil:
        failed = _count_by_word(&word_start[0], &order[0], n_words, &kept[0], n_kept, n_topics,
                                &slot_ptr[0], &slot_topic[0], &slot_count[0], &indptr[1],
                                n_threads)
    if failed:
        raise MemoryError("scratch space of the word-topic counts")
    return *_compact_rows(indptr, slot_ptr, slot_topic, slot_count, n_threads), None


def _expected_word_topic(const int64_t[:, ::1] expected, const int64_t[::1] expected_alpha,
                         int n_jobs):
    """(indptr, topics, values, alpha_values) of ``gibbs_sweeps(rao_blackwell=True)``: the
    rows of ``expected`` (minibatch words x K, in units of 1 / EXPECTATION_UNIT) as sparse
    rows of their positive entries, topics increasing, and ``expected_alpha`` (words,), as
    float64 counts; on ``n_jobs`` threads."""
    cdef Py_ssize_t n_words = expected.shape[0], n_topics = expected.shape[1], w, k, j
    cdef int n_threads = <int> max(1, min(n_jobs, n_words))
    cdef int64_t[::1] indptr = np.zeros(n_words + 1, dtype=np.int64)
    for w in prange(n_words, nogil=True, num_threads=n_threads, schedule="static"):
        for k in range(n_topics):
            if expected[w, k] > 0:
                indptr[w + 1] += 1
    for w in range(n_words):
        indptr[w + 1] += indptr[w]
    cdef int32_t[::1] topics = np.empty(indptr[n_words], dtype=np.int32)
    cdef double[::1] values = np.empty(indptr[n_words], dtype=np.float64)
    for w in prange(n_words, nogil=True, num_threads=n_threads, schedule="static"):
        j = indptr[w]
        for k in range(n_topics):
            if expected[w, k] > 0:
                topics[j] = <int32_t> k
                values[j] = expected[w, k] / EXPECTATION_UNIT
                j = j + 1
    return (np.asarray(indptr), np.asarray(topics), np.asarray(values),
            np.asarray(expected_alpha) / EXPECTATION_UNIT)
