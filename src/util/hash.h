/* The one non-cryptographic hash: 64-bit FNV-1a, for hash tables, item
 * fingerprints and URL keys. Not for anything an attacker may want to
 * collide on purpose where that matters (keys are SHA-256, auth/key.c).
 *
 * hash_fnv1a64 is plain FNV-1a; hash_fnv1a64_update continues one over more
 * bytes (start from HASH_FNV1A64_INIT), so several fields can be hashed
 * without joining them. hash_mix64 is murmur3's 64-bit finalizer: FNV-1a's
 * low bits are weak, so a table that picks its slot from the low bits
 * mixes first (hash_bytes64 does both). */
#ifndef NEWSD_UTIL_HASH_H
#define NEWSD_UTIL_HASH_H

#include <stddef.h>
#include <stdint.h>

/* Not FNV's published offset basis (14695981039346656037): a digit short,
 * as newsd has always had it. It is kept because hashes made with it are
 * on disk (the engine's URL keys in its segment files); any odd 64-bit
 * value works as well for a table. */
#define HASH_FNV1A64_INIT 1469598103934665603ULL

uint64_t hash_fnv1a64_update(uint64_t h, const void *p, size_t n);

static inline uint64_t hash_fnv1a64(const void *p, size_t n)
{
    return hash_fnv1a64_update(HASH_FNV1A64_INIT, p, n);
}

/* murmur3's fmix64: every input bit reaches every output bit. */
static inline uint64_t hash_mix64(uint64_t h)
{
    h ^= h >> 33;
    h *= 0xff51afd7ed558ccdULL;
    return h ^ (h >> 33);
}

/* Fibonacci hashing of an integer key (a story, a term number, a second):
 * key times 2^64 / the golden ratio, shifted right by shift. Its high bits
 * are well spread, so a table of 2^b slots takes shift = 64 - b (a table
 * that masks low bits instead takes a smaller shift). One multiply: for
 * keys that are already numbers, where hash_mix64 would cost more. */
static inline uint64_t hash_fib(uint64_t key, unsigned shift)
{
    return (key * 0x9E3779B97F4A7C15ULL) >> shift;
}

/* FNV-1a then the finalizer: well spread in the low and the high bits. */
static inline uint64_t hash_bytes64(const void *p, size_t n)
{
    return hash_mix64(hash_fnv1a64(p, n));
}

#endif
