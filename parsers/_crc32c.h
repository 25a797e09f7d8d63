/* CRC-32C (Castagnoli) for the compiled core, the fastest path the CPU has (checked at run time):
 * - "vpclmulqdq": carry-less multiplication folds 256 bytes at a time into sixteen 128-bit accumulators
 *   (four AVX-512 registers), which `crc32q` then reduces (x86_64 with AVX-512 and VPCLMULQDQ);
 * - "sse4.2": `crc32q` alone, three interleaved streams combined in GF(2) so that the instruction's 3-cycle
 *   latency is hidden;
 * - "table": slicing-by-8 everywhere else.
 * kf_crc32c(0, p, n) is the CRC of a v2 record batch. */
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

/* x^nbits mod P, reflected (x^0 is 0x80000000). */
static uint32_t kf_xnmodp(uint64_t nbits) {
    uint32_t result = (uint32_t)1 << 31, sq = (uint32_t)1 << 30; /* sq = x^1 */
    while (nbits) {
        if (nbits & 1) result = kf_multmodp(sq, result);
        sq = kf_multmodp(sq, sq);
        nbits >>= 1;
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
#include <immintrin.h>

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

/* Folding (reflected bit order: bit 0 of a block's first byte is its highest-degree coefficient). A 16-byte
 * block A = L x^64 + H (L its first 8 bytes) moved D bits further on is A x^D = L x^(D+64) + H x^D mod P. With
 * the 64-bit operands L and K = reflect32(x^(D+63) mod P) << 32, the carry-less product lands exactly on the
 * 128 bits of the block D bits later (the extra factor x of the constant fills the bit a 64-bit operand
 * lacks), so a fold is two multiplications and two XORs. kf_fold_k[i] = {K for L, K for H} at D = 2048 and
 * 128 bits. (On a CPU with 128-bit PCLMULQDQ only, four such accumulators measured slower than three
 * interleaved crc32q streams, so that path does not exist.) */
static uint64_t kf_fold_k[2][2];
static int kf_crc_vclmul = 0;

#define kf_fold(x, k, next) \
    _mm_xor_si128(_mm_xor_si128(_mm_clmulepi64_si128(x, k, 0x00), _mm_clmulepi64_si128(x, k, 0x11)), next)

#if defined(__clang__) || (defined(__GNUC__) && __GNUC__ >= 8)
#define KF_HAVE_VCLMUL 1
#define KF_ZFOLD(z, k, next) \
    _mm512_xor_si512(_mm512_xor_si512(_mm512_clmulepi64_epi128(z, k, 0x00), _mm512_clmulepi64_epi128(z, k, 0x11)), \
                     next)

__attribute__((target("sse4.2,pclmul,avx512f,avx512vl,vpclmulqdq"))) static uint32_t kf_crc_vclmul_raw(
    uint32_t crc, const unsigned char *p, size_t n) {
    if (n < 512) return kf_crc_hw_raw(crc, p, n);
    const __m512i k2048 = _mm512_broadcast_i32x4(
        _mm_set_epi64x((long long)kf_fold_k[0][1], (long long)kf_fold_k[0][0]));
    const __m128i k128 = _mm_set_epi64x((long long)kf_fold_k[1][1], (long long)kf_fold_k[1][0]);
    __m512i z[4];
    for (int i = 0; i < 4; i++) z[i] = _mm512_loadu_si512((const void *)(p + 64 * i));
    z[0] = _mm512_xor_si512(z[0], _mm512_castsi128_si512(_mm_cvtsi32_si128((int)crc)));
    p += 256;
    n -= 256;
    while (n >= 256) {
        for (int i = 0; i < 4; i++) z[i] = KF_ZFOLD(z[i], k2048, _mm512_loadu_si512((const void *)(p + 64 * i)));
        p += 256;
        n -= 256;
    }
    /* the sixteen 128-bit blocks in message order, folded into the last */
    __m128i a = _mm512_extracti32x4_epi32(z[0], 0);
    for (int i = 1; i < 16; i++) {
        __m128i next;
        switch (i & 3) {
        case 0: next = _mm512_extracti32x4_epi32(z[i >> 2], 0); break;
        case 1: next = _mm512_extracti32x4_epi32(z[i >> 2], 1); break;
        case 2: next = _mm512_extracti32x4_epi32(z[i >> 2], 2); break;
        default: next = _mm512_extracti32x4_epi32(z[i >> 2], 3); break;
        }
        a = kf_fold(a, k128, next);
    }
    while (n >= 16) {
        a = kf_fold(a, k128, _mm_loadu_si128((const __m128i *)p));
        p += 16;
        n -= 16;
    }
    uint64_t c = _mm_crc32_u64(0, (uint64_t)_mm_cvtsi128_si64(a));
    c = _mm_crc32_u64(c, (uint64_t)_mm_extract_epi64(a, 1));
    return kf_crc_hw_raw((uint32_t)c, p, n);
}
#else
#define KF_HAVE_VCLMUL 0
#endif
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
        kf_shift1[k] = kf_xnmodp(8 * (uint64_t)kf_lanes[k]);
        kf_shift2[k] = kf_xnmodp(16 * (uint64_t)kf_lanes[k]);
    }
#if KF_HAVE_HW
    __builtin_cpu_init();
    kf_crc_hw = __builtin_cpu_supports("sse4.2") ? 1 : 0;
#if KF_HAVE_VCLMUL
    kf_crc_vclmul = kf_crc_hw && __builtin_cpu_supports("pclmul") && __builtin_cpu_supports("avx512f") &&
                            __builtin_cpu_supports("avx512vl") && __builtin_cpu_supports("vpclmulqdq") ? 1 : 0;
#endif
    const uint64_t distances[2] = {2048, 128};
    for (int k = 0; k < 2; k++) {
        kf_fold_k[k][0] = (uint64_t)kf_xnmodp(distances[k] + 63) << 32;
        kf_fold_k[k][1] = (uint64_t)kf_xnmodp(distances[k] - 1) << 32;
    }
#endif
    kf_crc_ready = 1;
}

/* Set by the module to force a slower path (tests compare them all): 0 the fastest the CPU has, 1 "sse4.2"
 * (where the CPU has it), 2 "table". */
static int kf_crc_force = 0;

static int kf_crc_path(void) {
#if KF_HAVE_HW
#if KF_HAVE_VCLMUL
    if (kf_crc_force == 0 && kf_crc_vclmul) return 0;
#endif
    if (kf_crc_force <= 1 && kf_crc_hw) return 1;
#endif
    return 2;
}

static uint32_t kf_crc32c(uint32_t crc, const unsigned char *p, size_t n) {
    uint32_t c = ~crc;
#if KF_HAVE_HW
    switch (kf_crc_path()) {
#if KF_HAVE_VCLMUL
    case 0: return ~kf_crc_vclmul_raw(c, p, n);
#endif
    case 1: return ~kf_crc_hw_raw(c, p, n);
    }
#endif
    return ~kf_crc_sw(c, p, n);
}

static const char *kf_crc_implementation(void) {
    static const char *names[3] = {"vpclmulqdq", "sse4.2", "table"};
    return names[kf_crc_path()];
}

#endif
