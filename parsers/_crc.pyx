# cython: language_level=3, boundscheck=False, wraparound=False, cdivision=True, initializedcheck=False
"""The compiled CRC-32C (Castagnoli): VPCLMULQDQ folding, SSE4.2 crc32q or table, the fastest the CPU has.

The other compiled modules call the same C function through the CRC32C capsule (one implementation, one
forced path for tests).
"""

from cpython.pycapsule cimport PyCapsule_New
from libc.stdint cimport uint32_t

from _layouts cimport crc32c_fn


cdef extern from "_crc32c.h":
    void kf_crc_init()
    uint32_t kf_crc32c(uint32_t crc, const unsigned char *p, size_t n) nogil
    const char *kf_crc_implementation()
    int kf_crc_force


kf_crc_init()

#: The contract with parsers/core.py (CORE_API_VERSION there): bump both when a signature changes.
API_VERSION = 3

#: kf_crc32c for the header walk of `_reader.pyx` (a crc32c_fn).
CRC32C = PyCapsule_New(<void *><crc32c_fn>kf_crc32c, b"kforensics.crc32c", NULL)

#: CRC-32C paths, fastest first (force_crc).
CRC_PATHS = ("vpclmulqdq", "sse4.2", "table")


def crc32c(const unsigned char[::1] data not None, uint32_t crc=0):
    """CRC-32C of a buffer."""
    cdef Py_ssize_t n = data.shape[0]
    if n == 0:
        return kf_crc32c(crc, NULL, 0)
    with nogil:
        crc = kf_crc32c(crc, &data[0], <size_t>n)
    return crc


def crc_implementation():
    """The CRC-32C path in use: 'vpclmulqdq', 'sse4.2' or 'table'."""
    return kf_crc_implementation().decode("ascii")


def force_crc(str path):
    """Use at most the given CRC-32C path ('vpclmulqdq' is the fastest the CPU has, then 'sse4.2', 'table'), in
    crc32c() and in the header walk; returns the path now in use (tests and the fuzzer compare them all)."""
    global kf_crc_force
    kf_crc_force = CRC_PATHS.index(path)
    return crc_implementation()
