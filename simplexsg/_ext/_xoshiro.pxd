# xoshiro256** (Blackman & Vigna 2018) behind numpy's ``bitgen_t`` interface, its state seeded
# by SplitMix64 as its authors recommend: a stream costs a few nanoseconds to create, against
# ~11 us for a numpy PCG64 from a SeedSequence. Inline, so that every kernel that cimports it
# has its own copy and no module is imported at run time.
from libc.stdint cimport uint32_t, uint64_t
from numpy.random cimport bitgen_t


cdef inline uint64_t _rotl(uint64_t x, int k) noexcept nogil:
    return (x << k) | (x >> (64 - k))


cdef inline uint64_t splitmix_mix(uint64_t z) noexcept nogil:
    """SplitMix64's finaliser: a bijective 64-bit hash."""
    z = (z ^ (z >> 30)) * <uint64_t> 0xBF58476D1CE4E5B9ULL
    z = (z ^ (z >> 27)) * <uint64_t> 0x94D049BB133111EBULL
    return z ^ (z >> 31)


cdef inline void xoshiro_seed(uint64_t* state, uint64_t h) noexcept nogil:
    """The 4 words of ``state``: the SplitMix64 outputs from seed h."""
    cdef int j
    for j in range(4):
        h += <uint64_t> 0x9E3779B97F4A7C15ULL
        state[j] = splitmix_mix(h)


cdef inline uint64_t xoshiro_next64(void* state) noexcept nogil:
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


cdef inline uint32_t xoshiro_next32(void* state) noexcept nogil:
    return <uint32_t> (xoshiro_next64(state) >> 32)


cdef inline double xoshiro_next_double(void* state) noexcept nogil:
    return <double> (xoshiro_next64(state) >> 11) * (1.0 / 9007199254740992.0)


cdef inline void xoshiro_bitgen(bitgen_t* bitgen, uint64_t* state) noexcept nogil:
    """Make ``bitgen`` draw from the xoshiro256** ``state`` (4 words, kept alive by the
    caller), for numpy's C distributions."""
    bitgen.state = state
    bitgen.next_uint64 = &xoshiro_next64
    bitgen.next_uint32 = &xoshiro_next32
    bitgen.next_double = &xoshiro_next_double
    bitgen.next_raw = &xoshiro_next64
