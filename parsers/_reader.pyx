# cython: language_level=3, boundscheck=False, wraparound=False, cdivision=True, initializedcheck=False
"""The compiled segment reader: batch-header walk with CRC-32C, v2 record decode and check, zero scans, and the
record search of `kforensics find` (RecordMatcher).

Each function is one piece of `parsers/_pure.py` (the pure-Python reference, same signatures) and returns
exactly what it returns; `parsers/core.py` binds one or the other and `tests/test_differential.py` holds them
to the same results. Every index into a buffer is checked against the buffer's length before it is read:
indexing runs with Cython's bounds checks off, so the checks below are the only ones.
"""

from cpython.bytes cimport PyBytes_AS_STRING, PyBytes_FromStringAndSize, PyBytes_GET_SIZE
from cpython.mem cimport PyMem_Calloc, PyMem_Free
from cpython.object cimport PyObject
from cpython.pycapsule cimport PyCapsule_GetPointer
from cpython.ref cimport Py_DECREF, Py_INCREF
from cpython.tuple cimport PyTuple_SET_ITEM
from cpython.unicode cimport PyUnicode_DecodeUTF8
from libc.stdint cimport int16_t, int32_t, int64_t, uint32_t, uint64_t
from libc.string cimport memchr, memcmp

from _layouts cimport (INT32_MAX, MAX_BATCH_SIZE, V2_CRC_START, V2_HEADER_SIZE, V2_MIN_BATCH_LENGTH, V2Cursor,
                       crc32c_fn, cursor_end, cursor_init, cursor_step, kf_add64, kf_alloc_tuple, kf_be16, kf_be32,
                       kf_be64, kf_first_nonzero, kf_untrack, record_offset, record_sequence, record_timestamp,
                       varint)

from kforensics.parsers._crc import CRC32C as _CRC32C

#: The contract with parsers/core.py (CORE_API_VERSION there): bump both when a signature changes.
API_VERSION = 4

cdef crc32c_fn kf_crc32c = <crc32c_fn>PyCapsule_GetPointer(_CRC32C, b"kforensics.crc32c")

cdef str _CREATE_TIME = "CreateTime"
cdef str _LOG_APPEND_TIME = "LogAppendTime"


cdef inline void _put(object t, Py_ssize_t i, object v):
    Py_INCREF(v)
    PyTuple_SET_ITEM(t, i, v)


# The RecordBatch fields walk_v2 decodes, by name (record_batch.HEADER_FIELDS declares them): each value is put at
# its field's index in the batch type, whatever the declaration's order.
cdef enum:
    F_POSITION, F_SIZE, F_MAGIC, F_BASE_OFFSET, F_LAST_OFFSET, F_COUNT, F_PARTITION_LEADER_EPOCH, F_PRODUCER_ID
    F_PRODUCER_EPOCH, F_BASE_SEQUENCE, F_LAST_SEQUENCE, F_IS_TRANSACTIONAL, F_IS_CONTROL, F_CODEC, F_TIMESTAMP_TYPE
    F_BASE_TIMESTAMP, F_MAX_TIMESTAMP, F_CRC, F_CRC_VALID, F_DELETE_HORIZON_MS, F_ATTRIBUTES, F_LAST_OFFSET_DELTA
    N_DECODED

DECODED = ("position", "size", "magic", "base_offset", "last_offset", "count", "partition_leader_epoch",
           "producer_id", "producer_epoch", "base_sequence", "last_sequence", "is_transactional", "is_control", "codec",
           "timestamp_type", "base_timestamp", "max_timestamp", "crc", "crc_valid", "delete_horizon_ms", "attributes",
           "last_offset_delta")

cdef object _bound_type = None  # the batch type _bound_slots are the indexes of
cdef Py_ssize_t _bound_slots[N_DECODED]


