"""The global step of stochastic-gradient LDA, fused: one pass over each topic row moves the
gamma variables theta (SCIR or SGRLD), computes the topics the next local step uses, and adds
them to the running average, with no (topics x words) temporary.

Row k of ``theta`` (K, W) targets ``Dirichlet(beta + est_k)``, where ``est_k`` are the estimated
full-data counts of topic k: given sparse, since a minibatch touches few words, plus, when the
local step counted in expectation (``simplexsg._ext._lda_gibbs``), ``alpha_k (topics[k, w]
column_scale[w]) spread[w]`` (``spread[w]`` is zero for the words that have none;
``column_scale[w]``, one over the word's largest topic value, keeps the product at most 1
however small the column). Per row:

* SCIR (Baker et al. 2018): every coordinate takes the exact CIR transition of time h with
  shape ``a = beta + est`` (``_simplex._scir_row``: log-space draws and floors included);
  its conditional mean is ``theta e^-h + a (1 - e^-h)``. ``scir_shape_step`` takes the same
  transition with theta integrated out (below).

* SGRLD, expanded mean (Patterson & Teh 2013): ``theta' = |theta + h drift + sqrt(2 h theta)
  xi|`` with ``drift = beta - theta + est - n_k theta / sum(theta)``, ``n_k = sum(est_k)``,
  floored at the smallest normal double; its "mean" here is that of the step before the
  mirror, ``max(theta + h drift, FLOOR)`` (``_simplex._sgrld_row``).

The local topics are the row of the new sample, or of its mean, normalised
("sample" / "mean", ``simplexsg.lda``'s ``local_topics``). Row k draws only from its own bit
generator ``bitgens[k]``, so the result does not depend on the threads.

SCIR with theta integrated out (``scir_shape_step``). The CIR transition draws N ~
Poisson(theta e^-h / c), then ``theta' ~ Gamma(a + N, c)`` with ``c = 1 - e^-h``. So after a step
the coordinates are independent gammas of shapes ``a + N`` and one scale c, and the step's
law needs only those shapes: the next N of a coordinate of shape ``s_j`` and scale ``c0`` is
``Poisson(Gamma(s_j) c0 e^-h / c)``, a negative binomial. The state is the shapes and the
scale; no theta is ever drawn. A coordinate whose expected N, ``s_j c0 e^-h / c``, is at
least ``light_rate`` draws its gamma and Poisson; the others ("light": most words of a topic,
those with no recent counts) draw theirs together: the sum of independent Poisson-gammas of
one scale is the Poisson-gamma of the summed shape, and given that total the N split as a
Dirichlet-multinomial of weights ``s_j`` (a Polya urn: ball i lands on a word drawn in
proportion to the weights with probability ``S / (S + i)``, else on the word of an earlier
ball drawn uniformly). That draws about ``light_rate`` balls a light word at most, and the
law is the same for every ``light_rate`` (tested). The local topics are the normalised
``E[theta | shapes] e^-h + a c`` (the mean of the step given the state), so the local step
sees the gamma variables' means, not one draw of them.

Storage: ``theta`` and the outputs are float64 or float32 (the same type); the arithmetic is
float64. A float32 output is floored at FLT_MIN (about 1.2e-38), the smallest normal float:
a coordinate below it is stored as FLT_MIN, which changes no simplex value by more than
W * FLT_MIN / row sum and the next transition's law with probability below about
FLT_MIN * e^-h / (1 - e^-h) per coordinate; float32 keeps about 7 significant digits.
"""
from cython.parallel cimport parallel, prange
from libc.float cimport FLT_MIN
from libc.math cimport exp, expm1, isfinite
from libc.stdint cimport int64_t, uintptr_t
from libc.stdlib cimport free, malloc, realloc
from numpy.random cimport bitgen_t
from numpy.random.c_distributions cimport (
    random_poisson,
    random_standard_gamma,
    random_standard_uniform,
)

from ._simplex cimport _draws_poisson, _scir_row, _sgrld_row

import numpy as np

#: SCIR draws a Poisson of rate theta e^-h / (1 - e^-h); numpy's sampler needs it far below ~9e18.
cdef double MAX_POISSON_RATE = 1e17

#: ``scir_shape_step``: coordinates whose expected Poisson count is below this draw in the
#: light group. Any value gives the same law; this one balances a grouped coordinate's cost
#: (a pass, plus this many balls at most) against an individual gamma and Poisson.
LIGHT_RATE = 0.5

ctypedef fused real:
    float
    double


