"""Bit generators for kernels that draw from many streams without the GIL: the addresses of
numpy BitGenerators, and cheap per-document streams behind numpy's ``bitgen_t`` interface."""
from cpython.pycapsule cimport PyCapsule_GetPointer, PyCapsule_IsValid
from libc.stdint cimport int64_t, uint32_t, uint64_t, uintptr_t
from libc.stdlib cimport free, malloc
from posix.stdlib cimport posix_memalign
from numpy.random cimport bitgen_t

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
# xoshiro256** (Blackman & Vigna 2018), each state seeded by SplitMix64 from a hash of the
# caller's 256-bit key and the document index, as its authors recommend. A stream costs a few
# nanoseconds to create, against ~11 us for a numpy PCG64 from a SeedSequence: a minibatch of
# short documents (tweets, glosses) would otherwise spend most of its time making generators.

cdef inline uint64_t _rotl(uint64_t x, int k) noexcept nogil:
    return (x << k) | (x >> (64 - k))


cdef inline uint64_t _mix(uint64_t z) noexcept nogil:
    """SplitMix64's finaliser: a bijective 64-bit hash."""
    z = (z ^ (z >> 30)) * <uint64_t> 0xBF58476D1CE4E5B9ULL
    z = (z ^ (z >> 27)) * <uint64_t> 0x94D049BB133111EBULL
    return z ^ (z >> 31)


cdef uint64_t _xoshiro_next64(void* state) noexcept nogil:
    cdef uint64_t* s = <uint64_t*> state
    cdef uint64_t result = _rotl(s[1] * 5, 7) * 9
    cdef uint64_t t = s[1] << 17
    s[2] ^= s[0]
    s[3] ^= s[1]
    s[1] ^= s[2]
    s[0] ^= s[3]
    s[2] ^= t
    s[3] = _rotl(s[3], 45)
    return result


cdef uint32_t _xoshiro_next32(void* state) noexcept nogil:
    return <uint32_t> (_xoshiro_next64(state) >> 32)


cdef double _xoshiro_next_double(void* state) noexcept nogil:
    return <double> (_xoshiro_next64(state) >> 11) * (1.0 / 9007199254740992.0)


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
        cdef Py_ssize_t i, j
        cdef uint64_t h, key_hash = _mix(_mix(_mix(_mix(k[0]) ^ k[1]) ^ k[2]) ^ k[3])
        for i in range(self.n):
            h = _mix(key_hash ^ <uint64_t> docs[i])
            for j in range(4):                      # SplitMix64 outputs from seed h
                h += <uint64_t> 0x9E3779B97F4A7C15ULL
                self.states[STATE_WORDS * i + j] = _mix(h)
            self.bitgens[i].state = &self.states[STATE_WORDS * i]
            self.bitgens[i].next_uint64 = &_xoshiro_next64
            self.bitgens[i].next_uint32 = &_xoshiro_next32
            self.bitgens[i].next_double = &_xoshiro_next_double
            self.bitgens[i].next_raw = &_xoshiro_next64
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
            view[j] = _xoshiro_next_double(&self.states[STATE_WORDS * i])
        return out