cdef int _slots(object batch_type, Py_ssize_t *slots) except -1:
    """The index of each decoded field in `batch_type` (a NamedTuple), into slots[F_...]. A batch type with a field
    this walk does not decode (or without one it does) is refused: no slot of a batch is ever left empty."""
    global _bound_type
    cdef Py_ssize_t i
    if batch_type is not _bound_type:
        fields = tuple(batch_type._fields)
        if sorted(fields) != sorted(DECODED):
            raise ValueError(f"the compiled walk_v2 decodes {DECODED}, the batch type declares {fields}: decode the "
                             "new field in parsers/_reader.pyx too")
        for i in range(N_DECODED):
            _bound_slots[i] = fields.index(DECODED[i])
        _bound_type = batch_type
    for i in range(N_DECODED):
        slots[i] = _bound_slots[i]
    return 0


def walk_v2(const unsigned char[::1] buf not None, Py_ssize_t pos, Py_ssize_t stop, Py_ssize_t end,
            bint verify_crc, object batch_type, tuple codecs, int64_t base=0):
    """Whole, plausible v2 batches from `pos` while `pos < stop`: (batches, next position).

    A batch must fit before `end`; the walk stops at the first position that is not such a batch, and right
    after a batch whose CRC does not match (the caller reports it), exactly as `_pure.walk_v2`.
    buf[0] is byte `base` of the file (a chunk read from it): batch positions are `base + pos`. Each batch is a
    `batch_type` (RecordBatch) with every field put at its name's index.
    """
    cdef Py_ssize_t n = buf.shape[0]
    cdef list out = []
    if end > n:
        end = n
    if pos < 0 or n == 0:
        return out, pos
    cdef const unsigned char *p = &buf[0]
    cdef const unsigned char *h
    cdef int64_t base_offset, base_ts, max_ts, producer_id, size, last_sequence
    cdef int32_t length, leader_epoch, last_offset_delta, base_sequence, count
    cdef int16_t attributes, producer_epoch
    cdef uint32_t crc
    cdef bint crc_valid
    if len(codecs) != 8:
        raise ValueError("codecs must name all 8 codec ids")
    cdef Py_ssize_t slot[N_DECODED]
    _slots(batch_type, slot)
    while pos < stop and end - pos >= V2_HEADER_SIZE and p[pos + 16] == 2:
        h = p + pos
        length = kf_be32(h + 8)
        size = <int64_t>length + 12
        if length < V2_MIN_BATCH_LENGTH or size > end - pos or size > MAX_BATCH_SIZE:
            break
        base_offset = kf_be64(h)
        leader_epoch = kf_be32(h + 12)
        crc = <uint32_t>kf_be32(h + 17)
        attributes = kf_be16(h + 21)
        last_offset_delta = kf_be32(h + 23)
        base_ts = kf_be64(h + 27)
        max_ts = kf_be64(h + 35)
        producer_id = kf_be64(h + 43)
        producer_epoch = kf_be16(h + 51)
        base_sequence = kf_be32(h + 53)
        count = kf_be32(h + 57)
        if verify_crc:
            with nogil:
                crc_valid = kf_crc32c(0, h + V2_CRC_START, <size_t>(size - V2_CRC_START)) == crc
        else:
            crc_valid = True
        if base_sequence < 0:
            last_sequence = -1
        else:
            last_sequence = <int64_t>base_sequence + last_offset_delta
            if last_sequence > INT32_MAX:
                last_sequence -= 2147483648
        b = kf_alloc_tuple(batch_type, N_DECODED)
        _put(b, slot[F_POSITION], base + pos)
        _put(b, slot[F_SIZE], size)
        _put(b, slot[F_MAGIC], 2)
        _put(b, slot[F_BASE_OFFSET], base_offset)
        _put(b, slot[F_LAST_OFFSET], kf_add64(base_offset, last_offset_delta))
        _put(b, slot[F_COUNT], count)
        _put(b, slot[F_PARTITION_LEADER_EPOCH], leader_epoch)
        _put(b, slot[F_PRODUCER_ID], producer_id)
        _put(b, slot[F_PRODUCER_EPOCH], producer_epoch)
        _put(b, slot[F_BASE_SEQUENCE], base_sequence)
        _put(b, slot[F_LAST_SEQUENCE], last_sequence)
        _put(b, slot[F_IS_TRANSACTIONAL], True if attributes & 0x10 else False)
        _put(b, slot[F_IS_CONTROL], True if attributes & 0x20 else False)
        _put(b, slot[F_CODEC], codecs[attributes & 7])
        _put(b, slot[F_TIMESTAMP_TYPE], _LOG_APPEND_TIME if attributes & 0x08 else _CREATE_TIME)
        _put(b, slot[F_BASE_TIMESTAMP], base_ts)
        _put(b, slot[F_MAX_TIMESTAMP], max_ts)
        _put(b, slot[F_CRC], crc)
        _put(b, slot[F_CRC_VALID], True if crc_valid else False)
        _put(b, slot[F_DELETE_HORIZON_MS], base_ts if attributes & 0x40 else None)
        _put(b, slot[F_ATTRIBUTES], attributes)
        _put(b, slot[F_LAST_OFFSET_DELTA], last_offset_delta)
        kf_untrack(b)
        out.append(b)
        pos += size
        if not crc_valid:
            break
    return out, pos


