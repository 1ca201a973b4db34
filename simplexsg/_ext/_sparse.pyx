"""Generic helpers on CSR (compressed sparse row) arrays, shared by the kernels: index checks,
a counting sort of items by an integer key, the token arrays of a count matrix and the
transpose of a count matrix. Nothing here knows about topics or samplers.

The ``cdef`` helpers that other kernels use are declared in ``_sparse.pxd``. Every function
that runs on several threads gives a result that does not depend on their number.
"""
from cython.parallel cimport prange
from libc.stdint cimport int32_t, int64_t
from libc.stdlib cimport calloc, free

import numpy as np

# index_t, the fused type of index arrays (int32 or int64), is declared in _sparse.pxd.


cdef Py_ssize_t _first_outside(const index_t[::1] values, Py_ssize_t upper) noexcept nogil:
    """Position of the first value outside 0 .. upper - 1, or -1."""
    cdef Py_ssize_t i
    for i in range(values.shape[0]):
        if values[i] < 0 or values[i] >= upper:
            return i
    return -1


cdef int _check_indptr(const int64_t[::1] indptr, Py_ssize_t nnz, Py_ssize_t n_values) except -1:
    """Raise ValueError unless the CSR row pointers ``indptr`` run from 0 to ``nnz`` without
    decreasing and the values array has ``nnz`` entries too."""
    cdef Py_ssize_t n_rows = indptr.shape[0] - 1, r, bad = -1
    if n_rows < 0 or n_values != nnz or indptr[0] != 0 or indptr[n_rows] != nnz:
        raise ValueError(f"indptr must run from 0 to {nnz}, the entries of the index and value "
                         "arrays")
    with nogil:
        for r in range(n_rows):
            if indptr[r + 1] < indptr[r]:
                bad = r
                break
    if bad >= 0:
        raise ValueError(f"indptr decreases at row {bad}")
    return 0


cdef void _chunk_starts(int64_t* offset, Py_ssize_t n_chunks, Py_ssize_t n_keys,
                        int64_t* key_start) noexcept nogil:
    """The counting sort's places: ``offset[c * n_keys + w]``, chunk c's count of key w on
    entry, becomes the first slot of those items (key w's slots in chunk order, the keys in
    order); ``key_start[w]`` (n_keys + 1,) the first slot of key w."""
    cdef Py_ssize_t c, w
    cdef int64_t total = 0, count
    for w in range(n_keys):           # chunk c of key w starts after chunks 0 .. c - 1
        key_start[w] = total
        for c in range(n_chunks):
            count = offset[c * n_keys + w]
            offset[c * n_keys + w] = total
            total = total + count
    key_start[n_keys] = total


cdef int _group_by_key(const int32_t* keys, Py_ssize_t n_items, Py_ssize_t n_keys,
                       int64_t* key_start, int64_t* order, int n_threads) noexcept nogil:
    """Counting sort of items 0 .. n_items - 1 by their keys (in 0 .. n_keys - 1): key w's items
    are ``order[key_start[w]:key_start[w + 1]]``, in increasing order. Each of ``n_threads``
    contiguous chunks of items is counted and placed by its own thread, the chunks in order, so
    the result does not depend on the threads. Returns 1 when scratch space cannot be
    allocated, else 0."""
    cdef Py_ssize_t chunk = (n_items + n_threads - 1) // n_threads, c, t, w
    cdef int64_t* offset = <int64_t*> calloc(n_threads * n_keys, sizeof(int64_t))
    if offset == NULL:
        return 1
    for c in prange(n_threads, num_threads=n_threads, schedule="static"):
        for t in range(c * chunk, min(n_items, (c + 1) * chunk)):
            offset[c * n_keys + keys[t]] += 1
    _chunk_starts(offset, n_threads, n_keys, key_start)
    for c in prange(n_threads, num_threads=n_threads, schedule="static"):
        for t in range(c * chunk, min(n_items, (c + 1) * chunk)):
            w = keys[t]
            order[offset[c * n_keys + w]] = t
            offset[c * n_keys + w] += 1
    free(offset)
    return 0


