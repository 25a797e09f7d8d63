# cython: language_level=3
"""What every compiled module shares: the v2 batch and record layouts, the byte helpers and the v2 record cursor.

Declarations and inline functions only (compiled into each module that cimports them; nothing is imported at
run time). The layouts are the ones of `_pure.py` (V2_HEADER, V2_MIN_BATCH_LENGTH, MAX_BATCH_SIZE); the problem
codes are `_pure.RecordProblem`'s, and `record_batch.record_problem_finding` builds every record finding's message.
"""

from libc.stdint cimport int16_t, int32_t, int64_t, uint32_t, uint64_t


cdef extern from "_core_helpers.h":
    object kf_alloc_tuple(object type, Py_ssize_t n)
    void kf_untrack(object o)
    int64_t kf_be64(const unsigned char *p) nogil
    int32_t kf_be32(const unsigned char *p) nogil
    int16_t kf_be16(const unsigned char *p) nogil
    int64_t kf_add64(int64_t a, int64_t b) nogil
    Py_ssize_t kf_first_nonzero(const unsigned char *p, Py_ssize_t n) nogil


#: CRC-32C(crc, bytes, length): the one implementation, `_crc.pyx`'s, handed to the other modules in a capsule.
ctypedef uint32_t (*crc32c_fn)(uint32_t crc, const unsigned char *p, size_t n) noexcept nogil


cdef enum:
    V2_HEADER_SIZE = 61  # baseOffset .. recordsCount
    V2_CRC_START = 21  # the CRC covers attributes .. the end of the batch
    V2_MIN_BATCH_LENGTH = 49  # batchLength of an empty batch: the header after baseOffset and batchLength
    MAX_BATCH_SIZE = 1 << 30
    INT32_MAX = 2147483647


# What ends the reading of a batch's records: _pure.RecordProblem (same numbers).
cdef enum:
    RECORDS_MISSING = 1  # fewer records than declared (value: -)
    TRAILING_BYTES = 2  # bytes after the declared records (value: how many)
    VARINT_PAST_END = 3
    VARINT_TOO_LONG = 4  # value: the varint's maximum length
    RECORD_LENGTH = 5  # value: the declared length
    KEY_OVERRUN = 6  # value: the key length
    VALUE_OVERRUN = 7  # value: the value length
    HEADER_COUNT = 8  # value: the header count
    HEADER_KEY_OVERRUN = 9
    HEADER_VALUE_OVERRUN = 10
    LENGTH_DISAGREES = 11  # value: the declared length


cdef inline int varint(const unsigned char *d, Py_ssize_t n, Py_ssize_t *i, int64_t *out) noexcept nogil:
    """A zigzag varint of at most 5 bytes (Kafka's int32 varint; higher bits are dropped, as Java does): 0, or
    VARINT_PAST_END / VARINT_TOO_LONG."""
    cdef uint32_t raw = 0
    cdef int shift = 0
    cdef unsigned char b
    cdef Py_ssize_t j = i[0]
    while shift <= 28:
        if j >= n:
            return VARINT_PAST_END
        b = d[j]
        j += 1
        raw |= (<uint32_t>(b & 0x7F)) << shift
        if b < 0x80:
            i[0] = j
            out[0] = <int32_t>((raw >> 1) ^ (<uint32_t>0 - (raw & 1)))
            return 0
        shift += 7
    return VARINT_TOO_LONG


cdef inline int varlong(const unsigned char *d, Py_ssize_t n, Py_ssize_t *i, int64_t *out) noexcept nogil:
    """A zigzag varint of at most 10 bytes (Kafka's int64 varlong)."""
    cdef uint64_t raw = 0
    cdef int shift = 0
    cdef unsigned char b
    cdef Py_ssize_t j = i[0]
    while shift <= 63:
        if j >= n:
            return VARINT_PAST_END
        b = d[j]
        j += 1
        raw |= (<uint64_t>(b & 0x7F)) << shift
        if b < 0x80:
            i[0] = j
            out[0] = <int64_t>((raw >> 1) ^ (<uint64_t>0 - (raw & 1)))
            return 0
        shift += 7
    return VARINT_TOO_LONG


ctypedef struct V2Cursor:
    # Decoding state of one batch's (decompressed) records section; cursor_next() reads one record's fields.
    const unsigned char *d
    Py_ssize_t n
    Py_ssize_t i
    int64_t decoded  # the number of the record being read
    int64_t offset_delta
    int64_t ts_delta
    Py_ssize_t key_start, value_start, headers_start, end
    int64_t key_len, value_len, header_count
    int problem  # a problem code when cursor_next() returns 2
    int64_t problem_value
    # the batch's fields the records are computed from
    int64_t base_offset, base_timestamp, max_timestamp, base_sequence, count, position, producer_id
    int32_t producer_epoch
    bint log_append_time, is_control