def first_nonzero(const unsigned char[::1] buf not None, Py_ssize_t start, Py_ssize_t stop):
    """Index of the first non-zero byte of buf[start:stop], or `stop`."""
    cdef Py_ssize_t n = buf.shape[0]
    if stop > n:
        stop = n
    if start < 0:
        start = 0
    if start >= stop:
        return stop
    cdef Py_ssize_t found
    with nogil:
        found = kf_first_nonzero(&buf[0] + start, stop - start)
    return start + found


# -- v2 records -------------------------------------------------------------------------------------------

cdef tuple _headers(V2Cursor *c):
    """The headers of the record just read (its bytes were checked by cursor_next())."""
    cdef Py_ssize_t i = c.headers_start
    cdef int64_t k, klen, vlen
    cdef list out
    if c.header_count == 0:
        return ()
    out = []
    for k in range(c.header_count):
        varint(c.d, c.n, &i, &klen)
        hkey = PyUnicode_DecodeUTF8(<const char *>c.d + i, klen, "replace")
        i += klen
        varint(c.d, c.n, &i, &vlen)
        if vlen >= 0:
            hvalue = PyBytes_FromStringAndSize(<const char *>c.d + i, vlen)
            i += vlen
        else:
            hvalue = None
        pair = (hkey, hvalue)
        kf_untrack(pair)
        out.append(pair)
    headers = tuple(out)
    kf_untrack(headers)
    return headers


cdef inline object _bytes_or_none(const unsigned char *d, Py_ssize_t start, int64_t length):
    if length == -1:
        return None
    return PyBytes_FromStringAndSize(<const char *>d + start, length)


def decode_v2(const unsigned char[::1] buf not None, Py_ssize_t start, Py_ssize_t stop, object batch,
              object record_type, object control):
    """The records of buf[start:stop], a v2 batch's (decompressed) records section: (records, problem), the
    problem (code, record number, value) that ended them or None, exactly as `_pure.decode_v2`."""
    cdef V2Cursor c
    cursor_init(&c, buf, start, stop, batch)
    cdef list out = []
    cdef bint is_control = c.is_control
    cdef int64_t decoded
    cdef object key, value, control_type, coordinator_epoch
    for decoded in range(c.count):
        problem = cursor_step(&c, decoded)
        if problem is not None:
            return out, problem
        key = _bytes_or_none(c.d, c.key_start, c.key_len)
        value = _bytes_or_none(c.d, c.value_start, c.value_len)
        r = kf_alloc_tuple(record_type, 10)
        _put(r, 0, record_offset(&c))
        _put(r, 1, record_timestamp(&c))
        _put(r, 2, record_sequence(&c))
        _put(r, 3, key)
        _put(r, 4, value)
        _put(r, 5, _headers(&c))
        if is_control:
            control_type, coordinator_epoch = control(key, value)
        else:
            control_type = coordinator_epoch = None
        _put(r, 6, control_type)
        _put(r, 7, coordinator_epoch)
        _put(r, 8, None)
        _put(r, 9, None)
        if not is_control:  # control types come from Python: keep those records tracked
            kf_untrack(r)
        out.append(r)
    return out, cursor_end(&c)


