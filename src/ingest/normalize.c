/* The one normalisation every article goes through before the store
 * (ingest/ingest.h: ingest_normalize), whether it came from an import or a
 * feed: canonical URL and domain, publish time, labels, language, source.
 *
 * Precedence of each derived field:
 *   published_at  as given; 0 (unknown) → now; more than a day ahead of now
 *                 → now (clocks and time zones of publishers are wrong)
 *   country, category, headline
 *                 options, else the article's own labels (JSONL extra keys
 *                 or the feed), else the catalogue source's country and
 *                 category
 *   language      options, else the article's own, else the catalogue
 *                 source's, else detected from title + description; "se" is
 *                 always written "sv"
 *   source        a source id the catalogue lacks is registered as a
 *                 non-headline entry with the article's source name
 *   url_to_image  a relative reference ("/images/x.jpg") resolved against
 *                 the article's URL (RFC 3986); kept only when the result is
 *                 an absolute http(s) URL with a host and no tabs or line
 *                 breaks; anything else becomes NULL
 * With s == NULL the catalogue steps are skipped (the fuzz harness). */
#include "ingest/ingest.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <strings.h>
#include <time.h>

#include "text/text.h"
#include "util/buf.h"
#include "util/limits.h"
#include "util/url.h"
#include "util/vocab.h"

#include "util/banned.h"

/* Publishers a little ahead of UTC are fine; beyond a day it is an error. */
#define INGEST_FUTURE_SLACK_SECONDS 86400

/* Title + " " + description is enough to detect a language; more only costs. */
#define INGEST_DETECT_BYTES 4096

static void detect_language(const struct article *art, char out[3])
{
    char text[INGEST_DETECT_BYTES];
    size_t n = 0;
    const char *parts[2] = {art->title, art->description};
    for (size_t i = 0; i < 2; i++) {
        if (!parts[i])
            continue;
        if (n > 0 && n < sizeof text)
            text[n++] = ' ';
        size_t len = strlen(parts[i]);
        if (len > sizeof text - n)
            len = sizeof text - n;
        memcpy(text + n, parts[i], len);
        n += len;
    }
    /* The cut may split a UTF-8 sequence; the detector treats invalid bytes
     * as separators. */
    text_detect_language(text, n, out);
}

/* A reference worth resolving: not empty, not the word null or undefined
 * that some exports write for no image, and without spaces, control
 * characters, backslashes or a ':' in its first segment (" javascript:x"
 * is no path; RFC 3986 4.2 puts no ':' there either). */
static bool image_ref_plain(const char *img)
{
    if (!*img || !strcasecmp(img, "null") || !strcasecmp(img, "undefined"))
        return false;
    size_t first = strcspn(img, "/?#");
    for (size_t i = 0; img[i]; i++) {
        unsigned char ch = (unsigned char)img[i];
        if (ch <= ' ' || ch == 0x7f || ch == '\\' || (ch == ':' && i < first))
            return false;
    }
    return true;
}

/* A reference without a scheme ("/images/x.jpg", "x.jpg", "//cdn/x.jpg"),
 * as NewsAPI gives for some sites, resolved against the article's URL (an
 * absolute http(s) URL: checked before). One with a scheme, or too long
 * once resolved, is left as it is for the check to refuse. 0 or
 * ERR_NOMEM. */
static int image_url_resolve(struct arena *a, struct article *art)
{
    const char *img = art->url_to_image;
    struct url_parts p;
    url_split(img, strlen(img), &p);
    if (p.scheme || !image_ref_plain(img))
        return 0;
    struct buf b;
    buf_init(&b, LIMIT_URL_BYTES + 1);
    url_resolve(&b, img, art->url);
    int rc = 0;
    if (!buf_error(&b)) {
        char *abs = arena_strndup(a, b.data, b.len);
        if (abs)
            art->url_to_image = abs;
        else
            rc = ERR_NOMEM;
    }
    buf_release(&b);
    return rc;
}

