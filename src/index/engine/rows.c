/* Reading rows into segments (index/engine/writer.h): the log's new rows
 * (seq > applied) become documents of a builder, the documents they
 * replace are deleted, and a large backlog is cut into full segments (each
 * written to its file at once) as it is read. */
#include "index/engine/writer.h"

#include <string.h>

#include "article/json.h"
#include "util/hash.h"
#include "util/log.h"

#include "util/banned.h"

/* The hash of the row's canonical URL (0 for none). */
uint64_t eng_row_url_hash(const struct store_row *row)
{
    const char *url = row->canonical_url;
    return url ? hash_bytes64(url, strlen(url)) : 0;
}

/* The row's NewsAPI JSON, as the API would render it from the row
 * (article/json.h): the document store's copy. */
void eng_row_json(const struct store_row *row, struct buf *out)
{
    struct article a;
    store_row_article(row, &a);
    article_json(out, &a);
}

void eng_row_view(const struct store_row *row, uint64_t url_hash, uint32_t src,
                  const struct buf *json, struct eng_row *out)
{
    *out = (struct eng_row){
        .id = row->id,
        .seq = row->seq,
        .title = row->title,
        .description = row->description,
        .content = row->content,
        .language = row->language,
        .meta_terms = row->meta_terms,
        .author = row->author,
        .src = src,
        .url_hash = url_hash,
        .json = json->data,
        .json_len = json->len,
    };
}

int eng_row_add(struct eng_writer *w, struct eng_builder *b, const struct store_row *row,
                uint64_t url_hash)
{
    struct buf json;
    struct eng_row r;
    buf_init(&json, 0);
    eng_row_json(row, &json);
    uint32_t src = ENG_NO_SOURCE;
    int rc = json.err ? ERR_NOMEM : 0;
    if (rc == 0 && row->source_id && eng_src_intern(w, row->source_id, &src) < 0)
        rc = ERR_NOMEM;
    if (rc == 0) {
        eng_row_view(row, url_hash, src, &json, &r);
        rc = eng_builder_add(b, &r);
    }
    buf_release(&json);
    return rc;
}

/* New rows (seq > applied) into b, deleting the documents they replace. */
int eng_rows_read_new(struct eng_writer *w, struct eng_builder *b, struct eng_pending *p,
                      struct err *err)
{
    struct store_rows *rows = NULL;
    struct store_row row;
    int rc = store_rows_after(&rows, w->db, w->applied_seq, err);
    if (rc < 0)
        return rc;
    /* (a failure of the read itself has set err: only the others are said here) */
    while ((rc = store_rows_next(rows, &row, err)) == 1) {
        uint64_t url_hash = eng_row_url_hash(&row);
        if ((p->n > 0 && (rc = eng_pending_delete_id(w, p, row.id)) < 0) ||
            (p->n > 0 && url_hash && (rc = eng_pending_delete_url(w, p, url_hash)) < 0) ||
            (rc = eng_row_add(w, b, &row, url_hash)) < 0) {
            rc = err_set(err, rc, "out of memory indexing articles");
            break;
        }
        w->applied_seq = row.seq;
        if ((eng_builder_count(b) & 4095) == 0 && w->stopping && atomic_load(w->stopping)) {
            rc = err_set(err, ERR_BUSY, "stopping");
            break;
        }
        /* A large backlog (the first load, or a restart far behind) is cut
         * into full segments as it is read. */
        if (eng_builder_count(b) >= w->seg_full) {
            struct eng_segment *seg = NULL;
            if ((rc = eng_builder_finish(b, &seg)) < 0 || (rc = eng_writer_append(w, seg)) < 0) {
                eng_segment_unref(seg);
                rc = err_set(err, rc, "out of memory indexing articles");
                break;
            }
            /* To its file at once: a build larger than RAM then fits (the
             * kernel pages the files), and its peak is one segment's. */
            struct err perr;
            err_clear(&perr);
            if (w->writable && eng_segment_persist(w, w->nseg - 1, &perr) < 0)
                log_msg(LOG_WARN, "search index: %s (the segment stays in memory)",
                        err_msg(&perr, ERR_IO));
        }
    }
    store_rows_free(rows);
    return rc < 0 ? rc : 0;
}
