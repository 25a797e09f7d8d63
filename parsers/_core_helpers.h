/* Small C helpers the Cython core cannot spell itself. */
#ifndef KF_CORE_HELPERS_H
#define KF_CORE_HELPERS_H

#include <Python.h>
#include <stdint.h>
#include <string.h>

/* A new instance of a tuple subclass (a NamedTuple) with n empty slots, to be filled with PyTuple_SET_ITEM:
 * what tuple.__new__(cls, items) does, without building the intermediate tuple. */
static PyObject *kf_alloc_tuple(PyObject *type, Py_ssize_t n) {
    PyTypeObject *t = (PyTypeObject *)type;
    return t->tp_alloc(t, n);
}

/* Stop the cycle collector from tracking a fresh tuple that holds only immutable, untracked values (ints,
 * str, bytes, None, bools, or tuples already untracked): it cannot be part of a cycle, and millions of
 * tracked batches and records would make the collector walk them again and again. */
static void kf_untrack(PyObject *o) {
    if (PyObject_GC_IsTracked(o)) PyObject_GC_UnTrack(o);
}

static inline int64_t kf_be64(const unsigned char *p) {
    uint64_t v;
    memcpy(&v, p, 8);
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
    v = __builtin_bswap64(v);
#endif
    return (int64_t)v;
}

static inline int32_t kf_be32(const unsigned char *p) {
    uint32_t v;
    memcpy(&v, p, 4);
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
    v = __builtin_bswap32(v);
#endif
    return (int32_t)v;
}

static inline int16_t kf_be16(const unsigned char *p) {
    return (int16_t)(((uint16_t)p[0] << 8) | p[1]);
}

/* Two's-complement wrap-around addition, as Java's long arithmetic does. */
static inline int64_t kf_add64(int64_t a, int64_t b) {
    return (int64_t)((uint64_t)a + (uint64_t)b);
}

/* Index of the first non-zero byte of p[0:n], or n. */
static Py_ssize_t kf_first_nonzero(const unsigned char *p, Py_ssize_t n) {
    Py_ssize_t i = 0;
    while (i < n && ((uintptr_t)(p + i) & 7)) {
        if (p[i]) return i;
        i++;
    }
    while (i + 32 <= n) {
        uint64_t a, b, c, d;
        memcpy(&a, p + i, 8);
        memcpy(&b, p + i + 8, 8);
        memcpy(&c, p + i + 16, 8);
        memcpy(&d, p + i + 24, 8);
        if (a | b | c | d) break;
        i += 32;
    }
    while (i < n) {
        if (p[i]) return i;
        i++;
    }
    return n;
}

#endif
