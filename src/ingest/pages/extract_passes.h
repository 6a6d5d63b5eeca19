/* The extractor's state shared by its passes (ingest/pages/pages.h:
 * extract_page): extract_passes.c marks and sums what an attempt keeps;
 * extract.c scores, picks and renders; extract_clean.c
 * drops boilerplate inside what was picked; extract_byline.c finds a
 * byline in the page's text; extract_kind.c decides article or not.
 * Private to those files. */
#ifndef NEWSD_INGEST_PAGES_EXTRACT_PASSES_H
#define NEWSD_INGEST_PAGES_EXTRACT_PASSES_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "ingest/pages/extract_internal.h"
#include "ingest/pages/html_internal.h"
#include "ingest/pages/pages.h"
#include "util/arena.h"
#include "util/buf.h"

#define PARAGRAPH_MIN_CHARS 25
#define SCORE_LEVELS 5
#define ALT_CANDIDATES 5
#define ALT_SHARE 0.75f
#define ALT_MIN_SHARED 3
#define RETRY_BELOW_CHARS 500
#define READERABLE_MIN_CHARS 140
#define READERABLE_MIN_SCORE 20.0
#define CLASS_MAX 256            /* bytes of class + id looked at */
#define DECLARED_MIN_CHARS 100   /* main text of a page that says it is an article */
#define UNDECLARED_MIN_CHARS 400 /* main text of a page that says nothing, gate failed */
#define TEXT_MAX_LINKS 0.25f     /* share of link text in such a main text */
#define PAGE_MAX_LINKS 0.5f      /* a page whose text is more links is an index */
#define SECTION_MAX_CHARS 24     /* bytes of a section's name in its URL ("/politik/") */

enum attempt_flags {
    STRIP_UNLIKELY = 1 << 0,
    WEIGHT_CLASSES = 1 << 1,
    CLEAN_CONDITIONALLY = 1 << 2,
};

/* What the passes know about one node. */
struct nfo {
    /* per page */
    int8_t weight;     /* class and id: -50..50 */
    uint8_t unlikely;  /* class, id or role says boilerplate */
    uint8_t block;     /* a block element */
    uint8_t link;      /* inside <a> */
    uint8_t invisible; /* never shown: script, hidden, ... */
    uint32_t owner;    /* nearest block ancestor */
    uint32_t chars;    /* text nodes: characters, white space folded */
    uint32_t commas;   /* text nodes */
    /* per attempt */
    uint8_t gone;
    uint8_t scored;
    uint8_t has_block; /* a block below it */
    float score;
    uint32_t tlen, llen, ncommas; /* subtree: characters, link characters, commas */
    uint32_t own;                 /* characters of its own text (blocks) */
    uint32_t own_commas;
    uint32_t p, img, li, input, embed, htext; /* subtree counts; htext: heading chars */
    uint32_t quote; /* blockquotes of 25+ characters, mostly not links: a quote, a tweet */
};

struct ctx {
    const struct xdom *d;
    struct nfo *f;
    struct arena *a;
    const char *title; /* the page's title, folded, for heading duplicates */
    float page_links;  /* share of the visible text that is link text */
    int rc;
};

/* The subtrees an attempt picked. */
struct pick {
    uint32_t *nodes; /* picked subtrees, in document order */
    uint32_t n;
};

/* Containers that, holding only inline content, are a paragraph. */
static inline bool tag_div_like(enum xtag t)
{
    return t == XTAG_div || t == XTAG_article || t == XTAG_main || t == XTAG_section;
}

static inline bool tag_is_heading(enum xtag t)
{
    return t >= XTAG_h1 && t <= XTAG_h6;
}

static inline bool extract_has_any(const char *s, const char *const *words, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (strstr(s, words[i]))
            return true;
    return false;
}

#define HAS_ANY(s, list) extract_has_any(s, list, sizeof list / sizeof list[0])

static inline float link_density(const struct nfo *n)
{
    return n->tlen ? (float)n->llen / (float)n->tlen : 0.0f;
}

/* extract_passes.c: subtree sums from scratch over what is not gone. */
void extract_sum_pass(struct ctx *c);
/* What an attempt with flags leaves out marked gone, then the sums over
 * the rest: every attempt (the main text, the bylines) starts so. */
void extract_attempt_pass(struct ctx *c, unsigned flags);

/* extract_clean.c: boilerplate inside root's subtree [root, end) dropped
 * (marked gone) as the attempt's flags allow; whether i has an ancestor
 * tagged t at most max_up levels up; s folded for comparisons (lower
 * ASCII, letters and digits only) into out. */
void extract_clean_pass(struct ctx *c, uint32_t root, uint32_t end, unsigned flags);
bool extract_has_ancestor_tag(const struct xdom *d, uint32_t i, enum xtag t, int max_up);
void extract_squash(struct buf *out, const char *s);
/* Heading i says what the page's title says (c->title; the shorter holds
 * at least three quarters of the longer), case, spaces and punctuation
 * aside: the headline that extract.c's scoring looks for and the clean
 * pass drops. */
bool extract_repeats_title(struct ctx *c, uint32_t i);

/* extract_byline.c: the byline the page's text shows, not the site's own
 * name; NULL when none. */
char *extract_byline_of_page(struct ctx *c, const char *site);
/* The metadata's author names the publisher, not a writer: a company's
 * legal form ("e.V.", "GmbH"), the site's name, the label of the page's
 * host ("tagesschau.de" on www.tagesschau.de), the editorial desk
 * ("Redaktion") or an account's login ("arianschlichenmayer"). url may be
 * NULL. */
bool extract_byline_is_publisher(const char *byline, const char *url, const char *site);
/* The page's author line where the metadata's author meta is NULL or the
 * publisher; NULL to keep meta. desc, the page's description, may be
 * NULL. */
char *extract_byline_over(struct ctx *c, const char *meta, const char *url, const char *site,
                          const char *desc);

/* extract_byline_voice.c: element i sits in a block whose class or id
 * starts with one of words[0..n) or in a <nav>, below the entry itself
 * (<article>, "hentry"); in a comment, a widget, a sidebar, a footer, a
 * teaser or a related articles' block, whose author lines are others'. */
bool extract_byline_in_block_of(const struct xdom *d, uint32_t i, const char *const *words,
                                size_t n);
bool extract_byline_other_voice(const struct xdom *d, uint32_t i);

/* extract_byline_agency.c: the news agency a paragraph credits after its
 * dateline's place ("Hamburg (dpa/lno) –") or at its end ("(FR mit
 * dpa)"), the first such paragraph outside comments and widgets; NULL
 * when none does. */
char *extract_byline_agency(struct ctx *c);

/* extract_byline_title.c: a writer the page's <title> credits after a
 * comma or a verb ("…, par Didier Roy (…)", "… reviewed by Mrs H Pyke");
 * NULL when it credits none. */
char *extract_byline_title(struct ctx *c, const char *site);
/* The writers a description names after the label it opens with ("Posted
 * by Jane Doe and John Roe - Team …"), cut as a byline is; NULL when it
 * opens with none. desc may be NULL. The caller checks they read as names. */
char *extract_byline_description(struct ctx *c, const char *desc, const char *site);

/* extract_kind.c: whether the page holds an article (docs/extraction.md
 * "Article or not"). */
bool extract_page_is_article(const struct ctx *c, const struct pick *pk, enum xmeta_kind kind,
                             const char *url, bool gate, size_t chars);

#endif
