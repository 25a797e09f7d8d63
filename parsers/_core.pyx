# cython: language_level=3, boundscheck=False, wraparound=False, cdivision=True, initializedcheck=False
"""The compiled core of the segment reader: batch-header walk with CRC-32C, v2 record decode, zero scans.

Each function mirrors one piece of the pure-Python reference in `record_batch.py` and returns exactly what
it returns (the same NamedTuples, the same findings, byte for byte); `tests/test_differential.py` holds
them to that. Every index into a buffer is checked against the buffer's length before it is read:
indexing runs with Cython's bounds checks off, so the checks below are the only ones.
"""

from cpython.bytes cimport PyBytes_FromStringAndSize
from cpython.ref cimport Py_INCREF
from cpython.tuple cimport PyTuple_SET_ITEM
from cpython.unicode cimport PyUnicode_DecodeUTF8
from libc.stdint cimport int16_t, int32_t, int64_t, uint32_t, uint64_t


cdef extern from "_crc32c.h":
    void kf_crc_init()
    uint32_t kf_crc32c(uint32_t crc, const unsigned char *p, size_t n) nogil
    const char *kf_crc_implementation()
    int kf_crc_force


cdef extern from "_core_helpers.h":
    object kf_alloc_tuple(object type, Py_ssize_t n)
    void kf_untrack(object o)
    int64_t kf_be64(const unsigned char *p) nogil
    int32_t kf_be32(const unsigned char *p) nogil
    int16_t kf_be16(const unsigned char *p) nogil
    int64_t kf_add64(int64_t a, int64_t b) nogil
    Py_ssize_t kf_first_nonzero(const unsigned char *p, Py_ssize_t n) nogil


kf_crc_init()

#: The contract with record_batch.py (CORE_API_VERSION there): bump both when a signature changes.
API_VERSION = 1

DEF V2_HEADER_SIZE = 61
DEF V2_MIN_BATCH_LENGTH = 49
DEF MAX_BATCH_SIZE = 1 << 30
DEF INT32_MAX = 2147483647

cdef str _CREATE_TIME = "CreateTime"
cdef str _LOG_APPEND_TIME = "LogAppendTime"


def crc32c(const unsigned char[::1] data not None, uint32_t crc=0):
    """CRC-32C of a buffer (hardware when the CPU has SSE4.2)."""
    cdef Py_ssize_t n = data.shape[0]
    if n == 0:
        return kf_crc32c(crc, NULL, 0)
    with nogil:
        crc = kf_crc32c(crc, &data[0], <size_t>n)
    return crc


#: CRC-32C paths, fastest first (force_crc).
CRC_PATHS = ("vpclmulqdq", "sse4.2", "table")


def crc_implementation():
    """The CRC-32C path in use: 'vpclmulqdq', 'sse4.2' or 'table'."""
    return kf_crc_implementation().decode("ascii")


def force_crc(str path):
    """Use at most the given CRC-32C path ('vpclmulqdq' is the fastest the CPU has, then 'sse4.2', 'table');
    returns the path now in use (tests and the fuzzer compare them all)."""
    global kf_crc_force
    kf_crc_force = CRC_PATHS.index(path)
    return crc_implementation()


cdef inline void _put(object t, Py_ssize_t i, object v):
    Py_INCREF(v)
    PyTuple_SET_ITEM(t, i, v)


