/* store/log.h: the log a local index reads — the embedded store's own file,
 * or a PostgreSQL store's replica and the thread that keeps it in step
 * (store/replicate.h). Which one is the backend's choice (its log_open). */
#include "store/log.h"
#include "store/backend.h"
#include "store/replicate.h"

#include <stdlib.h>
#include <string.h>

#include "util/banned.h"

struct store_log {
    char *path;
    struct store_replicate *rep; /* NULL: the store's own file */
};

int store_log_new(struct store_log **out, const char *path, struct store_replicate *rep,
                  struct err *err)
{
    struct store_log *l = calloc(1, sizeof *l);

    *out = NULL;
    if (l == NULL || (l->path = strdup(path)) == NULL) {
        free(l);
        store_replicate_free(rep);
        return err_set(err, ERR_NOMEM, "out of memory");
    }
    l->rep = rep;
    *out = l;
    return 0;
}

int store_log_start(struct store_log *l, struct err *err)
{
    return l->rep ? store_replicate_start(l->rep, err) : 0;
}

void store_log_close(struct store_log *l)
{
    if (l == NULL)
        return;
    store_replicate_free(l->rep);
    free(l->path);
    free(l);
}

const char *store_log_path(const struct store_log *l)
{
    return l->path;
}

void store_log_status(struct store_log *l, struct store_log_status *out)
{
    memset(out, 0, sizeof *out);
    if (l->rep)
        store_replicate_status(l->rep, out);
}

void store_row_article(const struct store_row *row, struct article *out)
{
    *out = (struct article){
        .id = row->id,
        .seq = row->seq,
        .source_id = row->source_id,
        .source_name = row->source_name,
        .author = row->author,
        .title = row->title,
        .description = row->description,
        .url = row->url,
        .url_to_image = row->url_to_image,
        .published_at = row->published_at,
        .content = row->content,
    };
}
