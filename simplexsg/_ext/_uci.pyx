"""Parsing the data lines of a UCI bag-of-words file ("docID wordID count", one triple a line).

``plain_triples`` reads bytes of whole lines in one pass in C, without the GIL: the reader's
fast path (``simplexsg.readers``). It accepts only the plain form that ``save_uci_bow`` and the
UCI repository write (three unsigned decimal integers separated by single spaces, each line
ending in a bare newline) and returns None for anything else, so that the caller's line-by-line
parser, which names the line at fault, reads that chunk instead. ``triples_valid`` makes the
reader's range and order checks of a parsed chunk in one pass.
"""
from libc.stdint cimport int64_t, INT64_MAX

import numpy as np

cdef enum:
    ZERO = 48           # b'0'
    NINE = 57           # b'9'
    SPACE = 32
    NEWLINE = 10


cdef Py_ssize_t _count_lines(const unsigned char[::1] data) noexcept nogil:
    cdef Py_ssize_t i, n = 0
    for i in range(data.shape[0]):
        n += data[i] == NEWLINE
    return n


cdef bint _parse(const unsigned char[::1] data, int64_t[:, ::1] out) noexcept nogil:
    """Fill ``out`` (one row a line) from ``data``; False at the first byte out of the plain
    form (a field without digits, another separator, a number beyond int64)."""
    cdef Py_ssize_t i = 0, size = data.shape[0], line = 0
    cdef int field
    cdef int64_t value
    cdef unsigned char c, digit
    while i < size:
        if line == out.shape[0]:                      # a last line without its newline
            return False
        for field in range(3):
            if i >= size or not (ZERO <= data[i] <= NINE):
                return False
            value = 0
            while i < size and ZERO <= data[i] <= NINE:
                digit = data[i] - ZERO
                if value >= INT64_MAX // 10 and (value > INT64_MAX // 10
                                                 or digit > INT64_MAX % 10):
                    return False                      # beyond int64
                value = 10 * value + digit
                i += 1
            out[line, field] = value
            if i >= size:
                return False
            c = data[i]
            if c != (SPACE if field < 2 else NEWLINE):
                return False
            i += 1
        line += 1
    return True


def plain_triples(const unsigned char[::1] data):
    """The (lines, 3) int64 triples of ``data`` (bytes of whole lines, each ending in a
    newline), or None when any line is not three unsigned integers and two single spaces (a
    blank line, a sign, a tab, CR LF, more or fewer fields, a number beyond int64)."""
    cdef Py_ssize_t n_lines
    cdef bint plain
    with nogil:
        n_lines = _count_lines(data)
    out = np.empty((n_lines, 3), dtype=np.int64)
    cdef int64_t[:, ::1] view = out
    with nogil:
        plain = _parse(data, view)
    return out if plain else None


def triples_valid(const int64_t[:, ::1] triples, int64_t last_doc, int64_t n_docs,
                  int64_t n_words, bint in_order=True):
    """True when every row (docID, wordID, count) of ``triples`` has docID in [1, n_docs]
    (``in_order``: and not below the row before it, the first not below ``last_doc``), wordID
    in [1, n_words] and count >= 1: the checks a reader makes of each chunk, in one pass (the
    caller finds and names the first bad line only when this is False)."""
    cdef bint valid
    with nogil:
        valid = _valid(triples, last_doc, n_docs, n_words, in_order)
    return valid


cdef bint _valid(const int64_t[:, ::1] triples, int64_t last_doc, int64_t n_docs,
                 int64_t n_words, bint in_order) noexcept nogil:
    cdef Py_ssize_t i
    cdef int64_t doc
    for i in range(triples.shape[0]):
        doc = triples[i, 0]
        if ((in_order and doc < last_doc) or doc < 1 or doc > n_docs or triples[i, 1] < 1
                or triples[i, 1] > n_words or triples[i, 2] < 1):
            return False
        last_doc = doc
    return True
