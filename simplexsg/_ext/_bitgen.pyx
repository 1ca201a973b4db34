"""Bit generators for kernels that draw from many streams without the GIL: the addresses of
numpy BitGenerators, and cheap per-document streams behind numpy's ``bitgen_t`` interface."""
from cpython.pycapsule cimport PyCapsule_GetPointer, PyCapsule_IsValid
from libc.stdint cimport int64_t, uint64_t, uintptr_t
from libc.stdlib cimport free, malloc
from posix.stdlib cimport posix_memalign
from numpy.random cimport bitgen_t

from ._xoshiro cimport splitmix_mix, xoshiro_bitgen, xoshiro_next_double, xoshiro_seed

import numpy as np


def bitgen_addresses(bit_generators):
    """The ``bitgen_t*`` of each numpy BitGenerator in ``bit_generators``, as a uintp array.

    The addresses stay valid only while the BitGenerator objects are alive: the caller keeps
    them referenced for as long as it uses the addresses.
    """
    out = np.empty(len(bit_generators), dtype=np.uintp)
    cdef uintptr_t[::1] view = out
    cdef Py_ssize_t i
    for i, bit_generator in enumerate(bit_generators):
        capsule = getattr(bit_generator, "capsule", None)
        if not PyCapsule_IsValid(capsule, "BitGenerator"):
            raise TypeError(f"bit_generators[{i}] is not a numpy BitGenerator")
        view[i] = <uintptr_t> PyCapsule_GetPointer(capsule, "BitGenerator")
    return out


# ---------------------------------------------------------------- per-document streams
# xoshiro256** streams (``_xoshiro``), each seeded from a hash of the caller's 256-bit key and
# the document index: a minibatch of short documents (tweets, glosses) would otherwise spend
# most of its time making numpy generators.

#: uint64 words per stream state: 4 used, padded to a 64-byte cache line.
cdef enum:
    STATE_WORDS = 8


cdef class DocumentStreams:
    """One xoshiro256** bit generator (a numpy ``bitgen_t``) per document.

    Stream ``i`` is a function of ``key`` (4 uint64 words, e.g. from
    ``SeedSequence.generate_state(4, np.uint64)``) and ``doc_indices[i]`` only, so a kernel that
    draws for a document only from its own stream gives the same result however the documents
    are split into minibatches or threads. ``addresses``: the ``bitgen_t*`` of each stream
    (uintp array), valid while this object is alive. Each state has a cache line of its own,
    so that threads drawing from neighbouring streams do not share one (false sharing).
    """
    cdef uint64_t* states
    cdef bitgen_t* bitgens
    cdef Py_ssize_t n
    cdef public object addresses

    def __cinit__(self, key, doc_indices):
        cdef uint64_t[::1] k = np.ascontiguousarray(key, dtype=np.uint64)
        cdef int64_t[::1] docs = np.ascontiguousarray(doc_indices, dtype=np.int64)
        if k.shape[0] != 4:
            raise ValueError(f"key must hold 4 uint64 words, got {k.shape[0]}")
        self.n = docs.shape[0]
        if posix_memalign(<void**> &self.states, 64,
                          max(self.n, 1) * STATE_WORDS * sizeof(uint64_t)):
            self.states = NULL
        self.bitgens = <bitgen_t*> malloc(max(self.n, 1) * sizeof(bitgen_t))
        if self.states == NULL or self.bitgens == NULL:
            raise MemoryError()
        self.addresses = np.empty(self.n, dtype=np.uintp)
        cdef uintptr_t[::1] out = self.addresses
        cdef Py_ssize_t i
        cdef uint64_t key_hash = splitmix_mix(
            splitmix_mix(splitmix_mix(splitmix_mix(k[0]) ^ k[1]) ^ k[2]) ^ k[3])
        for i in range(self.n):
            xoshiro_seed(&self.states[STATE_WORDS * i],
                         splitmix_mix(key_hash ^ <uint64_t> docs[i]))
            xoshiro_bitgen(&self.bitgens[i], &self.states[STATE_WORDS * i])
            out[i] = <uintptr_t> &self.bitgens[i]

    def __dealloc__(self):
        free(self.states)
        free(self.bitgens)

    def __len__(self):
        return self.n

    def doubles(self, Py_ssize_t i, Py_ssize_t size):
        """The next ``size`` uniform doubles in [0, 1) of stream ``i`` (advances it)."""
        if not 0 <= i < self.n:
            raise IndexError(f"stream {i} of {self.n}")
        out = np.empty(size, dtype=np.float64)
        cdef double[::1] view = out
        cdef Py_ssize_t j
        for j in range(size):
            view[j] = xoshiro_next_double(&self.states[STATE_WORDS * i])
        return out
