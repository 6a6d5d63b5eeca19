/* The lines of an export (api/export_format.h). */
#include "api/export_format.h"

#include "article/json.h"

#include <stdint.h>
#include <string.h>

#include "util/jw.h"
#include "util/timefmt.h"
#include "util/utf8.h"

#include "util/banned.h"

#define CSV_COLUMNS                                                                                \
    "sourceId,sourceName,author,title,description,url,urlToImage,publishedAt,content,storyId,"     \
    "cursor\r\n"

const char *api_export_content_type(enum api_export_format f)
{
    return f == API_EXPORT_CSV ? "text/csv; charset=utf-8; header=present"
                               : "application/x-ndjson; charset=utf-8";
}

void api_export_head(struct buf *out, enum api_export_format f)
{
    if (f == API_EXPORT_CSV)
        buf_puts(out, CSV_COLUMNS);
}

void api_export_csv_field(struct buf *out, const char *s, size_t n)
{
    if (!s)
        return;
    if (!memchr(s, '"', n) && !memchr(s, ',', n) && !memchr(s, '\r', n) && !memchr(s, '\n', n)) {
        utf8_put_repaired(out, s, n, UTF8_NUL_KEEP);
        return;
    }
    buf_putc(out, '"');
    for (const char *q; n && (q = memchr(s, '"', n)) != NULL;) {
        size_t k = (size_t)(q - s) + 1;
        utf8_put_repaired(out, s, k, UTF8_NUL_KEEP); /* through the quote, */
        buf_putc(out, '"');                          /* then its double */
        s += k;
        n -= k;
    }
    utf8_put_repaired(out, s, n, UTF8_NUL_KEEP);
    buf_putc(out, '"');
}

static void csv_str(struct buf *out, const char *s)
{
    api_export_csv_field(out, s, s ? strlen(s) : 0);
}

/* The story id as a decimal string, as dedupe and /v2/stories write it
 * (a JSON number would lose digits past 2^53 in most clients): "%" PRId64
 * written by hand, once per line of an export. */
static void story_id_str(const struct article *a, char out[24])
{
    uint64_t v = a->story_id < 0 ? 0 - (uint64_t)a->story_id : (uint64_t)a->story_id;
    char digits[20];
    size_t n = 0, k = 0;
    do
        digits[n++] = (char)('0' + v % 10);
    while ((v /= 10) != 0);
    if (a->story_id < 0)
        out[k++] = '-';
    while (n > 0)
        out[k++] = digits[--n];
    out[k] = '\0';
}

static void csv_record(struct buf *out, const struct article *a, const char *cursor)
{
    char when[TIMEFMT_ISO_LEN], story[24];
    timefmt_iso8601(a->published_at, when);
    story_id_str(a, story);
    const char *fields[] = {a->source_id,   a->source_name, a->author,       a->title,
                            a->description, a->url,         a->url_to_image, when,
                            a->content,     story,          cursor};
    for (size_t i = 0; i < sizeof fields / sizeof fields[0]; i++) {
        if (i)
            buf_putc(out, ',');
        csv_str(out, fields[i]);
    }
    buf_puts(out, "\r\n");
}

static void ndjson_line(struct buf *out, const struct article *a, const char *cursor)
{
    char story[24];
    struct jw w;
    jw_init(&w, out);
    jw_obj_begin(&w);
    article_json_fields(&w, a, ARTICLE_CONTENT_WHOLE); /* content whole, unlike a page's */
    story_id_str(a, story);
    jw_key(&w, "storyId"); /* after NewsAPI's keys, as dedupe's */
    jw_str(&w, story);
    jw_key(&w, "cursor");
    jw_str(&w, cursor);
    jw_obj_end(&w);
    buf_putc(out, '\n');
}

void api_export_article(struct buf *out, enum api_export_format f, const struct article *a,
                        const char *cursor)
{
    if (f == API_EXPORT_CSV)
        csv_record(out, a, cursor);
    else
        ndjson_line(out, a, cursor);
}
