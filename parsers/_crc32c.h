/* CRC-32C (Castagnoli) for the compiled core: SSE4.2 `crc32q` on x86_64 when the CPU has it (checked at run
 * time), three interleaved streams combined in GF(2) so that the instruction's 3-cycle latency is hidden;
 * a slicing-by-8 table everywhere else. kf_crc32c(0, p, n) is the CRC of a v2 record batch. */
#ifndef KF_CRC32C_H
#define KF_CRC32C_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

#define KF_CRC32C_POLY 0x82f63b78u /* reflected Castagnoli polynomial */

static uint32_t kf_crc_table[8][256];
static int kf_crc_ready = 0;
static int kf_crc_hw = 0;
/* Lane lengths of the interleaved hardware CRC, longest first, and x^(8 * lane), x^(16 * lane) mod P for
 * each: shift a lane's CRC past one or two lanes. A batch of a few KB still gets three streams. */
static const size_t kf_lanes[3] = {4096, 1024, 256};
static uint32_t kf_shift1[3], kf_shift2[3];

/* a * b mod P, in the reflected representation (x^0 is 0x80000000). */
static uint32_t kf_multmodp(uint32_t a, uint32_t b) {
    uint32_t m = (uint32_t)1 << 31, p = 0;
    for (;;) {
        if (a & m) {
            p ^= b;
            if ((a & (m - 1)) == 0) break;
        }
        m >>= 1;
        b = (b & 1) ? (b >> 1) ^ KF_CRC32C_POLY : b >> 1;
    }
    return p;
}

/* x^(8 * nbytes) mod P */
static uint32_t kf_x8nmodp(size_t nbytes) {
    uint32_t result = (uint32_t)1 << 31, sq = (uint32_t)1 << 30; /* sq = x^1 */
    uint64_t n = (uint64_t)nbytes * 8;
    while (n) {
        if (n & 1) result = kf_multmodp(sq, result);
        sq = kf_multmodp(sq, sq);
        n >>= 1;
    }
    return result;
}

static uint32_t kf_crc_sw(uint32_t crc, const unsigned char *p, size_t n) {
    while (n && ((uintptr_t)p & 7)) {
        crc = kf_crc_table[0][(crc ^ *p++) & 0xff] ^ (crc >> 8);
        n--;
    }
    while (n >= 8) {
        uint64_t w;
        memcpy(&w, p, 8);
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
        w = __builtin_bswap64(w);
#endif
        w ^= crc;
        crc = kf_crc_table[7][w & 0xff] ^ kf_crc_table[6][(w >> 8) & 0xff] ^ kf_crc_table[5][(w >> 16) & 0xff] ^
              kf_crc_table[4][(w >> 24) & 0xff] ^ kf_crc_table[3][(w >> 32) & 0xff] ^
              kf_crc_table[2][(w >> 40) & 0xff] ^ kf_crc_table[1][(w >> 48) & 0xff] ^ kf_crc_table[0][w >> 56];
        p += 8;
        n -= 8;
    }
    while (n--) crc = kf_crc_table[0][(crc ^ *p++) & 0xff] ^ (crc >> 8);
    return crc;
}

#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
#define KF_HAVE_HW 1
#include <nmmintrin.h>

__attribute__((target("sse4.2"))) static uint32_t kf_crc_hw_raw(uint32_t crc, const unsigned char *p, size_t n) {
    uint64_t c = crc;
    while (n && ((uintptr_t)p & 7)) {
        c = _mm_crc32_u8((uint32_t)c, *p++);
        n--;
    }
    /* Three lanes at a time: independent dependency chains, then combined. */
    for (int k = 0; k < 3; k++) {
        const size_t lane = kf_lanes[k];
        while (n >= 3 * lane) {
            uint64_t c1 = 0, c2 = 0;
            const unsigned char *end = p + lane;
            while (p < end) {
                uint64_t w0, w1, w2;
                memcpy(&w0, p, 8);
                memcpy(&w1, p + lane, 8);
                memcpy(&w2, p + 2 * lane, 8);
                c = _mm_crc32_u64(c, w0);
                c1 = _mm_crc32_u64(c1, w1);
                c2 = _mm_crc32_u64(c2, w2);
                p += 8;
            }
            c = kf_multmodp(kf_shift2[k], (uint32_t)c) ^ kf_multmodp(kf_shift1[k], (uint32_t)c1) ^ (uint32_t)c2;
            p += 2 * lane;
            n -= 3 * lane;
        }
    }
    while (n >= 8) {
        uint64_t w;
        memcpy(&w, p, 8);
        c = _mm_crc32_u64(c, w);
        p += 8;
        n -= 8;
    }
    while (n--) c = _mm_crc32_u8((uint32_t)c, *p++);
    return (uint32_t)c;
}
#else
#define KF_HAVE_HW 0
#endif

static void kf_crc_init(void) {
    if (kf_crc_ready) return;
    for (uint32_t i = 0; i < 256; i++) {
        uint32_t c = i;
        for (int k = 0; k < 8; k++) c = (c & 1) ? (c >> 1) ^ KF_CRC32C_POLY : c >> 1;
        kf_crc_table[0][i] = c;
    }
    for (uint32_t i = 0; i < 256; i++)
        for (int t = 1; t < 8; t++)
            kf_crc_table[t][i] = kf_crc_table[0][kf_crc_table[t - 1][i] & 0xff] ^ (kf_crc_table[t - 1][i] >> 8);
    for (int k = 0; k < 3; k++) {
        kf_shift1[k] = kf_x8nmodp(kf_lanes[k]);
        kf_shift2[k] = kf_x8nmodp(2 * kf_lanes[k]);
    }
#if KF_HAVE_HW
    __builtin_cpu_init();
    kf_crc_hw = __builtin_cpu_supports("sse4.2") ? 1 : 0;
#endif
    kf_crc_ready = 1;
}

/* Set by the module to force the table path (tests compare both). */
static int kf_crc_force_sw = 0;

static uint32_t kf_crc32c(uint32_t crc, const unsigned char *p, size_t n) {
    uint32_t c = ~crc;
#if KF_HAVE_HW
    if (kf_crc_hw && !kf_crc_force_sw) return ~kf_crc_hw_raw(c, p, n);
#endif
    return ~kf_crc_sw(c, p, n);
}

static const char *kf_crc_implementation(void) {
#if KF_HAVE_HW
    if (kf_crc_hw && !kf_crc_force_sw) return "sse4.2";
#endif
    return "table";
}

#endif
