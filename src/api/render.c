/* JSON rendering of articles and sources (api/render.h). */
#include "api/render.h"
#include "article/json.h"
#include "util/jw.h"

#include <inttypes.h>
#include <string.h>

#include "util/banned.h"

void api_render_ok_begin(struct jw *w, struct buf *out)
{
    jw_init(w, out);
    jw_obj_begin(w);
    jw_key(w, "status");
    jw_str(w, "ok");
}

void api_render_articles(struct buf *out, uint64_t total, const struct article *arts, size_t n)
{
    struct jw w;
    api_render_ok_begin(&w, out);
    jw_key(&w, "totalResults");
    jw_uint(&w, total);
    jw_key(&w, "articles");
    jw_arr_begin(&w);
    for (size_t i = 0; i < n; i++) {
        jw_raw(&w, "", 0); /* the comma; the object is article_json's */
        article_json(out, &arts[i]);
    }
    jw_arr_end(&w);
    jw_obj_end(&w);
}

void api_render_page(struct buf *out, uint64_t total, const struct index_doc *docs, size_t n)
{
    /* api_render_articles' bytes, with the articles already written; the
     * room for all of it at once (one allocation, not a doubling chain). */
    size_t need = 64 + n;
    for (size_t i = 0; i < n; i++)
        need += docs[i].len;
    buf_grow(out, need);
    buf_printf(out, "{\"status\":\"ok\",\"totalResults\":%" PRIu64 ",\"articles\":[", total);
    for (size_t i = 0; i < n; i++) {
        if (i > 0)
            buf_putc(out, ',');
        buf_append(out, docs[i].json, docs[i].len);
    }
    buf_puts(out, "]}");
}

void api_render_page_walk(struct buf *out, uint64_t total, const struct index_doc *docs, size_t n,
                          const char *next)
{
    api_render_page(out, total, docs, n);
    if (!next || buf_error(out) || out->len == 0)
        return;
    out->len--; /* the closing brace: the key goes after the articles */
    buf_puts(out, ",\"nextCursor\":\"");
    jw_escape(out, next, strlen(next));
    buf_puts(out, "\"}");
}

void api_render_sources(struct buf *out, const struct source *srcs, size_t n)
{
    struct jw w;
    api_render_ok_begin(&w, out);
    jw_key(&w, "sources");
    jw_arr_begin(&w);
    static const char *const keys[] = {"id",       "name",     "description", "url",
                                       "category", "language", "country"};
    for (size_t i = 0; i < n; i++) {
        const struct source *s = &srcs[i];
        const char *values[] = {s->id,       s->name,     s->description, s->url,
                                s->category, s->language, s->country};
        jw_obj_begin(&w);
        for (size_t k = 0; k < sizeof keys / sizeof keys[0]; k++) {
            jw_key(&w, keys[k]);
            jw_str(&w, values[k]);
        }
        jw_obj_end(&w);
    }
    jw_arr_end(&w);
    jw_obj_end(&w);
}
