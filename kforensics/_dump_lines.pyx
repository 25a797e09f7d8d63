# cython: language_level=3, boundscheck=False, wraparound=False, cdivision=True, initializedcheck=False
"""`kforensics dump`'s compiled line formatter: kafka-dump-log text or JSON lines of v2 batches and their
records, formatted in C into one growing buffer; exactly the bytes `dump_out.TextOut` / `JsonOut` write.

It reads records with the reader's cursor (parsers/_layouts.pxd) and knows nothing of findings: it returns
the reader's problem tuple, which `record_batch.record_problem_finding` turns into the finding.
"""

from cpython.bytes cimport PyBytes_FromStringAndSize
from cpython.unicode cimport PyUnicode_AsUTF8AndSize, PyUnicode_DecodeUTF8
from libc.stdint cimport int64_t, uint64_t
from libc.stdlib cimport free, malloc, realloc
from libc.string cimport memcpy

from _layouts cimport (V2Cursor, cursor_end, cursor_init, cursor_step, record_offset, record_sequence,
                       record_timestamp, varint)

import binascii as _binascii

#: The contract with parsers/core.py (CORE_API_VERSION there): bump both when a signature changes.
API_VERSION = 3


# How a batch field's value is written: kforensics/dump_out.py's WRITE_* (the same numbers).
cdef enum:
    WRITE_INT = 0
    WRITE_BOOL = 1
    WRITE_STR = 2  # escaped in JSON
    WRITE_NULLABLE = 3  # JSON null, text Java's OptionalLong

ctypedef struct Step:
    # One step of a batch line: a literal, then (unless `index` is -1) the value of the RecordBatch field at `index`.
    const char *literal
    Py_ssize_t literal_len
    Py_ssize_t index
    int how


cdef class DumpLines:
    """Lines of `kforensics dump` for v2 batches and their records, formatted into one growing buffer; exactly
    the bytes `dump_out.TextOut` / `JsonOut` write (UTF-8) for the same batches and records when neither
    --iso-time, --skip-record-metadata nor a decoder is given, and for non-control records. The batch lines follow
    `layout` (dump_out.batch_layout: each field by name, from the batch fields' declaration)."""

    cdef char *buf
    cdef Py_ssize_t n, cap
    cdef bint json
    cdef bint print_data
    cdef Step *steps[2]  # a v2 batch's line, a legacy message's
    cdef Py_ssize_t n_steps[2]
    cdef list literals  # the steps' literals, kept alive
    cdef Py_ssize_t magic_index, width

    def __cinit__(self, bint json, bint print_data, object layout):
        self.json = json
        self.print_data = print_data
        self.literals = []
        self.magic_index = layout.magic
        self.width = layout.width
        if not 0 <= self.magic_index < self.width:
            raise ValueError("the layout's magic index is not a field of its batches")
        cdef Py_ssize_t k, i
        for k, steps in enumerate((layout.v2, layout.legacy)):
            self.steps[k] = <Step *>malloc(max(len(steps), 1) * sizeof(Step))
            if self.steps[k] == NULL:
                raise MemoryError()
            for i, (literal, index, how) in enumerate(steps):
                if not -1 <= index < self.width or how not in (WRITE_INT, WRITE_BOOL, WRITE_STR, WRITE_NULLABLE):
                    raise ValueError(f"a layout step names field {index} of {self.width}, written as {how}")
                literal = bytes(literal)
                self.literals.append(literal)
                self.steps[k][i].literal = literal
                self.steps[k][i].literal_len = len(literal)
                self.steps[k][i].index = index
                self.steps[k][i].how = how
                self.n_steps[k] = i + 1

    def __dealloc__(self):
        free(self.buf)
        free(self.steps[0])
        free(self.steps[1])

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
        """A JSON string of valid UTF-8 bytes, escaped as kforensics.render.json_line does: json.dumps's escapes, and
        the characters a terminal would obey or hide as \\u escapes (the same string once decoded)."""
        cdef unsigned char c
        cdef const char *hexdigits = "0123456789abcdef"
        self._reserve(n * 6 + 2)
        cdef char *o = self.buf + self.n
        o[0] = 34
        o += 1
        cdef Py_ssize_t i = 0, width
        cdef unsigned int code
        while i < n:
            c = p[i]
            i += 1
            if c == 34 or c == 92:
                o[0] = 92
                o[1] = c
                o += 2
            elif c >= 0x7f:
                width = _json_hidden(p + i - 1, n - i + 1, &code)
                if width:
                    i += width - 1
                    o[0] = 92; o[1] = 117
                    o[2] = hexdigits[code >> 12]; o[3] = hexdigits[(code >> 8) & 15]
                    o[4] = hexdigits[(code >> 4) & 15]; o[5] = hexdigits[code & 15]
                    o += 6
                else:
                    o[0] = c
                    o += 1
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
        """One batch line (any magic; batch header fields only). `b` is a RecordBatch: each field is written from the
        index the layout gives its name."""
        if not isinstance(b, tuple) or len(b) != self.width:
            raise ValueError("not a RecordBatch")
        cdef tuple t = <tuple>b  # a NamedTuple is a tuple subclass: the exact-type check of `cdef tuple t = b` fails
        cdef Py_ssize_t k = 0 if t[self.magic_index] >= 2 else 1
        cdef Step *step
        cdef Py_ssize_t i
        for i in range(self.n_steps[k]):
            step = &self.steps[k][i]
            self._raw(step.literal, step.literal_len)
            if step.index < 0:
                continue
            value = t[step.index]
            if step.how == WRITE_INT:
                self._int(value)
            elif step.how == WRITE_BOOL:
                self._bool(value)
            elif step.how == WRITE_STR:
                if self.json:
                    self._json_str(value)
                else:
                    self._str(value)
            elif value is None:
                if self.json:
                    self._raw("null", 4)
                else:
                    self._raw("OptionalLong.empty", 18)
            elif self.json:
                self._int(value)
            else:
                self._raw("OptionalLong[", 13)
                self._int(value)
                self._raw("]", 1)

    cdef int _json_str(self, str s) except -1:
        cdef Py_ssize_t size
        cdef const char *p = PyUnicode_AsUTF8AndSize(s, &size)
        return self._json_escaped(<const unsigned char *>p, size)

    def records_v2(self, const unsigned char[::1] buf not None, Py_ssize_t start, Py_ssize_t stop, object batch,
                   int64_t last_offset):
        """The record lines of a non-control v2 batch's (decompressed) records section.

        Returns (problem, last record offset, non-consecutive pairs): the problem the reader's `decode_v2` would
        return (or None), the offset of the last record read (`last_offset` when none), and each (previous,
        next) pair of record offsets that do not follow each other (-1 as the previous offset starts no pair)."""
        cdef V2Cursor c
        cursor_init(&c, buf, start, stop, batch)
        cdef bytes ts_label = (" LogAppendTime: " if c.log_append_time else " CreateTime: ").encode("ascii")
        cdef int64_t decoded, offset, sequence, k, klen, vlen
        cdef Py_ssize_t i
        cdef list gaps = []
        cdef bint first_header
        if batch.is_control:
            raise ValueError("control batches take the Python renderer")
        for decoded in range(c.count):
            problem = cursor_step(&c, decoded)
            if problem is not None:
                return problem, last_offset, gaps
            offset = record_offset(&c)
            if last_offset != -1 and (last_offset == 9223372036854775807 or offset != last_offset + 1):
                gaps.append((last_offset, offset))
            last_offset = offset
            sequence = record_sequence(&c)
            if self.json:
                self._raw("{\"type\":\"record\",\"offset\":", 26); self._int(offset)
                self._raw(",\"timestamp\":", 13)
                self._int(record_timestamp(&c))
                self._raw(",\"sequence\":", 12); self._int(sequence)
                self._raw(",\"key_size\":", 12); self._int(c.key_len)
                self._raw(",\"value_size\":", 14); self._int(c.value_len)
                self._raw(",\"header_keys\":[", 16)
            else:
                self._raw("| offset: ", 10); self._int(offset)
                self._lit(ts_label)
                self._int(record_timestamp(&c))
                self._raw(" keySize: ", 10); self._int(c.key_len)
                self._raw(" valueSize: ", 12); self._int(c.value_len)
                self._raw(" sequence: ", 11); self._int(sequence)
                self._raw(" headerKeys: [", 14)
            i = c.headers_start
            for k in range(c.header_count):
                if k:
                    self._raw(",", 1)
                varint(c.d, c.n, &i, &klen)
                self._replaced_utf8(c.d + i, klen, self.json)
                i += klen
                varint(c.d, c.n, &i, &vlen)
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
        return cursor_end(&c), last_offset, gaps