def check_v2(const unsigned char[::1] buf not None, Py_ssize_t start, Py_ssize_t stop, object batch):
    """The problem `decode_v2` gives for buf[start:stop] (or None), without building the records: a full scan
    checks every record of every batch this way."""
    cdef V2Cursor c
    cursor_init(&c, buf, start, stop, batch)
    cdef int64_t decoded
    for decoded in range(c.count):
        problem = cursor_step(&c, decoded)
        if problem is not None:
            return problem
    return cursor_end(&c)


# -- record search (`kforensics find`) --------------------------------------------------------------------

#: _pure.MATCHED, _pure.WATCHED
cdef enum:
    MATCHED = 1
    WATCHED = 2

ctypedef struct KeyTable:
    # A set of byte strings: open addressing, linear probing. hashes[i] 0: empty slot, 1: a removed key's slot;
    # a key's hash is never 0 or 1. keys[i] holds a reference to the bytes object of a used slot.
    uint64_t *hashes
    PyObject **keys
    Py_ssize_t cap  # a power of two (0: nothing allocated)
    Py_ssize_t n  # keys held
    Py_ssize_t used  # slots not empty (keys and removed keys)


cdef inline uint64_t _key_hash(const unsigned char *p, Py_ssize_t n) noexcept nogil:
    """FNV-1a, 64 bits, never 0 or 1 (those mark empty and removed slots)."""
    cdef uint64_t h = 14695981039346656037ULL
    cdef Py_ssize_t i
    for i in range(n):
        h = (h ^ p[i]) * 1099511628211ULL
    return h if h > 1 else h + 2


cdef inline bint _same(PyObject *key, const unsigned char *p, Py_ssize_t n) noexcept:
    return PyBytes_GET_SIZE(<object>key) == n and (n == 0 or memcmp(PyBytes_AS_STRING(<object>key), p, n) == 0)


cdef Py_ssize_t _slot(KeyTable *t, const unsigned char *p, Py_ssize_t n, uint64_t h) noexcept:
    """The slot of the key p[0:n] (hash h), or -1."""
    cdef Py_ssize_t mask = t.cap - 1
    cdef Py_ssize_t i = <Py_ssize_t>(h & <uint64_t>mask)
    while t.hashes[i] != 0:
        if t.hashes[i] == h and _same(t.keys[i], p, n):
            return i
        i = (i + 1) & mask
    return -1


cdef inline bint _holds(KeyTable *t, const unsigned char *p, Py_ssize_t n) noexcept:
    if t.n == 0:
        return False
    return _slot(t, p, n, _key_hash(p, n)) >= 0


cdef int _grow_table(KeyTable *t) except -1:
    """Rehash the keys into a table twice as large (at least 8 slots), without the removed keys' slots."""
    cdef Py_ssize_t cap = t.cap * 2 if t.cap else 8
    while cap < 4 * (t.n + 1):
        cap *= 2
    cdef uint64_t *hashes = <uint64_t *>PyMem_Calloc(cap, sizeof(uint64_t))
    cdef PyObject **keys = <PyObject **>PyMem_Calloc(cap, sizeof(PyObject *))
    if hashes == NULL or keys == NULL:
        PyMem_Free(hashes)
        PyMem_Free(keys)
        raise MemoryError()
    cdef Py_ssize_t i, j
    cdef Py_ssize_t mask = cap - 1
    for i in range(t.cap):
        if t.hashes[i] > 1:
            j = <Py_ssize_t>(t.hashes[i] & <uint64_t>mask)
            while hashes[j] != 0:
                j = (j + 1) & mask
            hashes[j] = t.hashes[i]
            keys[j] = t.keys[i]
    PyMem_Free(t.hashes)
    PyMem_Free(t.keys)
    t.hashes, t.keys, t.cap, t.used = hashes, keys, cap, t.n
    return 0


cdef int _add(KeyTable *t, bytes key) except -1:
    cdef const unsigned char *p = <const unsigned char *>PyBytes_AS_STRING(key)
    cdef Py_ssize_t n = PyBytes_GET_SIZE(key)
    cdef uint64_t h = _key_hash(p, n)
    if t.n and _slot(t, p, n, h) >= 0:
        return 0
    if 2 * (t.used + 1) > t.cap:
        _grow_table(t)
    cdef Py_ssize_t mask = t.cap - 1
    cdef Py_ssize_t i = <Py_ssize_t>(h & <uint64_t>mask)
    while t.hashes[i] > 1:
        i = (i + 1) & mask
    if t.hashes[i] == 0:
        t.used += 1
    t.hashes[i] = h
    Py_INCREF(key)
    t.keys[i] = <PyObject *>key
    t.n += 1
    return 0


