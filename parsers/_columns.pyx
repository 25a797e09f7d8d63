# cython: language_level=3, boundscheck=False, wraparound=False, cdivision=True, initializedcheck=False
"""Record rows in bulk as C columns, handed out as Arrow arrays (the scan's executors, `record_rows.py`).

`_pure.RecordColumns` is the pure-Python implementation of the same class; `parsers/core.py` binds one.
"""

from cpython.bytes cimport PyBytes_FromStringAndSize
from cpython.mem cimport PyMem_Free, PyMem_Realloc
from libc.stdint cimport int32_t, int64_t

from _layouts cimport V2Cursor, cursor_end, cursor_init, cursor_step, record_offset, record_timestamp

#: The contract with parsers/core.py (CORE_API_VERSION there): bump both when a signature changes.
API_VERSION = 3


cdef extern from "_blake2b.h":
    int64_t kf_blake2b_64(const unsigned char *p, size_t n) nogil

def blake2b_64(const unsigned char[::1] data not None):
    """hashlib.blake2b(data, digest_size=8) read as a big-endian signed int64 (a record row's content hash)."""
    cdef Py_ssize_t n = data.shape[0]
    if n == 0:
        return kf_blake2b_64(NULL, 0)
    return kf_blake2b_64(&data[0], <size_t>n)