cdef inline real _store(double v, real* dummy) noexcept nogil:
    """v as the storage type, floored at that type's smallest normal value."""
    if real is float:
        return <float> (v if v > FLT_MIN else FLT_MIN)
    else:
        return v


def column_sums(const real[:, ::1] topics, const Py_ssize_t[::1] words,
                const double[::1] alpha, int n_jobs=1):
    """Per word w of ``words`` (in ``0 .. W - 1``): ``max_k topics[k, w]`` and ``sum_k alpha[k]
    topics[k, w]``, float64 (n,) each (the alpha part's spread, ``simplexsg.lda.global_step``).
    Threads take blocks of words, each summed over the rows in order: the same result for any
    ``n_jobs``."""
    cdef Py_ssize_t K = topics.shape[0], n = words.shape[0], block, e, k, end
    if alpha.shape[0] != K:
        raise ValueError(f"alpha has {alpha.shape[0]} entries for {K} topics")
    top = np.zeros(n)
    mass = np.zeros(n)
    cdef double[::1] top_v = top, mass_v = mass
    cdef double a, v
    with nogil:
        for e in range(n):
            if not 0 <= words[e] < topics.shape[1]:
                with gil:
                    raise ValueError(f"words[{e}] = {words[e]} is out of range")
    with nogil, parallel(num_threads=max(1, n_jobs)):
        for block in prange((n + BLOCK - 1) // BLOCK, schedule="static"):
            end = min((block + 1) * BLOCK, n)
            for k in range(K):
                a = alpha[k]
                for e in range(block * BLOCK, end):
                    v = topics[k, words[e]]
                    if v > top_v[e]:
                        top_v[e] = v
                    mass_v[e] = mass_v[e] + a * v
    return top, mass


def _check_step(Py_ssize_t K, Py_ssize_t W, double beta, const int64_t[::1] est_ptr,
                const int64_t[::1] est_word, const double[::1] est_value, double h,
                const uintptr_t[::1] bitgens, outputs, average_in, average_out, spread,
                column_scale, alpha, topics):
    """Check a step's arguments (see ``global_step``); the alpha part's words (intp), or None
    without one."""
    if est_ptr.shape[0] != K + 1 or est_ptr[0] != 0 or est_ptr[K] != est_word.shape[0] \
            or est_value.shape[0] != est_word.shape[0]:
        raise ValueError(f"est_ptr must have {K + 1} entries from 0 to {est_word.shape[0]}, and "
                         "est_word and est_value as many entries")
    if bitgens.shape[0] != K:
        raise ValueError(f"bitgens has {bitgens.shape[0]} entries for {K} topics")
    if any(out.shape[0] != K or out.shape[1] != W for out in outputs):
        raise ValueError(f"outputs must have shape ({K}, {W})")
    if average_out is not None and (average_out.shape[0] != K or average_out.shape[1] != W or (
            average_in is not None and (average_in.shape[0] != K or average_in.shape[1] != W))):
        raise ValueError(f"averages must have shape ({K}, {W})")
    if not (h > 0 and beta > 0):
        raise ValueError(f"need h > 0 and beta > 0, got h={h}, beta={beta}")
    spreading = spread is not None
    if not (spreading == (column_scale is not None) == (alpha is not None)
            == (topics is not None)):
        raise ValueError("spread, column_scale, alpha and topics go together")
    if spreading and (spread.shape[0] != W or column_scale.shape[0] != W or alpha.shape[0] != K
                      or topics.shape[0] != K or topics.shape[1] != W):
        raise ValueError(f"spread and column_scale must have {W} entries, alpha {K}, topics shape "
                         f"({K}, {W})")
    cdef Py_ssize_t e, bad = -1
    with nogil:
        for e in range(est_word.shape[0]):
            if not (0 <= est_word[e] < W and est_value[e] >= 0):
                bad = e
                break
    if bad >= 0:
        raise ValueError(f"est_word/est_value entry {bad} is out of range")
    if not spreading:
        return None
    return np.flatnonzero(spread).astype(np.intp, copy=False)   # a minibatch has few words


#: ``column_sums``: words a thread takes at a time (each row's entries for them read in turn).
cdef enum:
    BLOCK = 256


cdef struct Balls:
    Py_ssize_t* word        # each ball's word (the light group's Polya urn)
    Py_ssize_t capacity


cdef double _row_shape(Py_ssize_t k, Py_ssize_t W, double beta, const int64_t[::1] est_ptr,
                       const int64_t[::1] est_word, const double[::1] est_value,
                       Py_ssize_t n_spread, const Py_ssize_t[::1] spread_words,
                       const double[::1] spread,
                       const double[::1] column_scale, const double[::1] alpha,
                       const real[:, ::1] topics, double* shape) noexcept nogil:
    """Row k's shapes ``beta + est`` into ``shape`` (W,); returns the row's total count.
    ``n_spread``: the alpha part's words (0: none, and its arrays may be None)."""
    cdef Py_ssize_t j, e
    cdef double est_total = 0.0, v
    for j in range(W):
        shape[j] = beta
    for e in range(n_spread):                   # the alpha part, at the words that have one
        j = spread_words[e]
        v = alpha[k] * (topics[k, j] * column_scale[j]) * spread[j]
        shape[j] = shape[j] + v
        est_total = est_total + v
    for e in range(est_ptr[k], est_ptr[k + 1]):
        shape[est_word[e]] = shape[est_word[e]] + est_value[e]
        est_total = est_total + est_value[e]
    return est_total


cdef void _store_row(Py_ssize_t k, Py_ssize_t W, const double* state, const double* added,
                     const double* local, double total, real[:, ::1] state_out,
                     real[:, ::1] local_out, const real[:, ::1] average_in,
                     real[:, ::1] average_out, bint averaging, bint accumulate) noexcept nogil:
    """Row k of the outputs: the new state (``state``, plus ``added`` unless it is NULL), the
    local topics normalised by ``total``, their sum over the row (< 0: summed here, in word
    order), and, when ``averaging``, the average (``average_in`` + local topics when
    ``accumulate``, else the local topics)."""
    cdef Py_ssize_t j
    cdef real* dummy = NULL
    if total < 0:
        total = 0.0
        for j in range(W):
            total = total + local[j]
    for j in range(W):
        state_out[k, j] = _store(state[j] if added == NULL else state[j] + added[j], dummy)
        local_out[k, j] = _store(local[j] / total, dummy)
        if averaging:
            if accumulate:
                average_out[k, j] = average_in[k, j] + local_out[k, j]
            else:
                average_out[k, j] = local_out[k, j]


def global_step(const real[:, ::1] theta, double beta, const int64_t[::1] est_ptr,
                const int64_t[::1] est_word, const double[::1] est_value, double h,
                bint sgrld, bint local_mean, const uintptr_t[::1] bitgens,
                real[:, ::1] theta_out, real[:, ::1] local_out,
                const real[:, ::1] average_in=None, real[:, ::1] average_out=None,
                int n_jobs=1, const double[::1] spread=None, const double[::1] column_scale=None,
                const double[::1] alpha=None, const real[:, ::1] topics=None):
    """One global step of every topic row.

    Parameters
    ----------
    theta : float64 or float32 C-contiguous (K, W)
        The gamma variables (> 0).
    beta : float
        The topics' Dirichlet prior, > 0.
    est_ptr, est_word, est_value : int64 (K + 1,), int64 (nnz,), float64 (nnz,)
        The estimated counts, sparse by topic: row k's are ``est_value[est_ptr[k]:est_ptr[k +
        1]]`` at the words ``est_word[...]`` (distinct within a row, in ``0 .. W - 1``, >= 0).
    h : float
        Diffusion time of the step (> 0).
    sgrld : bool
        SGRLD (expanded mean) instead of SCIR.
    local_mean : bool
        The local topics are the normalised means (see above), not the normalised samples.
    bitgens : uintp (K,)
        ``bitgen_t*`` of each row's generator (kept alive and unused by others by the caller).
    theta_out, local_out : (K, W), outputs, same type as theta
        The new theta and the local topics (rows sum to 1). May not alias theta.
    average_in, average_out : (K, W) or None
        ``average_out = average_in + local_out`` (``average_in`` None: ``= local_out``), or no
        average when ``average_out`` is None. ``average_out`` may alias ``average_in``.
    n_jobs : int
        OpenMP threads over the rows; no effect on the result.
    spread, column_scale, alpha, topics : float64 (W,) >= 0, (W,) > 0, (K,) > 0, (K, W) >= 0
        The alpha part's counts, or all None: ``est[k, w] += alpha[k] * (topics[k, w] *
        column_scale[w]) * spread[w]``, finite when ``topics[:, w] * column_scale[w] <= 1``.

    Raises ValueError, and writes nothing meaningful, when a SCIR step's Poisson rate
    ``theta e^-h / (1 - e^-h)`` would exceed 1e17 (an absurdly small h) at a coordinate whose
    shape is below 1/2 (the others draw no Poisson).
    """
    cdef Py_ssize_t K = theta.shape[0], W = theta.shape[1], k, j
    cdef const Py_ssize_t[::1] spread_words = _check_step(
        K, W, beta, est_ptr, est_word, est_value, h, bitgens, (theta_out, local_out), average_in,
        average_out, spread, column_scale, alpha, topics)
    cdef Py_ssize_t n_spread = 0 if spread_words is None else spread_words.shape[0]
    cdef bint averaging = average_out is not None, accumulate = average_in is not None
    cdef double c = -expm1(-h), decay = exp(-h)
    cdef double rate = decay / c
    cdef double* row_theta = NULL
    cdef double* shape = NULL
    cdef double* sample = NULL
    cdef double* mean = NULL
    cdef double est_total, top
    cdef int out_of_memory = 0, too_small = 0
    cdef int* failed = &out_of_memory
    cdef int* rate_failed = &too_small
    cdef double largest = MAX_POISSON_RATE / rate
    cdef bint check_rate = not sgrld and _draws_poisson(beta)
    with nogil, parallel(num_threads=max(1, n_jobs)):
        row_theta = <double*> malloc(4 * W * sizeof(double))
        if row_theta == NULL:
            failed[0] = 1
        else:
            shape = row_theta + W
            sample = row_theta + 2 * W
            mean = row_theta + 3 * W
        for k in prange(K, schedule="dynamic"):
            if row_theta == NULL:
                continue
            top = 0.0
            for j in range(W):
                row_theta[j] = theta[k, j]
                top = max(top, row_theta[j])
            est_total = _row_shape(k, W, beta, est_ptr, est_word, est_value, n_spread,
                                   spread_words, spread, column_scale, alpha, topics, shape)
            if check_rate and top > largest:
                for j in range(W):
                    if _draws_poisson(shape[j]) and row_theta[j] > largest:
                        rate_failed[0] = 1
            if rate_failed[0]:
                continue
            if sgrld:
                _sgrld_row(row_theta, shape, est_total, W, h, <bitgen_t*> bitgens[k], sample,
                           mean)
            else:
                _scir_row(row_theta, shape, W, c, rate, <bitgen_t*> bitgens[k], sample)
                if local_mean:
                    for j in range(W):
                        mean[j] = row_theta[j] * decay + shape[j] * c
            _store_row(k, W, sample, NULL, mean if local_mean else sample, -1.0, theta_out,
                       local_out, average_in, average_out, averaging, accumulate)
        free(row_theta)
    if out_of_memory:
        raise MemoryError(f"row buffers of {W} words")
    if too_small:
        raise ValueError(f"step size h={h} is too small for this theta (up to "
                         f"{np.max(theta):.3g}): the CIR Poisson rate theta e^-h / (1 - e^-h) "
                         f"exceeds {MAX_POISSON_RATE:g}; use a larger step_size")


def scir_shape_step(const real[:, ::1] state, double scale, double beta,
                    const int64_t[::1] est_ptr, const int64_t[::1] est_word,
                    const double[::1] est_value, double h, const uintptr_t[::1] bitgens,
                    real[:, ::1] state_out, real[:, ::1] local_out,
                    const real[:, ::1] average_in=None, real[:, ::1] average_out=None,
                    int n_jobs=1, const double[::1] spread=None,
                    const double[::1] column_scale=None, const double[::1] alpha=None,
                    const real[:, ::1] topics=None, double light_rate=LIGHT_RATE):
    """One SCIR step of every topic row with theta integrated out (module docstring).

    Parameters
    ----------
    state : float64 or float32 C-contiguous (K, W)
        With ``scale`` > 0, the shapes (> 0) of the independent gammas of scale ``scale`` that
        theta is; with ``scale`` = 0, theta itself (> 0: a chain's start).
    scale : float >= 0
        The gammas' scale, ``1 - e^-h`` of the step that made ``state``; 0: ``state`` is theta.
    state_out : (K, W), same type as state
        The new shapes ``beta + est + N`` (their scale: ``1 - e^-h``). May not alias state.
    light_rate : float >= 0
        Coordinates whose expected Poisson count is below it draw as a group; any value gives
        the same law (0: none; inf: all but a chain's start).

    The other parameters and the errors are those of ``global_step`` (SCIR, ``local_mean``),
    the Poisson rate checked on the drawn rates.
    """
    cdef Py_ssize_t K = state.shape[0], W = state.shape[1], k, j, lo, hi, mid, i, n_light
    cdef const Py_ssize_t[::1] spread_words = _check_step(
        K, W, beta, est_ptr, est_word, est_value, h, bitgens, (state_out, local_out), average_in,
        average_out, spread, column_scale, alpha, topics)
    cdef Py_ssize_t n_spread = 0 if spread_words is None else spread_words.shape[0]
    cdef bint averaging = average_out is not None, accumulate = average_in is not None
    if not (scale >= 0 and isfinite(scale)) or not light_rate >= 0:
        raise ValueError(f"need a finite scale >= 0 and light_rate >= 0, got scale={scale}, "
                         f"light_rate={light_rate}")
    cdef double c = -expm1(-h), decay = exp(-h)
    cdef double rate = decay / c
    cdef double state_rate = scale * rate if scale > 0 else rate   # Poisson rate per unit
    cdef bint shapes = scale > 0, ready
    cdef double* shape = NULL
    cdef double* count = NULL
    cdef double* mean = NULL
    cdef double* weight_end = NULL
    cdef Py_ssize_t* light_word = NULL
    cdef Balls* balls = NULL
    cdef Py_ssize_t* grown
    cdef Py_ssize_t n_balls
    cdef double a, lam, light_total, u, mean_total
    cdef bitgen_t* rng
    cdef int out_of_memory = 0, too_small = 0
    cdef int* failed = &out_of_memory
    cdef int* rate_failed = &too_small
    with nogil, parallel(num_threads=max(1, n_jobs)):
        shape = <double*> malloc(4 * W * sizeof(double))
        light_word = <Py_ssize_t*> malloc(W * sizeof(Py_ssize_t))
        balls = <Balls*> malloc(sizeof(Balls))
        if balls != NULL:
            balls.capacity = W
            balls.word = <Py_ssize_t*> malloc(W * sizeof(Py_ssize_t))
        ready = not (shape == NULL or light_word == NULL or balls == NULL or balls.word == NULL)
        if not ready:
            failed[0] = 1
        else:
            count = shape + W
            mean = shape + 2 * W
            weight_end = shape + 3 * W
        for k in prange(K, schedule="dynamic"):
            if not ready or failed[0] or rate_failed[0]:
                continue
            rng = <bitgen_t*> bitgens[k]
            _row_shape(k, W, beta, est_ptr, est_word, est_value, n_spread, spread_words,
                       spread, column_scale, alpha, topics, shape)
            n_light = 0
            light_total = 0.0
            mean_total = 0.0
            for j in range(W):                  # the heavy words' Poisson counts
                a = state[k, j]
                mean[j] = (a * scale if shapes else a) * decay + shape[j] * c
                mean_total = mean_total + mean[j]
                count[j] = 0.0
                if shapes and a * state_rate < light_rate:
                    light_total = light_total + a
                    light_word[n_light] = j
                    weight_end[n_light] = light_total
                    n_light = n_light + 1
                    continue
                lam = (random_standard_gamma(rng, a) if shapes else a) * state_rate
                if not lam <= MAX_POISSON_RATE:
                    rate_failed[0] = 1
                    break
                count[j] = <double> random_poisson(rng, lam)
            if n_light > 0 and not rate_failed[0]:  # the light words' counts, by a Polya urn
                lam = random_standard_gamma(rng, light_total) * state_rate
                if not lam <= MAX_POISSON_RATE:
                    rate_failed[0] = 1
                    continue
                n_balls = random_poisson(rng, lam)
                if n_balls > balls.capacity:   # (the struct: a prange body may not rebind)
                    grown = <Py_ssize_t*> realloc(balls.word, n_balls * sizeof(Py_ssize_t))
                    if grown == NULL:
                        failed[0] = 1
                        continue
                    balls.word = grown
                    balls.capacity = n_balls
                for i in range(n_balls):
                    u = random_standard_uniform(rng) * (light_total + i)
                    if u < i:                   # the word of an earlier ball, uniformly
                        j = balls.word[<Py_ssize_t> u]
                    else:                       # a word in proportion to its shape
                        u = u - i
                        lo = 0
                        hi = n_light - 1
                        while lo < hi:
                            mid = (lo + hi) // 2
                            if weight_end[mid] > u:
                                hi = mid
                            else:
                                lo = mid + 1
                        j = light_word[lo]
                    balls.word[i] = j
                    count[j] = count[j] + 1.0
            _store_row(k, W, shape, count, mean, mean_total, state_out, local_out, average_in,
                       average_out, averaging, accumulate)
        free(shape)
        free(light_word)
        if balls != NULL:
            free(balls.word)
        free(balls)
    if out_of_memory:
        raise MemoryError(f"row buffers of {W} words")
    if too_small:
        raise ValueError(f"step size h={h} is too small for this state: a CIR Poisson rate "
                         f"exceeds {MAX_POISSON_RATE:g}; use a larger step_size")
