/* HTML (or plain text) to normalised plain text, as feeds' titles,
 * descriptions and article bodies need it. Invariants of every output:
 * well-formed UTF-8 (invalid input bytes become U+FFFD), no control
 * characters but '\n', no leading or trailing white space, no run of white
 * space longer than one character (a line break wins over a space), at most
 * max_out bytes, cut on a code point boundary. Entities are decoded, tags
 * dropped, block elements and <br> become line breaks (spaces in one-line
 * mode), script, style and similar invisible elements are dropped with their
 * content. Uses libxml2's HTML parser in recover mode; never touches the
 * network. Thread-safe (no global state of ours). */
#ifndef NEWSD_INGEST_HTML_TEXT_H
#define NEWSD_INGEST_HTML_TEXT_H

#include <stdbool.h>
#include <stddef.h>

#include "util/arena.h"

enum html_text_flags {
    HTML_TEXT_ONE_LINE = 1 << 0, /* line breaks become spaces (titles, names) */
    HTML_TEXT_PLAIN = 1 << 1,    /* input is text, not HTML: only normalise */
};

struct html_text_out {
    char *text;      /* NUL-terminated, in the arena; "" when nothing is left */
    size_t len;      /* bytes of text */
    bool truncated;  /* max_out cut the text short */
    char *first_img; /* src of the first <img>, as written (maybe relative), or NULL */
};

/* Convert in[0..len) to plain text in the arena. max_out bounds the output
 * in bytes (0 = no bound besides the arena's). in need not be valid UTF-8 or
 * NUL-terminated. Returns 0, or ERR_NOMEM (arena ceiling or malloc). */
int html_text_extract(struct arena *a, const char *in, size_t len, size_t max_out, unsigned flags,
                      struct html_text_out *out);

#endif