cdef void _remove(KeyTable *t, bytes key):
    if t.n == 0:
        return
    cdef const unsigned char *p = <const unsigned char *>PyBytes_AS_STRING(key)
    cdef Py_ssize_t n = PyBytes_GET_SIZE(key)
    cdef Py_ssize_t i = _slot(t, p, n, _key_hash(p, n))
    if i < 0:
        return
    t.hashes[i] = 1
    Py_DECREF(<object>t.keys[i])
    t.keys[i] = NULL
    t.n -= 1


cdef void _free_table(KeyTable *t):
    cdef Py_ssize_t i
    for i in range(t.cap):
        if t.hashes[i] > 1:
            Py_DECREF(<object>t.keys[i])
    PyMem_Free(t.hashes)
    PyMem_Free(t.keys)
    t.hashes = NULL
    t.keys = NULL
    t.cap = t.n = t.used = 0


cdef inline bint _contains(const unsigned char *hay, Py_ssize_t n, const unsigned char *needle,
                           Py_ssize_t m) noexcept nogil:
    """Whether needle[0:m] occurs in hay[0:n] (an empty needle occurs in anything)."""
    cdef const unsigned char *at
    cdef const unsigned char *last
    if m == 0:
        return True
    if m > n:
        return False
    last = hay + (n - m)
    at = hay
    while at <= last:
        at = <const unsigned char *>memchr(at, needle[0], <size_t>(last - at + 1))
        if at == NULL:
            return False
        if memcmp(at, needle, <size_t>m) == 0:
            return True
        at += 1
    return False


