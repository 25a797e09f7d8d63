# cython: language_level=3, boundscheck=False, wraparound=False, cdivision=True, initializedcheck=False
"""The compiled segment reader: batch-header walk with CRC-32C, v2 record decode and check, zero scans.

Each function is one piece of `parsers/_pure.py` (the pure-Python reference, same signatures) and returns
exactly what it returns; `parsers/core.py` binds one or the other and `tests/test_differential.py` holds them
to the same results. Every index into a buffer is checked against the buffer's length before it is read:
indexing runs with Cython's bounds checks off, so the checks below are the only ones.
"""

from cpython.bytes cimport PyBytes_FromStringAndSize
from cpython.pycapsule cimport PyCapsule_GetPointer
from cpython.ref cimport Py_INCREF
from cpython.tuple cimport PyTuple_SET_ITEM
from cpython.unicode cimport PyUnicode_DecodeUTF8
from libc.stdint cimport int16_t, int32_t, int64_t, uint32_t

from _layouts cimport (INT32_MAX, MAX_BATCH_SIZE, V2_CRC_START, V2_HEADER_SIZE, V2_MIN_BATCH_LENGTH, V2Cursor,
                       crc32c_fn, cursor_end, cursor_init, cursor_step, kf_add64, kf_alloc_tuple, kf_be16, kf_be32,
                       kf_be64, kf_first_nonzero, kf_untrack, record_offset, record_sequence, record_timestamp,
                       varint)

from kforensics.parsers._crc import CRC32C as _CRC32C

#: The contract with parsers/core.py (CORE_API_VERSION there): bump both when a signature changes.
API_VERSION = 3

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
