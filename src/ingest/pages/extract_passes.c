/* The passes every part of the extractor runs (extract_passes.h): which
 * nodes an attempt leaves out, and the subtree sums over what is left.
 * Below extract.c and extract_byline.c, which both run them. */
#include <stdint.h>

#include "ingest/pages/extract_passes.h"

#include "util/banned.h"

static void mark_gone(struct ctx *c, unsigned flags)
{
    const struct xdom *d = c->d;
    struct nfo *f = c->f;
    f[0].gone = 0;
    for (uint32_t i = 1; i < d->n; i++) {
        const struct nfo *p = &f[d->nodes[i].parent];
        f[i].gone = p->gone || f[i].invisible || ((flags & STRIP_UNLIKELY) && f[i].unlikely);
    }
}

/* Subtree sums from scratch over what is not gone (children first). */
void extract_sum_pass(struct ctx *c)
{
    const struct xdom *d = c->d;
    struct nfo *f = c->f;
    for (uint32_t i = 0; i < d->n; i++) {
        struct nfo *n = &f[i];
        n->tlen = n->llen = n->ncommas = n->own = n->own_commas = 0;
        n->p = n->img = n->li = n->input = n->embed = n->htext = n->quote = 0;
        n->has_block = 0;
    }
    for (uint32_t i = d->n; i-- > 1;) {
        const struct xnode *x = &d->nodes[i];
        struct nfo *n = &f[i];
        if (n->gone)
            continue;
        struct nfo *p = &f[x->parent];
        if (x->tag == XTAG_TEXT) {
            n->tlen = n->chars;
            n->ncommas = n->commas;
            n->llen = n->link ? n->chars : 0;
            f[n->owner].own += n->chars;
            f[n->owner].own_commas += n->commas;
        } else {
            n->p += x->tag == XTAG_p;
            n->img += x->tag == XTAG_img;
            n->li += x->tag == XTAG_li;
            n->input += x->tag == XTAG_input;
            n->embed += x->tag == XTAG_iframe || x->tag == XTAG_embed || x->tag == XTAG_object;
            if (tag_is_heading(x->tag))
                n->htext = n->tlen;
            /* children come first: its sums are whole here */
            if (x->tag == XTAG_blockquote && n->tlen >= PARAGRAPH_MIN_CHARS &&
                n->llen * 2 < n->tlen)
                n->quote++;
            if (n->block || x->tag == XTAG_img)
                p->has_block = 1;
            else if (n->has_block)
                p->has_block = 1;
        }
        p->tlen += n->tlen;
        p->llen += n->llen;
        p->ncommas += n->ncommas;
        p->p += n->p;
        p->img += n->img;
        p->li += n->li;
        p->input += n->input;
        p->embed += n->embed;
        p->htext += n->htext;
        p->quote += n->quote;
    }
}

void extract_attempt_pass(struct ctx *c, unsigned flags)
{
    mark_gone(c, flags);
    extract_sum_pass(c);
}
