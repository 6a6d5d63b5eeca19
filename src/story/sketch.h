/* What two articles are compared by (docs/stories.md): a MinHash sketch of
 * the word shingles of title + description + text, a key of the
 * normalised title and a key of the URL that is the same across its
 * http/https, www./m./amp. and AMP-path variants. Pure functions over the
 * project's tokenizer (text/text.h): no state, thread-safe. Every input
 * may be NULL, empty, huge or not UTF-8. */
#ifndef NEWSD_STORY_SKETCH_H
#define NEWSD_STORY_SKETCH_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Slots of a sketch. 64 one-permutation MinHash values give a similarity
 * estimate with a standard error of about 0.06 at 0.5; the LSH index cuts
 * them into STORY_LSH_BANDS bands. */
#define STORY_SKETCH_K 64
/* Words per shingle: pairs keep a rewrite's reordered sentences close and
 * still tell "police shot man" from "man shot police". */
#define STORY_SHINGLE_WORDS 2
/* Words read per article: the start of a text decides whether two copies
 * are one story, and the cost of a sketch stays flat (full texts of
 * thousands of words import as fast as NewsAPI's 200-character excerpts). */
#define STORY_SKETCH_MAX_WORDS 400
/* Fewer shingles than this: too little text to compare (a title alone);
 * such a sketch never matches by similarity. */
#define STORY_SKETCH_MIN_SHINGLES 8

struct story_sketch {
    uint32_t slot[STORY_SKETCH_K];
    uint32_t shingles; /* distinct shingle hashes seen (capped by the word limit) */
};

/* The sketch of an article's text. content's NewsAPI tail "… [+N chars]"
 * and a title's " - Publisher" tail are left out, tags count as words. */
void story_sketch_build(struct story_sketch *out, const char *title, const char *description,
                        const char *content);

/* story_sketch_build and story_title_key(title) (returned) in one pass
 * over the title. */
uint64_t story_sketch_build_titled(struct story_sketch *out, const char *title,
                                   const char *description, const char *content);

/* Estimated Jaccard similarity of the two shingle sets, 0..1; 0 when
 * either sketch has too few shingles. */
double story_sketch_similarity(const struct story_sketch *a, const struct story_sketch *b);

/* A key of the title with its publisher tail (" - BBC News", " | CNN")
 * dropped, case folded, punctuation ignored; 0 when fewer than
 * STORY_TITLE_MIN_WORDS words remain (short titles repeat by chance:
 * "Live updates", "Morning Scan"). */
#define STORY_TITLE_MIN_WORDS 5
uint64_t story_title_key(const char *title);

/* A key of a URL equal across its variants: scheme, a leading www., m. or
 * amp. label, an /amp path segment or .amp(.html) ending, an amp=1 /
 * outputType=amp parameter, a trailing slash and the fragment; of a
 * Google News redirect link, the publisher's URL in it (story/publisher.h).
 * 0 for NULL or "". */
uint64_t story_url_key(const char *url);

/* A key of the URL's site: the name label of its host, without the
 * subdomains and the public suffix (news.yahoo.com and ca.yahoo.com,
 * bbc.co.uk and bbc.com, derstandard.at and derstandard.de are one site:
 * the label left of the last one, or of the last two when that one is a
 * generic second level like co, com, org, go; a Google News link: its
 * publisher's site); 0 for NULL or "". Sketch
 * similarity is trusted only across sites: one site's pages share their
 * boiler-plate (a consent wall, a paywall, an hourly bulletin's blurb),
 * also across its country domains and subdomains, and one site's real
 * copies share a URL or a title. */
uint64_t story_site_key(const char *url);

/* The id of a story that url (an article's canonical url) founds: a
 * positive 63-bit value, never 0. Every node computes the same one. */
int64_t story_id_for_url(const char *url);

#endif