def walk_v2(const unsigned char[::1] buf not None, Py_ssize_t pos, Py_ssize_t stop, Py_ssize_t end,
            bint verify_crc, object batch_type, tuple codecs, int64_t base=0):
    """Whole, plausible v2 batches from `pos` while `pos < stop`: (batches, next position).

    A batch must fit before `end`; the walk stops at the first position that is not such a batch, and right
    after a batch whose CRC does not match (the caller reports it), exactly as `record_batch._walk_v2_py`.
    buf[0] is byte `base` of the file (a chunk read from it): batch positions are `base + pos`.
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
                crc_valid = kf_crc32c(0, h + 21, <size_t>(size - 21)) == crc
        else:
            crc_valid = True
        if base_sequence < 0:
            last_sequence = -1
        else:
            last_sequence = <int64_t>base_sequence + last_offset_delta
            if last_sequence > INT32_MAX:
                last_sequence -= 2147483648
        b = kf_alloc_tuple(batch_type, 22)
        _put(b, 0, base + pos)
        _put(b, 1, size)
        _put(b, 2, 2)
        _put(b, 3, base_offset)
        _put(b, 4, kf_add64(base_offset, last_offset_delta))
        _put(b, 5, count)
        _put(b, 6, leader_epoch)
        _put(b, 7, producer_id)
        _put(b, 8, producer_epoch)
        _put(b, 9, base_sequence)
        _put(b, 10, last_sequence)
        _put(b, 11, attributes)
        _put(b, 12, codecs[attributes & 7])
        _put(b, 13, _LOG_APPEND_TIME if attributes & 0x08 else _CREATE_TIME)
        _put(b, 14, base_ts)
        _put(b, 15, max_ts)
        _put(b, 16, base_ts if attributes & 0x40 else None)
        _put(b, 17, True if attributes & 0x10 else False)
        _put(b, 18, True if attributes & 0x20 else False)
        _put(b, 19, crc)
        _put(b, 20, True if crc_valid else False)
        _put(b, 21, last_offset_delta)
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

DEF VARINT_OK = 0
DEF VARINT_PAST_END = 1
DEF VARINT_TOO_LONG = 2


cdef inline int _varint(const unsigned char *d, Py_ssize_t n, Py_ssize_t *i, int64_t *out) noexcept nogil:
    """A zigzag varint of at most 5 bytes (Kafka's int32 varint; higher bits are dropped, as Java does)."""
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
            return VARINT_OK
        shift += 7
    return VARINT_TOO_LONG


cdef inline int _varlong(const unsigned char *d, Py_ssize_t n, Py_ssize_t *i, int64_t *out) noexcept nogil:
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
            return VARINT_OK
        shift += 7
    return VARINT_TOO_LONG


cdef str _varint_reason(int status, int max_bytes):
    if status == VARINT_PAST_END:
        return "varint runs past the end of the records"
    return f"varint longer than {max_bytes} bytes"


cdef class _V2Cursor:
    """Decoding state of one batch's records section; `next()` fills the fields of one record."""

    cdef const unsigned char *d
    cdef Py_ssize_t n
    cdef Py_ssize_t i
    cdef int64_t decoded
    cdef int64_t offset_delta
    cdef int64_t ts_delta
    cdef Py_ssize_t key_start, value_start, headers_start, end
    cdef int64_t key_len, value_len, header_count
    cdef str reason

    cdef int next(self) except -1:
        """0: a record was read; 1: no bytes left; 2: a malformed record (`reason` says why)."""
        cdef int64_t length, v
        cdef int status
        cdef Py_ssize_t i = self.i
        cdef const unsigned char *d = self.d
        cdef Py_ssize_t n = self.n
        cdef int64_t k
        if i >= n:
            return 1
        status = _varint(d, n, &i, &length)
        if status:
            self.reason = _varint_reason(status, 5)
            return 2
        self.end = i + length
        if length < 6 or self.end > n:
            self.reason = f"record {self.decoded} declares length {length}"
            return 2
        i += 1  # attributes: unused
        status = _varlong(d, n, &i, &self.ts_delta)
        if status:
            self.reason = _varint_reason(status, 10)
            return 2
        status = _varint(d, n, &i, &self.offset_delta)
        if status:
            self.reason = _varint_reason(status, 5)
            return 2
        status = _varint(d, n, &i, &self.key_len)
        if status:
            self.reason = _varint_reason(status, 5)
            return 2
        self.key_start = i
        if self.key_len != -1:
            if self.key_len < 0 or i + self.key_len > self.end:
                self.reason = f"record {self.decoded} key length {self.key_len} overruns the record"
                return 2
            i += self.key_len
        status = _varint(d, n, &i, &self.value_len)
        if status:
            self.reason = _varint_reason(status, 5)
            return 2
        self.value_start = i
        if self.value_len != -1:
            if self.value_len < 0 or i + self.value_len > self.end:
                self.reason = f"record {self.decoded} value length {self.value_len} overruns the record"
                return 2
            i += self.value_len
        status = _varint(d, n, &i, &self.header_count)
        if status:
            self.reason = _varint_reason(status, 5)
            return 2
        if self.header_count < 0 or self.header_count > max(self.end - i, 0):
            self.reason = f"record {self.decoded} has header count {self.header_count}"
            return 2
        self.headers_start = i
        for k in range(self.header_count):
            status = _varint(d, n, &i, &v)
            if status:
                self.reason = _varint_reason(status, 5)
                return 2
            if v < 0 or i + v > self.end:
                self.reason = f"record {self.decoded} header key overruns the record"
                return 2
            i += v
            status = _varint(d, n, &i, &v)
            if status:
                self.reason = _varint_reason(status, 5)
                return 2
            if v >= 0:
                if i + v > self.end:
                    self.reason = f"record {self.decoded} header value overruns the record"
                    return 2
                i += v
        if i != self.end:
            self.reason = f"record {self.decoded} length {length} disagrees with its fields"
            return 2
        self.i = i
        return 0

    cdef tuple headers(self):
        """The headers of the record just read (its bytes were checked by next())."""
        cdef Py_ssize_t i = self.headers_start
        cdef int64_t k, klen, vlen
        cdef list out
        if self.header_count == 0:
            return ()
        out = []
        for k in range(self.header_count):
            _varint(self.d, self.n, &i, &klen)
            hkey = PyUnicode_DecodeUTF8(<const char *>self.d + i, klen, "replace")
            i += klen
            _varint(self.d, self.n, &i, &vlen)
            if vlen >= 0:
                hvalue = PyBytes_FromStringAndSize(<const char *>self.d + i, vlen)
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


cdef _V2Cursor _cursor(const unsigned char[::1] buf, Py_ssize_t start, Py_ssize_t stop):
    cdef _V2Cursor c = _V2Cursor.__new__(_V2Cursor)
    cdef Py_ssize_t n = buf.shape[0]
    if stop > n:
        stop = n
    if start < 0 or start > stop:
        raise ValueError("records section outside the buffer")
    c.d = (&buf[0] + start) if n else NULL
    c.n = stop - start
    c.i = 0
    c.decoded = 0
    return c


def decode_v2(const unsigned char[::1] buf not None, Py_ssize_t start, Py_ssize_t stop, object batch, str path,
              object record_type, object finding_type, object control):
    """The records of buf[start:stop], a v2 batch's (decompressed) records section: a list of Records, then
    at most one finding, exactly as `record_batch.decode_v2_records` yields them."""
    cdef _V2Cursor c = _cursor(buf, start, stop)
    cdef list out = []
    cdef int64_t base_offset = batch.base_offset
    cdef int64_t base_timestamp = batch.base_timestamp
    cdef int64_t max_timestamp = batch.max_timestamp
    cdef int64_t base_sequence = batch.base_sequence
    cdef bint log_append_time = batch.timestamp_type == "LogAppendTime"
    cdef bint is_control = batch.is_control
    cdef int64_t count = batch.count
    cdef int64_t position = batch.position
    cdef int64_t sequence, decoded
    cdef object key, value, control_type, coordinator_epoch
    for decoded in range(count):
        finding = _next_record(c, decoded, finding_type, path, position, base_offset, count)
        if finding is not None:
            out.append(finding)
            return out
        key = _bytes_or_none(c.d, c.key_start, c.key_len)
        value = _bytes_or_none(c.d, c.value_start, c.value_len)
        if base_sequence >= 0:
            sequence = base_sequence + c.offset_delta
            if sequence > INT32_MAX:
                sequence -= 2147483648
        else:
            sequence = -1
        r = kf_alloc_tuple(record_type, 10)
        _put(r, 0, kf_add64(base_offset, c.offset_delta))
        _put(r, 1, max_timestamp if log_append_time else kf_add64(base_timestamp, c.ts_delta))
        _put(r, 2, sequence)
        _put(r, 3, key)
        _put(r, 4, value)
        _put(r, 5, c.headers())
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
    if c.i != c.n:
        out.append(_trailing_bytes(finding_type, path, position, base_offset, count, c.n - c.i))
    return out


def check_v2(const unsigned char[::1] buf not None, Py_ssize_t start, Py_ssize_t stop, object batch, str path,
             object finding_type):
    """The findings `decode_v2` gives for buf[start:stop] (at most one), without building the records: a full
    scan checks every record of every batch this way."""
    cdef _V2Cursor c = _cursor(buf, start, stop)
    cdef int64_t base_offset = batch.base_offset
    cdef int64_t count = batch.count
    cdef int64_t position = batch.position
    cdef int64_t decoded
    for decoded in range(count):
        finding = _next_record(c, decoded, finding_type, path, position, base_offset, count)
        if finding is not None:
            return [finding]
    if c.i != c.n:
        return [_trailing_bytes(finding_type, path, position, base_offset, count, c.n - c.i)]
    return []


cdef inline object _next_record(_V2Cursor c, int64_t decoded, object finding_type, str path, int64_t position,
                               int64_t base_offset, int64_t count):
    """Reads record number `decoded` into the cursor: None, or the finding that ends the batch's records."""
    c.decoded = decoded
    cdef int status = c.next()
    if status == 1:
        return _fewer_records(finding_type, path, position, base_offset, count, decoded)
    if status == 2:
        return _invalid_record(finding_type, path, position, base_offset, decoded, c.reason)
    return None


cdef object _fewer_records(object finding_type, str path, int64_t position, int64_t base_offset, int64_t count,
                           int64_t decoded):
    return finding_type("record_count_mismatch", path, position,
                        f"batch at byte {position} (base offset {base_offset}) declares {count} records but holds "
                        f"{decoded}", {"declared": count, "decoded": decoded, "base_offset": base_offset})


cdef object _trailing_bytes(object finding_type, str path, int64_t position, int64_t base_offset, int64_t count,
                            int64_t trailing):
    return finding_type("record_count_mismatch", path, position,
                        f"batch at byte {position} (base offset {base_offset}) has {trailing} bytes after its {count} "
                        "declared records", {"declared": count, "trailing_bytes": trailing, "base_offset": base_offset})


cdef object _invalid_record(object finding_type, str path, int64_t position, int64_t base_offset, int64_t decoded,
                            str reason):
    return finding_type("invalid_record", path, position,
                        f"batch at byte {position} (base offset {base_offset}): {reason}",
                        {"base_offset": base_offset, "record_index": decoded, "reason": reason})


# -- record rows in bulk (the scan's executors; columns for Arrow) -----------------------------------------

cdef extern from "_blake2b.h":
    int64_t kf_blake2b_64(const unsigned char *p, size_t n) nogil

from cpython.mem cimport PyMem_Free, PyMem_Realloc


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

    def add_v2(self, const unsigned char[::1] buf not None, Py_ssize_t start, Py_ssize_t stop, object batch,
               str path, object finding_type):
        """Decode buf[start:stop], the (decompressed) records section of v2 `batch`, into rows; returns the
        decoder's findings (the same as `decode_v2`'s), with the rows of the records read before them kept."""
        cdef _V2Cursor c = _cursor(buf, start, stop)
        cdef int64_t base_offset = batch.base_offset
        cdef int64_t base_timestamp = batch.base_timestamp
        cdef int64_t max_timestamp = batch.max_timestamp
        cdef bint log_append_time = batch.timestamp_type == "LogAppendTime"
        cdef int64_t count = batch.count
        cdef int64_t position = batch.position
        cdef int64_t pid = batch.producer_id
        cdef int32_t epoch = batch.producer_epoch
        cdef int64_t decoded
        cdef Py_ssize_t j
        for decoded in range(count):
            finding = _next_record(c, decoded, finding_type, path, position, base_offset, count)
            if finding is not None:
                return [finding]
            self._reserve(1)
            j = self.n
            self.offset[j] = kf_add64(base_offset, c.offset_delta)
            self.timestamp[j] = max_timestamp if log_append_time else kf_add64(base_timestamp, c.ts_delta)
            self.producer_id[j] = pid
            self.producer_epoch[j] = epoch
            self.batch_position[j] = position
            self.key_size[j] = <int32_t>c.key_len
            self.value_size[j] = <int32_t>c.value_len
            with nogil:
                self._hash_into(&self.key_hash[j], c.d + c.key_start, c.key_len)
                self._hash_into(&self.value_hash[j], c.d + c.value_start, c.value_len)
            self.n = j + 1
        if c.i != c.n:
            return [_trailing_bytes(finding_type, path, position, base_offset, count, c.n - c.i)]
        return []

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


# -- dump lines (kforensics dump: kafka-dump-log text or JSON lines) ----------------------------------------

from cpython.unicode cimport PyUnicode_AsUTF8AndSize
from libc.string cimport memcpy
from libc.stdlib cimport free, realloc

cdef extern from "Python.h":
    object PyUnicode_DecodeUTF8Stateful(const char *s, Py_ssize_t size, const char *errors, Py_ssize_t *consumed)

import binascii as _binascii


cdef class DumpLines:
    """Lines of `kforensics dump` for v2 batches and their records, formatted into one growing buffer; exactly
    the bytes `dump_out.TextOut` / `JsonOut` write (UTF-8) for the same batches and records when neither
    --iso-time, --skip-record-metadata nor a decoder is given, and for non-control records."""

    cdef char *buf
    cdef Py_ssize_t n, cap
    cdef bint json
    cdef bint print_data
    cdef bytes file_json

    def __cinit__(self, bint json, bint print_data, str file):
        self.json = json
        self.print_data = print_data
        import json as _json
        self.file_json = _json.dumps(file, ensure_ascii=False).encode("utf-8")

    def __dealloc__(self):
        free(self.buf)

    def __len__(self):
        return self.n

    def take(self):
        """The bytes formatted so far; the buffer starts empty again."""
        out = PyBytes_FromStringAndSize(self.buf, self.n) if self.n else b""
        self.n = 0
        return out

    cdef int _reserve(self, Py_ssize_t extra) except -1:
        cdef Py_ssize_t cap = self.cap
        cdef char *p
        if self.n + extra <= cap:
            return 0
        while cap < self.n + extra:
            cap = cap * 2 if cap else 1 << 20
        p = <char *>realloc(self.buf, cap)
        if p == NULL:
            raise MemoryError()
        self.buf = p
        self.cap = cap
        return 0

    cdef int _raw(self, const char *s, Py_ssize_t n) except -1:
        self._reserve(n)
        memcpy(self.buf + self.n, s, n)
        self.n += n
        return 0

    cdef int _lit(self, bytes s) except -1:
        return self._raw(s, len(s))

    cdef int _int(self, int64_t v) except -1:
        cdef char tmp[24]
        cdef int i = 24
        cdef uint64_t u = (<uint64_t>0 - <uint64_t>v) if v < 0 else <uint64_t>v
        while True:
            i -= 1
            tmp[i] = <char>(48 + u % 10)
            u //= 10
            if u == 0:
                break
        if v < 0:
            i -= 1
            tmp[i] = 45  # '-'
        return self._raw(tmp + i, 24 - i)

    cdef int _bool(self, bint v) except -1:
        if v:
            return self._raw("true", 4)
        return self._raw("false", 5)

    cdef int _str(self, str s) except -1:
        cdef Py_ssize_t size
        cdef const char *p = PyUnicode_AsUTF8AndSize(s, &size)
        return self._raw(p, size)

    cdef int _json_escaped(self, const unsigned char *p, Py_ssize_t n) except -1:
        """A JSON string of valid UTF-8 bytes, escaped as json.dumps(ensure_ascii=False) does."""
        cdef Py_ssize_t i
        cdef unsigned char c
        cdef const char *hexdigits = "0123456789abcdef"
        self._reserve(n * 6 + 2)
        cdef char *o = self.buf + self.n
        o[0] = 34
        o += 1
        for i in range(n):
            c = p[i]
            if c == 34 or c == 92:
                o[0] = 92
                o[1] = c
                o += 2
            elif c >= 0x20:
                o[0] = c
                o += 1
            elif c == 10:
                o[0] = 92; o[1] = 110; o += 2
            elif c == 13:
                o[0] = 92; o[1] = 114; o += 2
            elif c == 9:
                o[0] = 92; o[1] = 116; o += 2
            elif c == 8:
                o[0] = 92; o[1] = 98; o += 2
            elif c == 12:
                o[0] = 92; o[1] = 102; o += 2
            else:
                o[0] = 92; o[1] = 117; o[2] = 48; o[3] = 48
                o[4] = hexdigits[c >> 4]
                o[5] = hexdigits[c & 15]
                o += 6
        o[0] = 34
        o += 1
        self.n = o - self.buf
        return 0

    cdef int _replaced_utf8(self, const unsigned char *p, Py_ssize_t n, bint json) except -1:
        """bytes.decode('utf-8', 'replace'), written as UTF-8 (JSON-escaped when `json`)."""
        cdef Py_ssize_t size
        cdef const char *q
        if _is_ascii(p, n):
            if json:
                return self._json_escaped(p, n)
            return self._raw(<const char *>p, n)
        text = PyUnicode_DecodeUTF8(<const char *>p, n, "replace")
        q = PyUnicode_AsUTF8AndSize(text, &size)
        if json:
            return self._json_escaped(<const unsigned char *>q, size)
        return self._raw(q, size)

    cdef int _json_data(self, const unsigned char *p, int64_t n) except -1:
        """dump_out.data_text(): the UTF-8 text when valid, else "base64:..."; null for None (n == -1)."""
        cdef Py_ssize_t consumed
        if n < 0:
            return self._raw("null", 4)
        if not _is_ascii(p, n):
            try:
                PyUnicode_DecodeUTF8(<const char *>p, n, NULL)
            except UnicodeDecodeError:
                encoded = _binascii.b2a_base64(PyBytes_FromStringAndSize(<const char *>p, n), newline=False)
                self._raw("\"base64:", 8)
                self._lit(encoded)
                return self._raw("\"", 1)
        return self._json_escaped(p, n)

    def batch(self, object b):
        """One batch line (any magic; batch header fields only). `b` is a RecordBatch: its fields are read by
        position."""
        if not isinstance(b, tuple) or len(b) != 22:
            raise ValueError("not a RecordBatch")
        cdef tuple t = <tuple>b  # a NamedTuple is a tuple subclass: the exact-type check of `cdef tuple t = b` fails
        cdef int magic = t[2]
        if self.json:
            self._raw("{\"type\":\"batch\",\"file\":", 23)
            self._lit(self.file_json)
            self._raw(",\"position\":", 12); self._int(t[0])
            self._raw(",\"size\":", 8); self._int(t[1])
            self._raw(",\"magic\":", 9); self._int(magic)
            self._raw(",\"base_offset\":", 15); self._int(t[3])
            self._raw(",\"last_offset\":", 15); self._int(t[4])
            self._raw(",\"count\":", 9); self._int(t[5])
            self._raw(",\"partition_leader_epoch\":", 26); self._int(t[6])
            self._raw(",\"producer_id\":", 15); self._int(t[7])
            self._raw(",\"producer_epoch\":", 18); self._int(t[8])
            self._raw(",\"base_sequence\":", 17); self._int(t[9])
            self._raw(",\"last_sequence\":", 17); self._int(t[10])
            self._raw(",\"is_transactional\":", 20); self._bool(t[17])
            self._raw(",\"is_control\":", 14); self._bool(t[18])
            self._raw(",\"codec\":", 9); self._json_str(t[12])
            self._raw(",\"timestamp_type\":", 18); self._json_str(t[13])
            self._raw(",\"base_timestamp\":", 18); self._int(t[14])
            self._raw(",\"max_timestamp\":", 17); self._int(t[15])
            self._raw(",\"crc\":", 7); self._int(t[19])
            self._raw(",\"crc_valid\":", 13); self._bool(t[20])
            self._raw("}\n", 2)
            return
        if magic >= 2:
            self._raw("baseOffset: ", 12); self._int(t[3])
            self._raw(" lastOffset: ", 13); self._int(t[4])
            self._raw(" count: ", 8); self._int(t[5])
            self._raw(" baseSequence: ", 15); self._int(t[9])
            self._raw(" lastSequence: ", 15); self._int(t[10])
            self._raw(" producerId: ", 13); self._int(t[7])
            self._raw(" producerEpoch: ", 16); self._int(t[8])
            self._raw(" partitionLeaderEpoch: ", 23); self._int(t[6])
            self._raw(" isTransactional: ", 18); self._bool(t[17])
            self._raw(" isControl: ", 12); self._bool(t[18])
            horizon = t[16]
            if horizon is None:
                self._raw(" deleteHorizonMs: OptionalLong.empty", 36)
            else:
                self._raw(" deleteHorizonMs: OptionalLong[", 31); self._int(horizon); self._raw("]", 1)
        else:
            self._raw("offset: ", 8); self._int(t[4])
        self._raw(" position: ", 11); self._int(t[0])
        self._raw(" ", 1); self._str(t[13]); self._raw(": ", 2); self._int(t[15])
        self._raw(" size: ", 7); self._int(t[1])
        self._raw(" magic: ", 8); self._int(magic)
        self._raw(" compresscodec: ", 16); self._str(t[12])
        self._raw(" crc: ", 6); self._int(t[19])
        self._raw(" isvalid: ", 10); self._bool(t[20])
        self._raw("\n", 1)

    cdef int _json_str(self, str s) except -1:
        cdef Py_ssize_t size
        cdef const char *p = PyUnicode_AsUTF8AndSize(s, &size)
        return self._json_escaped(<const unsigned char *>p, size)

    def records_v2(self, const unsigned char[::1] buf not None, Py_ssize_t start, Py_ssize_t stop, object batch,
                   str path, object finding_type, int64_t last_offset):
        """The record lines of a non-control v2 batch's (decompressed) records section.

        Returns (findings, last record offset, non-consecutive pairs): what `decode_v2` would report, the
        offset of the last record read (`last_offset` when none), and each (previous, next) pair of record
        offsets that do not follow each other (-1 as the previous offset starts no pair)."""
        cdef _V2Cursor c = _cursor(buf, start, stop)
        cdef int64_t base_offset = batch.base_offset
        cdef int64_t base_timestamp = batch.base_timestamp
        cdef int64_t max_timestamp = batch.max_timestamp
        cdef int64_t base_sequence = batch.base_sequence
        cdef bint log_append_time = batch.timestamp_type == "LogAppendTime"
        cdef int64_t count = batch.count
        cdef int64_t position = batch.position
        cdef bytes ts_label = (" LogAppendTime: " if log_append_time else " CreateTime: ").encode("ascii")
        cdef int64_t decoded, offset, sequence, k, klen, vlen
        cdef Py_ssize_t i
        cdef list gaps = []
        cdef bint first_header
        if batch.is_control:
            raise ValueError("control batches take the Python renderer")
        for decoded in range(count):
            finding = _next_record(c, decoded, finding_type, path, position, base_offset, count)
            if finding is not None:
                return [finding], last_offset, gaps
            offset = kf_add64(base_offset, c.offset_delta)
            if last_offset != -1 and (last_offset == 9223372036854775807 or offset != last_offset + 1):
                gaps.append((last_offset, offset))
            last_offset = offset
            if base_sequence >= 0:
                sequence = base_sequence + c.offset_delta
                if sequence > INT32_MAX:
                    sequence -= 2147483648
            else:
                sequence = -1
            if self.json:
                self._raw("{\"type\":\"record\",\"offset\":", 26); self._int(offset)
                self._raw(",\"timestamp\":", 13)
                self._int(max_timestamp if log_append_time else kf_add64(base_timestamp, c.ts_delta))
                self._raw(",\"sequence\":", 12); self._int(sequence)
                self._raw(",\"key_size\":", 12); self._int(c.key_len)
                self._raw(",\"value_size\":", 14); self._int(c.value_len)
                self._raw(",\"header_keys\":[", 16)
            else:
                self._raw("| offset: ", 10); self._int(offset)
                self._lit(ts_label)
                self._int(max_timestamp if log_append_time else kf_add64(base_timestamp, c.ts_delta))
                self._raw(" keySize: ", 10); self._int(c.key_len)
                self._raw(" valueSize: ", 12); self._int(c.value_len)
                self._raw(" sequence: ", 11); self._int(sequence)
                self._raw(" headerKeys: [", 14)
            i = c.headers_start
            for k in range(c.header_count):
                if k:
                    self._raw(",", 1)
                _varint(c.d, c.n, &i, &klen)
                self._replaced_utf8(c.d + i, klen, self.json)
                i += klen
                _varint(c.d, c.n, &i, &vlen)
                if vlen > 0:
                    i += vlen
            if self.json:
                self._raw("],\"control_type\":null,\"coordinator_epoch\":null", 46)
                if self.print_data:
                    self._raw(",\"key\":", 7)
                    self._json_data(c.d + c.key_start, c.key_len)
                    self._raw(",\"value\":", 9)
                    self._json_data(c.d + c.value_start, c.value_len)
                self._raw("}\n", 2)
            else:
                self._raw("]", 1)
                if self.print_data:
                    if c.key_len >= 0:
                        self._raw(" key: ", 6)
                        self._replaced_utf8(c.d + c.key_start, c.key_len, False)
                    if c.value_len >= 0:
                        self._raw(" payload: ", 10)
                        self._replaced_utf8(c.d + c.value_start, c.value_len, False)
                self._raw("\n", 1)
        if c.i != c.n:
            return [_trailing_bytes(finding_type, path, position, base_offset, count, c.n - c.i)], last_offset, gaps
        return [], last_offset, gaps


cdef inline bint _is_ascii(const unsigned char *p, Py_ssize_t n) noexcept nogil:
    cdef Py_ssize_t i
    cdef unsigned char acc = 0
    for i in range(n):
        acc |= p[i]
    return acc < 0x80
