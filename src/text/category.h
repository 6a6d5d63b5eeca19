/* The Unicode general categories the text module sorts code points by:
 * what the tokenizer keeps in a word and what the language guess counts
 * as a letter must be the same letters. Inline: both ask it of every code
 * point of every text indexed. */
#ifndef NEWSD_TEXT_CATEGORY_H
#define NEWSD_TEXT_CATEGORY_H

#include <stdbool.h>
#include <utf8proc.h>

/* A letter: Lu, Ll, Lt, Lm or Lo (a category of utf8proc_category). */
static inline bool text_category_letter(utf8proc_category_t c)
{
    switch (c) {
    case UTF8PROC_CATEGORY_LU:
    case UTF8PROC_CATEGORY_LL:
    case UTF8PROC_CATEGORY_LT:
    case UTF8PROC_CATEGORY_LM:
    case UTF8PROC_CATEGORY_LO:
        return true;
    default:
        return false;
    }
}

#endif
