/* NewsAPI's fixed vocabularies shared by the API, the CLI and ingestion:
 * the seven categories. One list, so a category cannot be valid in one
 * place and refused in another. */
#ifndef NEWSD_UTIL_VOCAB_H
#define NEWSD_UTIL_VOCAB_H

/* For messages: the categories as NewsAPI lists them. */
#define VOCAB_CATEGORY_LIST "business, entertainment, general, health, science, sports, technology"

/* The category named by s, compared ignoring ASCII case, as a static
 * lower-case string; NULL when s (or NULL) names none. */
const char *vocab_category(const char *s);

#endif
