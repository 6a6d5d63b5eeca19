/* What a page adds to an article (ingest/pages/pages.h: page_fill): the
 * article's own fields win where they say something, the page fills the
 * gaps (issue 16). One mapping for every path from a page to an article:
 * the WARC import (an article made from the page alone) and the crawler's
 * page fetches (a feed item completed by its page). */
#include "ingest/pages/pages.h"

#include <string.h>

#include "ingest/ingest.h"
#include "util/vocab.h"

#include "util/banned.h"

static bool empty(const char *s)
{
    return !s || !s[0];
}

bool page_language(const char *tag, char out[3])
{
    out[0] = '\0';
    if (!tag || strlen(tag) < 2 || (tag[2] != '\0' && tag[2] != '-' && tag[2] != '_'))
        return false;
    char code[3] = {tag[0], tag[1], '\0'};
    return vocab_language_code(code, out);
}

unsigned page_fill(struct article *art, const struct extracted_page *pg, bool dated)
{
    unsigned filled = 0;
    /* A feed's content that only repeats its description is no text of
     * its own (feeds give one or the other; the crawler copies). */
    bool content_is_summary = !empty(art->content) && !empty(art->description) &&
                              strcmp(art->content, art->description) == 0;
    if (pg->text_len > 0 && (empty(art->content) || content_is_summary)) {
        art->content = pg->text;
        filled |= PAGE_FILLED_CONTENT;
    }
    if (empty(art->description) && pg->excerpt) {
        art->description = pg->excerpt;
        filled |= PAGE_FILLED_DESCRIPTION;
    }
    if (empty(art->url_to_image) && pg->image) {
        art->url_to_image = pg->image;
        filled |= PAGE_FILLED_IMAGE;
    }
    if (empty(art->author) && pg->byline) {
        art->author = pg->byline;
        filled |= PAGE_FILLED_AUTHOR;
    }
    if (!dated && pg->published_at) {
        art->published_at = pg->published_at;
        filled |= PAGE_FILLED_PUBLISHED;
    }
    if (!art->language[0] && page_language(pg->lang, art->language))
        filled |= PAGE_FILLED_LANGUAGE;
    return filled;
}
