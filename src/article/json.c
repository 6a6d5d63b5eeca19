/* An article's NewsAPI JSON object (article/json.h). */
#include "article/json.h"
#include "util/jw.h"
#include "util/limits.h"
#include "util/timefmt.h"
#include "util/utf8.h"

#include <string.h>

#include "util/banned.h"

void article_json_content(struct buf *out, const char *content)
{
    if (!content) {
        buf_puts(out, "null");
        return;
    }
    size_t len = strlen(content);
    size_t chars = utf8_count(content, len);
    buf_putc(out, '"');
    if (chars <= LIMIT_CONTENT_CHARS) {
        jw_escape(out, content, len);
    } else {
        size_t shown = LIMIT_CONTENT_CHARS - 1;
        size_t bytes = utf8_prefix_bytes(content, len, shown);
        jw_escape(out, content, bytes);
        buf_printf(out, "\xE2\x80\xA6 [+%zu chars]", chars - shown);
    }
    buf_putc(out, '"');
}

void article_json_head(struct jw *w, const struct article *a)
{
    char when[TIMEFMT_ISO_LEN];
    jw_obj_begin(w);
    jw_key(w, "source");
    jw_obj_begin(w);
    jw_key(w, "id");
    jw_str(w, a->source_id);
    jw_key(w, "name");
    jw_str(w, a->source_name);
    jw_obj_end(w);
    jw_key(w, "author");
    jw_str(w, a->author);
    jw_key(w, "title");
    jw_str(w, a->title);
    jw_key(w, "description");
    jw_str(w, a->description);
    jw_key(w, "url");
    jw_str(w, a->url);
    jw_key(w, "urlToImage");
    jw_str(w, a->url_to_image);
    jw_key(w, "publishedAt");
    timefmt_iso8601(a->published_at, when);
    jw_str(w, when);
}

void article_json(struct buf *out, const struct article *a)
{
    struct jw w;
    jw_init(&w, out);
    article_json_head(&w, a);
    jw_key(&w, "content");
    /* The writer's comma bookkeeping is done by jw_raw with an empty value;
     * the content itself is appended straight to the buffer. */
    jw_raw(&w, "", 0);
    article_json_content(out, a->content);
    jw_obj_end(&w);
}
