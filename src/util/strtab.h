/* A table of distinct strings, each numbered in the order it was first
 * added (0, 1, 2 ...): the caller keeps what belongs to a string in its own
 * arrays under that number. What index/match.c files an article's terms in,
 * push/percolator.c its searches' keys in and the engine's writer finds its
 * source ids by (index/engine/sources.c). Strings are copied (NUL
 * terminated); a string's pointer is valid until the next strtab_add.
 * Nothing is ever removed. Not thread-safe. */
#ifndef NEWSD_UTIL_STRTAB_H
#define NEWSD_UTIL_STRTAB_H

#include <stddef.h>
#include <stdint.h>

struct strtab {
    uint32_t *slots; /* open addressing: string number + 1, 0 empty */
    size_t nslots;   /* a power of two, at most half full */
    size_t n;        /* strings */
    size_t cap;
    size_t *off;    /* each string's offset in bytes */
    uint32_t *len;  /* its length */
    uint64_t *hash; /* its hash (rehashing reads no bytes) */
    char *bytes;    /* the strings back to back, each NUL-terminated */
    size_t blen, bcap;
};

void strtab_init(struct strtab *t);
void strtab_release(struct strtab *t);

/* The number of s[0..len): an existing one (*added false) or a new one
 * (*added true). 0, or ERR_NOMEM (the table unchanged). */
int strtab_add(struct strtab *t, const char *s, size_t len, size_t *num, int *added);

/* The number of s[0..len), or -1 when it is not in the table. */
int64_t strtab_find(const struct strtab *t, const char *s, size_t len);

/* String num (NUL-terminated) and its length. */
const char *strtab_str(const struct strtab *t, size_t num);
size_t strtab_len(const struct strtab *t, size_t num);

#endif