cdef inline int cursor_init(V2Cursor *c, const unsigned char[::1] buf, Py_ssize_t start, Py_ssize_t stop,
                            object batch) except -1:
    """A cursor over buf[start:stop], the (decompressed) records section of v2 `batch` (a RecordBatch)."""
    c.base_offset = batch.base_offset
    c.base_timestamp = batch.base_timestamp
    c.max_timestamp = batch.max_timestamp
    c.base_sequence = batch.base_sequence
    c.count = batch.count
    c.position = batch.position
    c.producer_id = batch.producer_id
    c.producer_epoch = batch.producer_epoch
    c.log_append_time = batch.timestamp_type == "LogAppendTime"
    c.is_control = batch.is_control
    cdef Py_ssize_t n = buf.shape[0]
    if stop > n:
        stop = n
    if start < 0 or start > stop:
        raise ValueError("records section outside the buffer")
    c.d = (&buf[0] + start) if n else NULL
    c.n = stop - start
    c.i = 0
    c.decoded = 0
    c.problem = 0
    c.problem_value = 0
    return 0


cdef inline int _fail(V2Cursor *c, int problem, int64_t value) noexcept nogil:
    c.problem = problem
    c.problem_value = value
    return 2


cdef inline int _varint_fail(V2Cursor *c, int status, int max_bytes) noexcept nogil:
    return _fail(c, status, max_bytes if status == VARINT_TOO_LONG else 0)


cdef inline int cursor_next(V2Cursor *c) noexcept nogil:
    """Reads record number `c.decoded`: 0 a record was read; 1 no bytes left; 2 a malformed record (c.problem
    and c.problem_value say why)."""
    cdef int64_t length, v
    cdef int status
    cdef Py_ssize_t i = c.i
    cdef const unsigned char *d = c.d
    cdef Py_ssize_t n = c.n
    cdef int64_t k
    if i >= n:
        return 1
    status = varint(d, n, &i, &length)
    if status:
        return _varint_fail(c, status, 5)
    c.end = i + length
    if length < 6 or c.end > n:
        return _fail(c, RECORD_LENGTH, length)
    i += 1  # attributes: unused
    status = varlong(d, n, &i, &c.ts_delta)
    if status:
        return _varint_fail(c, status, 10)
    status = varint(d, n, &i, &c.offset_delta)
    if status:
        return _varint_fail(c, status, 5)
    status = varint(d, n, &i, &c.key_len)
    if status:
        return _varint_fail(c, status, 5)
    c.key_start = i
    if c.key_len != -1:
        if c.key_len < 0 or i + c.key_len > c.end:
            return _fail(c, KEY_OVERRUN, c.key_len)
        i += c.key_len
    status = varint(d, n, &i, &c.value_len)
    if status:
        return _varint_fail(c, status, 5)
    c.value_start = i
    if c.value_len != -1:
        if c.value_len < 0 or i + c.value_len > c.end:
            return _fail(c, VALUE_OVERRUN, c.value_len)
        i += c.value_len
    status = varint(d, n, &i, &c.header_count)
    if status:
        return _varint_fail(c, status, 5)
    if c.header_count < 0 or c.header_count > (c.end - i if c.end > i else 0):
        return _fail(c, HEADER_COUNT, c.header_count)
    c.headers_start = i
    for k in range(c.header_count):
        status = varint(d, n, &i, &v)
        if status:
            return _varint_fail(c, status, 5)
        if v < 0 or i + v > c.end:
            return _fail(c, HEADER_KEY_OVERRUN, 0)
        i += v
        status = varint(d, n, &i, &v)
        if status:
            return _varint_fail(c, status, 5)
        if v >= 0:
            if i + v > c.end:
                return _fail(c, HEADER_VALUE_OVERRUN, 0)
            i += v
    if i != c.end:
        return _fail(c, LENGTH_DISAGREES, length)
    c.i = i
    return 0


cdef inline object cursor_step(V2Cursor *c, int64_t decoded):
    """Reads record number `decoded`: None, or the problem that ends the batch's records, as the tuple
    (code, record number, value) that record_batch.record_problem_finding turns into a finding."""
    c.decoded = decoded
    cdef int status = cursor_next(c)
    if status == 1:
        return (RECORDS_MISSING, decoded, 0)
    if status == 2:
        return (c.problem, decoded, c.problem_value)
    return None


cdef inline object cursor_end(V2Cursor *c):
    """After the declared records: None, or the TRAILING_BYTES problem."""
    if c.i != c.n:
        return (TRAILING_BYTES, c.count, c.n - c.i)
    return None


cdef inline int64_t record_offset(V2Cursor *c) noexcept nogil:
    """The offset of the record just read (Java's long wrap-around)."""
    return kf_add64(c.base_offset, c.offset_delta)


cdef inline int64_t record_timestamp(V2Cursor *c) noexcept nogil:
    """The timestamp of the record just read: the batch's max timestamp under LogAppendTime."""
    if c.log_append_time:
        return c.max_timestamp
    return kf_add64(c.base_timestamp, c.ts_delta)


cdef inline int64_t record_sequence(V2Cursor *c) noexcept nogil:
    """The sequence of the record just read (-1 without one; wraps as DefaultRecordBatch.incrementSequence)."""
    cdef int64_t sequence
    if c.base_sequence < 0:
        return -1
    sequence = c.base_sequence + c.offset_delta
    if sequence > INT32_MAX:
        sequence -= <int64_t>INT32_MAX + 1
    return sequence
