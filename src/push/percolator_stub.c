/* TEMPORARY naive percolator for local testing only (not committed). */
#include "push/percolator.h"
#include <pthread.h>
#include <stdlib.h>
struct ent { uint64_t id; struct index_matcher *m; };
struct percolator { pthread_mutex_t l; struct ent *e; size_t n, cap; };
int percolator_new(struct percolator **out, struct err *err) {
    *out = calloc(1, sizeof **out); if (!*out) return err_set(err, ERR_NOMEM, "oom");
    pthread_mutex_init(&(*out)->l, NULL); return 0; }
void percolator_free(struct percolator *p) { if (!p) return; for (size_t i=0;i<p->n;i++) index_matcher_free(p->e[i].m); free(p->e); pthread_mutex_destroy(&p->l); free(p); }
int percolator_add(struct percolator *p, uint64_t id, struct index_matcher *m, struct err *err) {
    pthread_mutex_lock(&p->l);
    if (p->n == p->cap) { size_t c = p->cap ? p->cap*2 : 8; struct ent *e = realloc(p->e, c*sizeof *e); if (!e) { pthread_mutex_unlock(&p->l); index_matcher_free(m); return err_set(err, ERR_NOMEM, "oom"); } p->e = e; p->cap = c; }
    p->e[p->n++] = (struct ent){id, m}; pthread_mutex_unlock(&p->l); return 0; }
void percolator_remove(struct percolator *p, uint64_t id) {
    pthread_mutex_lock(&p->l);
    for (size_t i=0;i<p->n;i++) if (p->e[i].id==id) { index_matcher_free(p->e[i].m); for (size_t j=i+1;j<p->n;j++) p->e[j-1]=p->e[j]; p->n--; break; }
    pthread_mutex_unlock(&p->l); }
size_t percolator_size(struct percolator *p) { return p->n; }
int percolator_match(struct percolator *p, const struct index_match_doc *d, uint64_t **ids, size_t *n, struct err *err) {
    *ids = NULL; *n = 0; pthread_mutex_lock(&p->l);
    if (p->n) { *ids = malloc(p->n * sizeof **ids); if (!*ids) { pthread_mutex_unlock(&p->l); return err_set(err, ERR_NOMEM, "oom"); } }
    for (size_t i=0;i<p->n;i++) if (index_matcher_test(p->e[i].m, d)) (*ids)[(*n)++] = p->e[i].id;
    pthread_mutex_unlock(&p->l); return 0; }
