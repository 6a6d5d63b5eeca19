/* 64-bit FNV-1a (util/hash.h). */
#include "util/hash.h"

#define FNV1A64_PRIME 1099511628211ULL

uint64_t hash_fnv1a64_update(uint64_t h, const void *p, size_t n)
{
    const unsigned char *s = p;
    for (size_t i = 0; i < n; i++) {
        h ^= s[i];
        h *= FNV1A64_PRIME;
    }
    return h;
}
