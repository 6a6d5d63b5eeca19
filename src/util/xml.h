/* Writing XML text and attribute values: the five markup characters
 * escaped, and what XML 1.0 cannot carry (control characters other than
 * tab, newline and carriage return; U+FFFE and U+FFFF) written as '?', so
 * that any string stored from a feed or a page makes a well-formed
 * document; bytes that are not well-formed UTF-8 become U+FFFD. One copy
 * for every XML newsd writes: OPML exports and the search feeds. */
#ifndef NEWSD_UTIL_XML_H
#define NEWSD_UTIL_XML_H

#include <stddef.h>

#include "util/buf.h"

/* s[0..n) as element text: & < > escaped. */
void xml_text(struct buf *b, const char *s, size_t n);

/* s[0..n) as an attribute value between double quotes: & < > " escaped,
 * and tab, newline and carriage return as character references (an
 * attribute would otherwise normalise them to spaces). */
void xml_attr(struct buf *b, const char *s, size_t n);

#endif
