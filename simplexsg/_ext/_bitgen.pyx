"""Addresses of numpy bit generators, for kernels that draw from many streams without the GIL."""
from cpython.pycapsule cimport PyCapsule_GetPointer, PyCapsule_IsValid
from libc.stdint cimport uintptr_t

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