def csr_token_arrays(const int64_t[::1] indptr, const index_t[::1] indices,
                     const int64_t[::1] counts, Py_ssize_t n_columns, int n_jobs=1):
    """The token arrays of a CSR count matrix (``simplexsg.lda.gibbs.csr_to_tokens``).

    ``indptr`` (n_docs + 1,), ``indices`` and ``counts`` (nnz,) >= 0: a CSR matrix of
    ``n_columns`` columns (indices need not be sorted; duplicates add up). Returns ``(doc_ptr
    int64 (n_docs + 1,), word_ids int32 (n_tokens,), vocab int64 (W_b,))``: document d's tokens
    are ``word_ids[doc_ptr[d]:doc_ptr[d + 1]]``, entry by entry, an entry of count c giving c
    tokens; ``word_ids`` index the sorted columns ``vocab`` with a positive count. The tokens are
    written on ``n_jobs`` threads over the documents; the result does not depend on them.
    """
    cdef Py_ssize_t n_docs = indptr.shape[0] - 1, nnz = indices.shape[0], d, e, w, c
    cdef Py_ssize_t bad = -1, n_vocab = 0
    _check_indptr(indptr, nnz, counts.shape[0])
    cdef int32_t[::1] local = np.zeros(n_columns, dtype=np.int32)
    cdef int64_t[::1] start = np.empty(nnz + 1, dtype=np.int64)   # first token of each entry
    with nogil:
        start[0] = 0
        for e in range(nnz):
            if not (0 <= indices[e] < n_columns and counts[e] >= 0):
                bad = e
                break
            if counts[e] > 0:
                local[indices[e]] = 1
            start[e + 1] = start[e] + counts[e]
        if bad < 0:
            for w in range(n_columns):      # a column's local id, -1 where it has no tokens
                if local[w]:
                    local[w] = <int32_t> n_vocab
                    n_vocab = n_vocab + 1
                else:
                    local[w] = -1
    if bad >= 0:
        raise ValueError(f"entry {bad}: column {indices[bad]} (of {n_columns}), count "
                         f"{counts[bad]}; need a column in range and a count >= 0")
    cdef int64_t[::1] vocab = np.empty(n_vocab, dtype=np.int64)
    cdef int64_t[::1] doc_ptr = np.empty(n_docs + 1, dtype=np.int64)
    cdef int32_t[::1] word_ids = np.empty(start[nnz], dtype=np.int32)
    with nogil:
        for w in range(n_columns):
            if local[w] >= 0:
                vocab[local[w]] = w
        for d in range(n_docs + 1):
            doc_ptr[d] = start[indptr[d]]
    for d in prange(n_docs, nogil=True, num_threads=max(1, n_jobs), schedule="static"):
        for e in range(indptr[d], indptr[d + 1]):
            for c in range(start[e], start[e + 1]):
                word_ids[c] = local[indices[e]]
    return np.asarray(doc_ptr), np.asarray(word_ids), np.asarray(vocab)


def transpose_counts(const int64_t[::1] indptr, const int32_t[::1] columns,
                     const count_t[::1] counts, Py_ssize_t n_columns, int n_jobs=1):
    """The transpose of a CSR matrix of counts (e.g. word-topic counts, rows the words, to
    topic rows): ``(indptr int64 (n_columns + 1,), rows int64 (nnz,), counts (nnz,))``, the
    counts int64 or float64 as given, each new row's entries in increasing order of the old
    rows. Runs on ``n_jobs`` threads; the result does not depend on them.

    A counting sort by column that moves the entries as it places them: each thread takes a
    run of rows holding about nnz / threads entries, counts its entries per column, and then
    writes them, read in order, to their places (its columns' slots follow those of the
    threads before it), so that no entry is read out of order."""
    cdef Py_ssize_t n_rows = indptr.shape[0] - 1, nnz = columns.shape[0], r, e, c, pos
    cdef int n_threads = <int> max(1, min(n_jobs, n_rows))
    _check_indptr(indptr, nnz, counts.shape[0])
    cdef Py_ssize_t bad = _first_outside(columns, n_columns)
    if bad >= 0:
        raise ValueError(f"columns[{bad}] = {columns[bad]} is outside 0..{n_columns - 1}")
    cdef int64_t[::1] start = np.zeros(n_columns + 1, dtype=np.int64)
    cdef int64_t[::1] rows = np.empty(nnz, dtype=np.int64)
    cdef count_t[::1] values = np.empty(nnz, dtype=np.asarray(counts).dtype)
    if nnz == 0:
        return np.asarray(start), np.asarray(rows), np.asarray(values)
    # thread c's rows: first_row[c] .. first_row[c + 1] - 1 (none past the last row when
    # there are fewer entries than threads)
    cdef int64_t[::1] first_row = np.minimum(n_rows, np.searchsorted(
        np.asarray(indptr), np.arange(n_threads + 1) * ((nnz + n_threads - 1) // n_threads)))
    first_row[0] = 0
    first_row[n_threads] = n_rows
    cdef int64_t* offset = <int64_t*> calloc(n_threads * n_columns, sizeof(int64_t))
    if offset == NULL:
        raise MemoryError("scratch space of the transpose")
    try:
        for c in prange(n_threads, nogil=True, num_threads=n_threads, schedule="static"):
            for r in range(first_row[c], first_row[c + 1]):
                for e in range(indptr[r], indptr[r + 1]):
                    offset[c * n_columns + columns[e]] += 1
        with nogil:
            _chunk_starts(offset, n_threads, n_columns, &start[0])
        for c in prange(n_threads, nogil=True, num_threads=n_threads, schedule="static"):
            for r in range(first_row[c], first_row[c + 1]):
                for e in range(indptr[r], indptr[r + 1]):
                    pos = offset[c * n_columns + columns[e]]
                    offset[c * n_columns + columns[e]] = pos + 1
                    rows[pos] = r
                    values[pos] = counts[e]
    finally:
        free(offset)
    return np.asarray(start), np.asarray(rows), np.asarray(values)
