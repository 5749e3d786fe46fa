/*
 * tcd cipher backend ABI, version 2.
 *
 * A backend is a shared library that exports
 *     const struct tcd_backend *tcd_backend_entry(void);
 * returning a pointer to a static descriptor. The loader reads abi_version
 * first and accepts 2 and 1; a version-1 descriptor (XTS only) ends before
 * block_free (struct_size 120 on LP64) and its block functions are never
 * looked at. Mirrors proto/src/abi.rs.
 *
 * Contract:
 *  - every function may be called from any thread; xts_encrypt/xts_decrypt
 *    may run concurrently on one context;
 *  - no function aborts on bad arguments: it returns a status;
 *  - block_encrypt/block_decrypt may run concurrently on one context;
 *  - xts_free and block_free wipe the key schedule before freeing;
 *  - nothing but available() is called when available() returns 0.
 */
#ifndef TCD_BACKEND_H
#define TCD_BACKEND_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define TCD_BACKEND_ABI_VERSION 2u
#define TCD_BACKEND_ABI_VERSION_1 1u
#define TCD_BACKEND_ENTRY "tcd_backend_entry"

/* flags */
#define TCD_FLAG_CPU_CRYPTO (1u << 0) /* uses AES-NI, VAES, PCLMULQDQ, ... */

/* status */
#define TCD_OK 0
#define TCD_INVALID_ARGUMENT 1 /* length, unit size, pointer or unit range */
#define TCD_UNKNOWN_CIPHER 2   /* cipher index out of range */
#define TCD_BAD_KEY 3          /* wrong key length */
#define TCD_UNAVAILABLE 4      /* this CPU cannot run the backend */
#define TCD_INTERNAL 5         /* a bug in the backend */

struct tcd_cipher {
    const char *name;     /* "AES", "Twofish", "Serpent", ... */
    uint32_t key_bytes;   /* one key; an XTS context takes 2 * key_bytes */
    uint32_t block_bytes; /* 16; or 8 (version 2): block functions only */
};

struct tcd_xts_ctx;   /* opaque */
struct tcd_block_ctx; /* opaque (version 2) */

struct tcd_backend {
    uint32_t abi_version; /* always first: TCD_BACKEND_ABI_VERSION */
    uint32_t struct_size; /* sizeof(struct tcd_backend) */
    const char *name;
    const char *description;
    const char *version;
    uint32_t flags;
    uint32_t cipher_count;
    const struct tcd_cipher *ciphers;
    /* nonzero when this CPU can run the backend */
    uint32_t (*available)(void);
    /* key = primary key then tweak key, key_len = 2 * key_bytes */
    int32_t (*xts_new)(uint32_t cipher, const uint8_t *key, size_t key_len,
                       struct tcd_xts_ctx **out);
    /* len bytes in place: units of unit_size bytes, the first numbered
     * first_unit; tweak of unit n = E_tweakkey(n as 128-bit little-endian) */
    int32_t (*xts_encrypt)(const struct tcd_xts_ctx *ctx, uint8_t *data,
                           size_t len, uint64_t first_unit, uint32_t unit_size);
    int32_t (*xts_decrypt)(const struct tcd_xts_ctx *ctx, uint8_t *data,
                           size_t len, uint64_t first_unit, uint32_t unit_size);
    void (*xts_free)(struct tcd_xts_ctx *ctx);
    /* optional, may be NULL: the code path ctx runs ("AVX2", "SSE2", ...),
     * a static NUL-terminated string, or NULL when not told */
    const char *(*xts_path)(const struct tcd_xts_ctx *ctx);
    /* version 2, optional as a group (all four or none): raw block cipher
     * (ECB). key_len = key_bytes; len a multiple of block_bytes. */
    int32_t (*block_new)(uint32_t cipher, const uint8_t *key, size_t key_len,
                         struct tcd_block_ctx **out);
    int32_t (*block_encrypt)(const struct tcd_block_ctx *ctx, uint8_t *data,
                             size_t len);
    int32_t (*block_decrypt)(const struct tcd_block_ctx *ctx, uint8_t *data,
                             size_t len);
    void (*block_free)(struct tcd_block_ctx *ctx);
    const void *reserved[4]; /* zero */
};

const struct tcd_backend *tcd_backend_entry(void);

#ifdef __cplusplus
}
#endif

#endif /* TCD_BACKEND_H */
