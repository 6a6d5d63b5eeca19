/* NewsAPI vocabularies (util/vocab.h). */
#include "util/vocab.h"

#include <stddef.h>
#include <strings.h>

#include "util/banned.h"

static const char *const categories[] = {"business", "entertainment", "general",   "health",
                                         "science",  "sports",        "technology"};

const char *vocab_category(const char *s)
{
    for (size_t i = 0; s && i < sizeof categories / sizeof categories[0]; i++)
        if (strcasecmp(s, categories[i]) == 0)
            return categories[i];
    return NULL;
}
