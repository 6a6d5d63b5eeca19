/* One NewsAPI article JSON object → struct article (ingest/imports/imports_internal.h),
 * with no store: the mapping the JSONL and response imports share and the
 * fuzz harness exercises alone.
 *
 * Article keys (NewsAPI shape): source{id,name}, author, title,
 * description, url, urlToImage, publishedAt, content. Extra keys of newsd's
 * JSONL imports, so fixtures and the bundled sample carry their labels:
 *   "country":  2 letters, the top-headlines country
 *   "category": business, entertainment, general, health, science, sports,
 *               technology
 *   "language": 2 letters ("se" read as "sv")
 *   "headline": true marks a live headline
 * Other keys are ignored. Values are stored verbatim (no HTML stripping). */
#include "ingest/imports/imports_internal.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "ingest/ingest.h"
#include "util/ascii.h"
#include "util/limits.h"
#include "util/timefmt.h"
#include "util/utf8.h"
#include "util/vocab.h"

#include "util/banned.h"

/* A string member as a bounded arena copy; NULL when absent, null, not a
 * string, or on allocation failure (*rc then ERR_NOMEM). */
static const char *str_field(struct arena *a, const json_t *obj, const char *key, int *rc)
{
    const json_t *v = json_object_get(obj, key);
    if (!json_is_string(v))
        return NULL;
    const char *s = json_string_value(v);
    size_t n = utf8_cut(s, json_string_length(v), LIMIT_FIELD_BYTES);
    char *copy = arena_strndup(a, s, n);
    if (!copy)
        *rc = ERR_NOMEM;
    return copy;
}

static bool blank_only(const char *s)
{
    for (; *s; s++) {
        if (*s != ' ' && *s != '\t' && *s != '\r' && *s != '\n')
            return false;
    }
    return true;
}

int ingest_article_from_json(struct arena *a, const json_t *obj, struct article *out,
                             struct err *err)
{
    int rc = 0;
    memset(out, 0, sizeof *out);
    if (!json_is_object(obj))
        return err_set(err, ERR_INVALID, "not a JSON object");

    const json_t *url = json_object_get(obj, "url");
    if (!json_is_string(url) || json_string_length(url) == 0)
        return err_set(err, ERR_INVALID, "url missing or not a string");
    const json_t *title = json_object_get(obj, "title");
    if (!json_is_string(title) || blank_only(json_string_value(title)))
        return err_set(err, ERR_INVALID, "title missing, empty or not a string");
    /* Checked here, not only in ingest_normalize, so a bad url is reported
     * with its own reason before anything else happens. */
    rc = ingest_url_canonical(a, json_string_value(url), NULL, NULL);
    if (rc == ERR_NOMEM)
        return err_set(err, rc, "out of memory");
    if (rc < 0)
        return err_set(err, ERR_INVALID, "url is not an absolute http(s) URL");
    rc = 0;

    out->url = str_field(a, obj, "url", &rc);
    out->title = str_field(a, obj, "title", &rc);
    out->author = str_field(a, obj, "author", &rc);
    out->description = str_field(a, obj, "description", &rc);
    out->url_to_image = str_field(a, obj, "urlToImage", &rc);
    out->content = str_field(a, obj, "content", &rc);

    const json_t *src = json_object_get(obj, "source");
    if (json_is_object(src)) {
        const json_t *id = json_object_get(src, "id");
        /* An id too long or empty names no catalogue entry: null. */
        if (json_is_string(id) && json_string_length(id) > 0 &&
            json_string_length(id) <= INGEST_MAX_SOURCE_ID_BYTES)
            out->source_id = str_field(a, src, "id", &rc);
        out->source_name = str_field(a, src, "name", &rc);
    }

    const json_t *when = json_object_get(obj, "publishedAt");
    if (json_is_string(when)) {
        int64_t t;
        if (timefmt_parse_any(json_string_value(when), json_string_length(when), &t) < 0)
            return err_set(err, ERR_INVALID, "publishedAt is not a date");
        /* 0 means "unknown" to ingest_normalize; the epoch itself is no
         * news date. */
        out->published_at = t == 0 ? 1 : t;
    }

    const json_t *v = json_object_get(obj, "country");
    if (json_is_string(v)) {
        const char *c = json_string_value(v);
        if (ascii_is_alpha(c[0]) && ascii_is_alpha(c[1]) && c[2] == '\0') {
            out->country[0] = ascii_lower(c[0]);
            out->country[1] = ascii_lower(c[1]);
            out->country[2] = '\0';
        }
    }
    v = json_object_get(obj, "category");
    if (json_is_string(v)) {
        char cat[16];
        size_t n = json_string_length(v);
        if (n < sizeof cat) {
            for (size_t i = 0; i < n; i++)
                cat[i] = ascii_lower(json_string_value(v)[i]);
            cat[n] = '\0';
            const char *known = vocab_category(cat);
            if (known)
                out->category = known;
        }
    }
    v = json_object_get(obj, "language");
    if (json_is_string(v) && !vocab_language_code(json_string_value(v), out->language))
        out->language[0] = '\0';
    v = json_object_get(obj, "headline");
    out->headline = json_is_true(v);

    if (rc < 0)
        return err_set(err, rc, "out of memory");
    return 0;
}