cdef class RecordMatcher:
    """`_pure.RecordMatcher` in C: the query is applied to each record as it is decoded, and a record is built
    only when it matches or its key is watched."""

    cdef KeyTable query_keys
    cdef KeyTable watched_keys
    cdef bint any_key
    cdef bytes header_name_utf8
    cdef str header_name
    cdef bint name_has_replacement  # a name with U+FFFD can be what an undecodable header name decodes to
    cdef bytes header_value
    cdef bytes value_contains
    cdef bint has_from, has_to
    cdef int64_t from_time, to_time

    def __init__(self, keys=None, header_name=None, header_value=None, value_contains=None, from_time=None,
                 to_time=None):
        self.any_key = keys is None
        if keys is not None:
            for key in keys:
                _add(&self.query_keys, bytes(key))
        self.header_name = header_name
        self.header_name_utf8 = None if header_name is None else header_name.encode("utf-8", "surrogatepass")
        self.name_has_replacement = header_name is not None and "\ufffd" in header_name
        self.header_value = None if header_value is None else bytes(header_value)
        self.value_contains = None if value_contains is None else bytes(value_contains)
        self.has_from = from_time is not None
        self.has_to = to_time is not None
        self.from_time = from_time if self.has_from else 0
        self.to_time = to_time if self.has_to else 0

    def __dealloc__(self):
        _free_table(&self.query_keys)
        _free_table(&self.watched_keys)

    def watch(self, key):
        _add(&self.watched_keys, bytes(key))

    def unwatch(self, key):
        _remove(&self.watched_keys, bytes(key))

    def watched(self):
        """How many keys are watched."""
        return self.watched_keys.n

    cdef bint _header_matches(self, const unsigned char *name, Py_ssize_t name_len, const unsigned char *value,
                              int64_t value_len):
        cdef Py_ssize_t want = PyBytes_GET_SIZE(self.header_name_utf8)
        cdef bint named = want == name_len and (want == 0 or memcmp(
            PyBytes_AS_STRING(self.header_name_utf8), name, <size_t>want) == 0)
        if not named and self.name_has_replacement:
            named = PyUnicode_DecodeUTF8(<const char *>name, name_len, "replace") == self.header_name
        if not named:
            return False
        if self.header_value is None:
            return True
        want = PyBytes_GET_SIZE(self.header_value)
        return value_len == want and (want == 0 or memcmp(PyBytes_AS_STRING(self.header_value), value,
                                                          <size_t>want) == 0)

    cdef bint _has_header(self, V2Cursor *c):
        """Whether the record just read has the header asked for (its bytes were checked by cursor_next())."""
        cdef Py_ssize_t i = c.headers_start
        cdef int64_t k, klen, vlen
        cdef const unsigned char *name
        for k in range(c.header_count):
            varint(c.d, c.n, &i, &klen)
            name = c.d + i
            i += klen
            varint(c.d, c.n, &i, &vlen)
            if self._header_matches(name, klen, c.d + i, vlen):
                return True
            if vlen > 0:
                i += vlen
        return False

    cdef int _flags(self, V2Cursor *c, bint query):
        cdef int out = 0
        cdef const unsigned char *key = c.d + c.key_start
        cdef int64_t ts
        if c.key_len >= 0 and self.watched_keys.n and _holds(&self.watched_keys, key, c.key_len):
            out = WATCHED
        if not query:
            return out
        if not self.any_key and (c.key_len < 0 or not _holds(&self.query_keys, key, c.key_len)):
            return out
        if self.value_contains is not None and (c.value_len < 0 or not _contains(
                c.d + c.value_start, c.value_len, <const unsigned char *>PyBytes_AS_STRING(self.value_contains),
                PyBytes_GET_SIZE(self.value_contains))):
            return out
        if self.has_from or self.has_to:
            ts = record_timestamp(c)
            if (self.has_from and ts < self.from_time) or (self.has_to and ts > self.to_time):
                return out
        if self.header_name is not None and not self._has_header(c):
            return out
        return out | MATCHED

    def flags(self, bytes key, bytes value, headers, int64_t timestamp):
        """MATCHED and/or WATCHED for a record's fields (0: neither): the legacy messages' path."""
        out = WATCHED if key is not None and self.watched_keys.n and _holds(
            &self.watched_keys, <const unsigned char *>PyBytes_AS_STRING(key), PyBytes_GET_SIZE(key)) else 0
        if not self.any_key and (key is None or not _holds(
                &self.query_keys, <const unsigned char *>PyBytes_AS_STRING(key), PyBytes_GET_SIZE(key))):
            return out
        if self.value_contains is not None and (value is None or self.value_contains not in value):
            return out
        if (self.has_from and timestamp < self.from_time) or (self.has_to and timestamp > self.to_time):
            return out
        if self.header_name is not None and not any(
                name == self.header_name and (self.header_value is None or v == self.header_value)
                for name, v in headers):
            return out
        return out | MATCHED

    def match_v2(self, const unsigned char[::1] buf not None, Py_ssize_t start, Py_ssize_t stop, object batch,
                 object record_type, bint query=True):
        """The records of buf[start:stop] that match the query (`query`: else none does) or whose key is
        watched, as (flags, record) in offset order, and the problem that ended the section, exactly as
        `_pure.RecordMatcher.match_v2`."""
        cdef V2Cursor c
        cursor_init(&c, buf, start, stop, batch)
        cdef list out = []
        cdef int64_t decoded
        cdef int f
        for decoded in range(c.count):
            problem = cursor_step(&c, decoded)
            if problem is not None:
                return out, problem
            f = self._flags(&c, query)
            if not f:
                continue
            r = kf_alloc_tuple(record_type, 10)
            _put(r, 0, record_offset(&c))
            _put(r, 1, record_timestamp(&c))
            _put(r, 2, record_sequence(&c))
            _put(r, 3, _bytes_or_none(c.d, c.key_start, c.key_len))
            _put(r, 4, _bytes_or_none(c.d, c.value_start, c.value_len))
            _put(r, 5, _headers(&c))
            _put(r, 6, None)
            _put(r, 7, None)
            _put(r, 8, None)
            _put(r, 9, None)
            kf_untrack(r)
            hit = (f, r)
            kf_untrack(hit)
            out.append(hit)
        return out, cursor_end(&c)