/* The image URL goes to browsers as it was given (an img src, a link): a
 * javascript: or data: URL there runs a script, a relative one would point
 * at whatever site shows it, so it is made absolute against the article's
 * own site first. Only what ingest_url_canonical takes for an absolute
 * http(s) URL is kept, and not with the tabs or line breaks it would
 * quietly remove: looked for once resolved, since the article's URL (whose
 * canonical form has them removed) may bring its own (found by fuzzing), and
 * a relative one that holds them resolves with them. 0, or ERR_NOMEM. */
static int image_url_check(struct arena *a, struct article *art)
{
    if (!art->url_to_image)
        return 0;
    int rc = image_url_resolve(a, art);
    if (rc < 0)
        return rc;
    rc = strpbrk(art->url_to_image, "\t\r\n")
             ? ERR_INVALID
             : ingest_url_canonical(a, art->url_to_image, NULL, NULL);
    if (rc == ERR_NOMEM)
        return rc;
    if (rc < 0)
        art->url_to_image = NULL;
    return 0;
}

int ingest_normalize(struct store *s, struct arena *a, struct article *art,
                     const struct ingest_options *opt, struct err *err)
{
    static const struct ingest_options defaults = {0};
    if (!opt)
        opt = &defaults;
    int64_t now = opt->now ? opt->now : (int64_t)time(NULL);
    char *canon, *domain;
    int rc = ingest_url_canonical(a, art->url, &canon, &domain);
    if (rc == ERR_NOMEM)
        return err_set(err, rc, "out of memory");
    if (rc < 0)
        return err_set(err, ERR_INVALID, "url is not an absolute http(s) URL");
    art->canonical_url = canon;
    art->domain = domain;
    if (image_url_check(a, art) < 0)
        return err_set(err, ERR_NOMEM, "out of memory");

    if (art->published_at == 0 || art->published_at > now + INGEST_FUTURE_SLACK_SECONDS)
        art->published_at = now;
    art->ingested_at = now;

    if (opt->headlines)
        art->headline = true;
    if (opt->country && opt->country[0]) {
        art->country[0] = opt->country[0];
        art->country[1] = opt->country[1];
        art->country[2] = '\0';
    }
    if (opt->category && opt->category[0])
        art->category = opt->category;
    char lang[3];
    if (opt->language && vocab_language_code(opt->language, lang))
        memcpy(art->language, lang, sizeof lang);
    else if (vocab_language_code(art->language, lang))
        memcpy(art->language, lang, sizeof lang);
    else
        art->language[0] = '\0';

    if (s && art->source_id) {
        struct source src;
        struct err serr;
        err_clear(&serr);
        rc = store_source_get(s, a, art->source_id, &src, &serr);
        if (rc == 0) {
            if (!art->source_name)
                art->source_name = src.name;
            if (!art->country[0] && src.country && strlen(src.country) == 2) {
                art->country[0] = src.country[0];
                art->country[1] = src.country[1];
                art->country[2] = '\0';
            }
            if (!art->category && vocab_is_category(src.category))
                art->category = src.category;
            if (!art->language[0])
                vocab_language_code(src.language, art->language);
        } else if (rc == ERR_NOTFOUND) {
            const char *id = art->source_id;
            const char *name = art->source_name;
            rc = store_sources_ensure(s, &id, &name, 1, err);
            if (rc < 0)
                return rc;
        } else {
            if (err)
                *err = serr;
            return rc;
        }
    }
    if (!art->language[0])
        detect_language(art, art->language);
    return 0;
}

int ingest_article_copy(struct arena *a, struct article *dst, const struct article *src)
{
    *dst = *src;
    const char **fields[] = {
        &dst->source_id, &dst->source_name,  &dst->author,  &dst->title,         &dst->description,
        &dst->url,       &dst->url_to_image, &dst->content, &dst->canonical_url, &dst->domain};
    for (size_t i = 0; i < sizeof fields / sizeof fields[0]; i++) {
        if (*fields[i] && !(*fields[i] = arena_strdup(a, *fields[i])))
            return ERR_NOMEM;
    }
    return 0;
}