cdef inline Py_ssize_t _json_hidden(const unsigned char *p, Py_ssize_t left, unsigned int *code) noexcept nogil:
    """The length of the UTF-8 sequence at `p` when it encodes a character that kforensics.render.json_line writes
    as an escape (DEL, C1 controls, bidirectional and invisible format characters; its code point in `code`),
    else 0."""
    cdef unsigned char a = p[0], b, c
    if a == 0x7f:
        code[0] = 0x7f
        return 1
    if left < 2:
        return 0
    b = p[1]
    if a == 0xc2:
        if 0x80 <= b <= 0x9f or b == 0xad:
            code[0] = b
            return 2
        return 0
    if a == 0xd8:
        if b == 0x9c:
            code[0] = 0x61c
            return 2
        return 0
    if left < 3:
        return 0
    c = p[2]
    if a == 0xe1:
        if b == 0xa0 and c == 0x8e:
            code[0] = 0x180e
            return 3
    elif a == 0xe2:
        if b == 0x80 and (c == 0x8b or c == 0x8e or c == 0x8f or 0xa8 <= c <= 0xae):
            code[0] = 0x2000 | (c & 0x3f)
            return 3
        if b == 0x81 and 0xa0 <= c <= 0xaf:
            code[0] = 0x2040 | (c & 0x3f)
            return 3
    elif a == 0xef:
        if b == 0xbb and c == 0xbf:
            code[0] = 0xfeff
            return 3
        if b == 0xbf and 0xb9 <= c <= 0xbb:
            code[0] = 0xffc0 | (c & 0x3f)
            return 3
    return 0


cdef inline bint _is_ascii(const unsigned char *p, Py_ssize_t n) noexcept nogil:
    cdef Py_ssize_t i
    cdef unsigned char acc = 0
    for i in range(n):
        acc |= p[i]
    return acc < 0x80
