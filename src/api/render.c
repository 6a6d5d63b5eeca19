/* JSON rendering of articles and sources (api/render.h). */
#include "api/render.h"
#include "util/jw.h"
#include "util/limits.h"
#include "util/timefmt.h"
#include "util/utf8.h"

#include <string.h>

#include "util/banned.h"

void api_render_content(struct buf *out, const char *content)
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

static void render_article(struct jw *w, const struct article *a)
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
    jw_key(w, "content");
    /* The writer's comma bookkeeping is done by jw_raw with an empty value;
     * the content itself is appended straight to the buffer. */
    jw_raw(w, "", 0);
    api_render_content(w->out, a->content);
    jw_obj_end(w);
}

void api_render_articles(struct buf *out, uint64_t total, const struct article *arts, size_t n)
{
    struct jw w;
    jw_init(&w, out);
    jw_obj_begin(&w);
    jw_key(&w, "status");
    jw_str(&w, "ok");
    jw_key(&w, "totalResults");
    jw_uint(&w, total);
    jw_key(&w, "articles");
    jw_arr_begin(&w);
    for (size_t i = 0; i < n; i++)
        render_article(&w, &arts[i]);
    jw_arr_end(&w);
    jw_obj_end(&w);
}

void api_render_sources(struct buf *out, const struct source *srcs, size_t n)
{
    struct jw w;
    jw_init(&w, out);
    jw_obj_begin(&w);
    jw_key(&w, "status");
    jw_str(&w, "ok");
    jw_key(&w, "sources");
    jw_arr_begin(&w);
    for (size_t i = 0; i < n; i++) {
        const struct source *s = &srcs[i];
        jw_obj_begin(&w);
        jw_key(&w, "id");
        jw_str(&w, s->id);
        jw_key(&w, "name");
        jw_str(&w, s->name);
        jw_key(&w, "description");
        jw_str(&w, s->description);
        jw_key(&w, "url");
        jw_str(&w, s->url);
        jw_key(&w, "category");
        jw_str(&w, s->category);
        jw_key(&w, "language");
        jw_str(&w, s->language);
        jw_key(&w, "country");
        jw_str(&w, s->country);
        jw_obj_end(&w);
    }
    jw_arr_end(&w);
    jw_obj_end(&w);
}
