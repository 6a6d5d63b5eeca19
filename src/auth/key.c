/* Key material and key lookup (auth.h): keys are 16 bytes of getrandom()
 * written as 32 lower-case hex characters; the store keeps only their
 * SHA-256. Lookups go through a small cache keyed by that hash whose entries
 * live cache_ttl_ms (auth_options.key_cache_ttl_ms, default 2 s), so `newsd keys
 * disable` on the command line reaches a running server within that time.
 * Unknown keys are not cached: a key created a moment ago must work. */
#include "auth/internal.h"

#include <errno.h>
#include <string.h>
#include <stdlib.h>
#include <sys/random.h>
#include <time.h>

#include <nettle/memops.h>
#include <nettle/sha2.h>

#include "util/ascii.h"
#include "util/clock.h"

#include "util/banned.h"

#define KEY_BYTES (AUTH_KEY_CHARS / 2)
_Static_assert(AUTH_KEY_CHARS == 2 * KEY_BYTES, "a key is its random bytes in hex");
#define KEY_ARENA_BYTES (64 * 1024)

int auth_key_generate(char out[AUTH_KEY_CHARS + 1], struct err *err)
{
    unsigned char raw[KEY_BYTES];
    size_t got = 0;
    while (got < sizeof raw) {
        ssize_t n = getrandom(raw + got, sizeof raw - got, 0);
        if (n < 0) {
            if (errno == EINTR)
                continue;
            return err_set(err, ERR_IO, "getrandom: %s", strerror(errno));
        }
        got += (size_t)n;
    }
    ascii_hex_encode(out, raw, sizeof raw);
    return 0;
}

void auth_key_hash(const char *key, size_t len, unsigned char out[32])
{
    struct sha256_ctx ctx;
    sha256_init(&ctx);
    sha256_update(&ctx, len, (const uint8_t *)key);
    sha256_digest(&ctx, SHA256_DIGEST_SIZE, out);
}

int auth_key_create(struct store *s, const char *name, const char *plan,
                    char key_out[AUTH_KEY_CHARS + 1], int64_t *id_out, struct err *err)
{
    struct key_record rec;
    memset(&rec, 0, sizeof rec);
    int rc = auth_key_generate(key_out, err);
    if (rc < 0)
        goto out;
    auth_key_hash(key_out, AUTH_KEY_CHARS, rec.hash);
    rec.name = name && *name ? name : NULL;
    rec.plan = plan && *plan ? plan : "unlimited";
    rec.state = KEY_ACTIVE;
    rec.created_at = (int64_t)time(NULL);
    rec.last_used = 0;
    int64_t id = 0;
    rc = store_key_insert(s, &rec, &id, err);
    if (rc < 0)
        goto out;
    if (id_out)
        *id_out = id;
out:
    if (rc < 0)
        memset(key_out, 0, AUTH_KEY_CHARS + 1);
    return rc;
}

/* --- cache ------------------------------------------------------------- */

static struct auth_shard *key_shard(struct auth *a, const unsigned char hash[32])
{
    return &a->shards[hash[0] % AUTH_SHARDS];
}

static size_t key_bucket(const unsigned char hash[32])
{
    return ((size_t)hash[1] << 8 | hash[2]) % AUTH_BUCKETS;
}

/* Drop expired entries of a shard (its mutex held). */
static void key_shard_sweep(struct auth_shard *sh, int64_t now_ms)
{
    for (size_t b = 0; b < AUTH_BUCKETS; b++) {
        struct auth_key_entry **pp = &sh->keys[b];
        while (*pp) {
            struct auth_key_entry *e = *pp;
            if (e->expires_ms <= now_ms) {
                *pp = e->next;
                free(e);
                sh->n_keys--;
            } else {
                pp = &e->next;
            }
        }
    }
}