cdef class RecordColumns:
    """Record rows of many batches as growing C columns: offset, timestamp, producer_id, producer_epoch,
    key_hash, value_hash (BLAKE2b-64, null for a null key or value, 0 when hashes are off), key_size,
    value_size (-1 for null) and batch_position. `add_v2()` decodes a records section straight into them."""

    cdef int64_t *offset
    cdef int64_t *timestamp
    cdef int64_t *producer_id
    cdef int32_t *producer_epoch
    cdef int64_t *key_hash
    cdef int64_t *value_hash
    cdef int32_t *key_size
    cdef int32_t *value_size
    cdef int64_t *batch_position
    cdef Py_ssize_t n, cap
    cdef bint hashes

    def __cinit__(self, bint hashes=True):
        self.n = 0
        self.cap = 0
        self.hashes = hashes

    def __dealloc__(self):
        self._free()

    cdef void _free(self):
        PyMem_Free(self.offset)
        PyMem_Free(self.timestamp)
        PyMem_Free(self.producer_id)
        PyMem_Free(self.producer_epoch)
        PyMem_Free(self.key_hash)
        PyMem_Free(self.value_hash)
        PyMem_Free(self.key_size)
        PyMem_Free(self.value_size)
        PyMem_Free(self.batch_position)
        self.offset = self.timestamp = self.producer_id = self.key_hash = self.value_hash = NULL
        self.batch_position = NULL
        self.producer_epoch = self.key_size = self.value_size = NULL
        self.n = self.cap = 0

    cdef int _reserve(self, Py_ssize_t extra) except -1:
        cdef Py_ssize_t cap = self.cap
        if self.n + extra <= cap:
            return 0
        while cap < self.n + extra:
            cap = cap * 2 if cap else 4096
        self.offset = <int64_t *>_grow(self.offset, cap * 8)
        self.timestamp = <int64_t *>_grow(self.timestamp, cap * 8)
        self.producer_id = <int64_t *>_grow(self.producer_id, cap * 8)
        self.producer_epoch = <int32_t *>_grow(self.producer_epoch, cap * 4)
        self.key_hash = <int64_t *>_grow(self.key_hash, cap * 8)
        self.value_hash = <int64_t *>_grow(self.value_hash, cap * 8)
        self.key_size = <int32_t *>_grow(self.key_size, cap * 4)
        self.value_size = <int32_t *>_grow(self.value_size, cap * 4)
        self.batch_position = <int64_t *>_grow(self.batch_position, cap * 8)
        self.cap = cap
        return 0

    def __len__(self):
        return self.n

    cdef inline void _hash_into(self, int64_t *out, const unsigned char *d, int64_t length) noexcept nogil:
        if length < 0 or not self.hashes:
            out[0] = 0
        else:
            out[0] = kf_blake2b_64(d, <size_t>length)

    def add_record(self, int64_t offset, int64_t timestamp, int64_t producer_id, int32_t producer_epoch,
                   key, value, int64_t batch_position):
        """One row from Python values (legacy messages, or records another decoder produced)."""
        cdef const unsigned char[::1] view
        self._reserve(1)
        cdef Py_ssize_t j = self.n
        self.offset[j] = offset
        self.timestamp[j] = timestamp
        self.producer_id[j] = producer_id
        self.producer_epoch[j] = producer_epoch
        self.batch_position[j] = batch_position
        if key is None:
            self.key_size[j] = -1
            self.key_hash[j] = 0
        else:
            view = key
            self.key_size[j] = <int32_t>view.shape[0]
            self._hash_into(&self.key_hash[j], &view[0] if view.shape[0] else NULL, view.shape[0])
        if value is None:
            self.value_size[j] = -1
            self.value_hash[j] = 0
        else:
            view = value
            self.value_size[j] = <int32_t>view.shape[0]
            self._hash_into(&self.value_hash[j], &view[0] if view.shape[0] else NULL, view.shape[0])
        self.n = j + 1

    def add_v2(self, const unsigned char[::1] buf not None, Py_ssize_t start, Py_ssize_t stop, object batch):
        """Decode buf[start:stop], the (decompressed) records section of v2 `batch`, into rows; returns the
        decoder's problem (the same as `decode_v2`'s) or None, with the rows of the records read before it kept."""
        cdef V2Cursor c
        cursor_init(&c, buf, start, stop, batch)
        cdef int64_t decoded
        cdef Py_ssize_t j
        for decoded in range(c.count):
            problem = cursor_step(&c, decoded)
            if problem is not None:
                return problem
            self._reserve(1)
            j = self.n
            self.offset[j] = record_offset(&c)
            self.timestamp[j] = record_timestamp(&c)
            self.producer_id[j] = c.producer_id
            self.producer_epoch[j] = c.producer_epoch
            self.batch_position[j] = c.position
            self.key_size[j] = <int32_t>c.key_len
            self.value_size[j] = <int32_t>c.value_len
            with nogil:
                self._hash_into(&self.key_hash[j], c.d + c.key_start, c.key_len)
                self._hash_into(&self.value_hash[j], c.d + c.value_start, c.value_len)
            self.n = j + 1
        return cursor_end(&c)

    def take(self):
        """The columns as pyarrow arrays (name -> array), and empty columns for the next rows."""
        import pyarrow as pa

        cdef Py_ssize_t n = self.n
        cdef Py_ssize_t i
        cdef bytearray key_valid = bytearray((n + 7) // 8)
        cdef bytearray value_valid = bytearray((n + 7) // 8)
        cdef unsigned char *kv = key_valid
        cdef unsigned char *vv = value_valid
        for i in range(n):
            if self.key_size[i] >= 0:
                kv[i >> 3] |= 1 << (i & 7)
            if self.value_size[i] >= 0:
                vv[i >> 3] |= 1 << (i & 7)
        out = {
            "offset": _array(pa, pa.int64(), n, None, self.offset, 8),
            "timestamp": _array(pa, pa.int64(), n, None, self.timestamp, 8),
            "producer_id": _array(pa, pa.int64(), n, None, self.producer_id, 8),
            "producer_epoch": _array(pa, pa.int32(), n, None, self.producer_epoch, 4),
            "key_hash": _array(pa, pa.int64(), n, key_valid if self.hashes else None, self.key_hash, 8),
            "value_hash": _array(pa, pa.int64(), n, value_valid if self.hashes else None, self.value_hash, 8),
            "key_size": _array(pa, pa.int32(), n, None, self.key_size, 4),
            "value_size": _array(pa, pa.int32(), n, None, self.value_size, 4),
            "batch_position": _array(pa, pa.int64(), n, None, self.batch_position, 8),
        }
        if not self.hashes:
            out["key_hash"] = pa.nulls(n, pa.int64())
            out["value_hash"] = pa.nulls(n, pa.int64())
        self.n = 0
        return out


cdef void *_grow(void *p, size_t size) except NULL:
    cdef void *q = PyMem_Realloc(p, size)
    if q == NULL:
        raise MemoryError()
    return q


cdef object _array(object pa, object kind, Py_ssize_t n, object validity, void *data, Py_ssize_t width):
    values = PyBytes_FromStringAndSize(<const char *>data, n * width) if n else b""
    return pa.Array.from_buffers(kind, n, [None if validity is None else pa.py_buffer(validity),
                                           pa.py_buffer(values)])
