/* NewsAPI's fixed vocabularies shared by the API, the CLI, ingestion, the
 * store and the text layer: the seven categories and the fourteen
 * languages, and the one language rule ("se", the NewsAPI source
 * catalogue's spelling of Swedish, is "sv"). One list each and one rule, so
 * a value cannot be valid in one place and refused or filed otherwise in
 * another. */
#ifndef NEWSD_UTIL_VOCAB_H
#define NEWSD_UTIL_VOCAB_H

#include <stdbool.h>

/* For messages: the categories as NewsAPI lists them. */
#define VOCAB_CATEGORY_LIST "business, entertainment, general, health, science, sports, technology"

/* The category named by s, compared ignoring ASCII case, as a static
 * lower-case string; NULL when s (or NULL) names none. */
const char *vocab_category(const char *s);

/* Whether s is a category as it is stored: one of the seven, lower case. */
bool vocab_is_category(const char *s);

/* For messages: the languages as NewsAPI lists them. */
#define VOCAB_LANGUAGE_LIST "ar, de, en, es, fr, he, it, nl, no, pt, ru, sv, ud, zh"

/* The language rule on a lower-case code: "sv" for "se", code itself for
 * any other (NULL stays NULL). */
const char *vocab_language_alias(const char *code);

/* The canonical form of a language code: s's two ASCII letters lowered,
 * then the rule above. False, with out "", when s (or NULL) is not two
 * ASCII letters. out may be s. */
bool vocab_language_code(const char *s, char out[3]);

/* The NewsAPI language named by s (either case; "se" is "sv"), as a static
 * lower-case string; NULL when s names none of the fourteen. */
const char *vocab_language(const char *s);

#endif