/* Cached info for hash, if fresh; true when found. */
static bool key_cache_get(struct auth *a, const unsigned char hash[32], int64_t now_ms,
                          struct auth_key_info *out)
{
    struct auth_shard *sh = key_shard(a, hash);
    bool found = false;
    pthread_mutex_lock(&sh->mu);
    for (struct auth_key_entry *e = sh->keys[key_bucket(hash)]; e; e = e->next) {
        if (memeql_sec(e->hash, hash, 32)) {
            if (e->expires_ms > now_ms) {
                out->id = e->id;
                out->state = e->state;
                memcpy(out->plan, e->plan, sizeof out->plan);
                found = true;
            }
            break;
        }
    }
    pthread_mutex_unlock(&sh->mu);
    return found;
}

/* Remember info for hash until now_ms + ttl. A full shard that has nothing
 * expired simply does not cache: the store answers instead. */
static void key_cache_put(struct auth *a, const unsigned char hash[32], int64_t now_ms,
                          const struct auth_key_info *info)
{
    struct auth_shard *sh = key_shard(a, hash);
    size_t b = key_bucket(hash);
    pthread_mutex_lock(&sh->mu);
    struct auth_key_entry *e;
    for (e = sh->keys[b]; e; e = e->next) {
        if (memeql_sec(e->hash, hash, 32))
            break;
    }
    if (!e) {
        if (sh->n_keys >= AUTH_CACHE_MAX_PER_SHARD)
            key_shard_sweep(sh, now_ms);
        if (sh->n_keys >= AUTH_CACHE_MAX_PER_SHARD)
            goto out;
        e = calloc(1, sizeof *e);
        if (!e)
            goto out;
        memcpy(e->hash, hash, 32);
        e->next = sh->keys[b];
        sh->keys[b] = e;
        sh->n_keys++;
    }
    e->id = info->id;
    e->state = info->state;
    memcpy(e->plan, info->plan, sizeof e->plan);
    e->expires_ms = now_ms + a->cache_ttl_ms;
out:
    pthread_mutex_unlock(&sh->mu);
}

void auth_key_cache_clear(struct auth *a)
{
    for (size_t i = 0; i < AUTH_SHARDS; i++) {
        struct auth_shard *sh = &a->shards[i];
        for (size_t b = 0; b < AUTH_BUCKETS; b++) {
            struct auth_key_entry *e = sh->keys[b];
            while (e) {
                struct auth_key_entry *next = e->next;
                free(e);
                e = next;
            }
            sh->keys[b] = NULL;
        }
        sh->n_keys = 0;
    }
}

int auth_key_lookup(struct auth *a, const unsigned char hash[32], struct auth_key_info *out,
                    struct err *err)
{
    /* On the monotonic clock: the TTL holds under a fixed test clock too, so
     * a server still sees `newsd keys` changes. */
    int64_t now_ms = a->cache_ttl_ms > 0 ? clock_mono_ms() : 0;
    if (a->cache_ttl_ms > 0 && key_cache_get(a, hash, now_ms, out)) {
        out->fresh = false;
        return 0;
    }

    struct arena ar;
    arena_init(&ar, KEY_ARENA_BYTES);
    struct key_record rec;
    memset(&rec, 0, sizeof rec);
    int rc = store_key_find(a->store, &ar, hash, &rec, err);
    if (rc < 0)
        goto out;
    /* The store found it by hash; compare again without leaking timing in
     * case a backend matched loosely. */
    if (!memeql_sec(rec.hash, hash, 32)) {
        rc = ERR_NOTFOUND;
        goto out;
    }
    out->id = rec.id;
    out->state = rec.state;
    out->fresh = true;
    out->plan[0] = '\0';
    /* A name too long for any plan stays "" and so matches no plan, rather
     * than being cut to the name of another one. */
    if (rec.plan && strlen(rec.plan) < sizeof out->plan)
        memcpy(out->plan, rec.plan, strlen(rec.plan) + 1);
    if (a->cache_ttl_ms > 0)
        key_cache_put(a, hash, now_ms, out);
out:
    arena_release(&ar);
    return rc;
}
