/* NewsAPI vocabularies (util/vocab.h). */
#include "util/vocab.h"

#include <stddef.h>
#include <string.h>
#include <strings.h>

#include "util/ascii.h"

#include "util/banned.h"

static const char *const categories[] = {"business", "entertainment", "general",   "health",
                                         "science",  "sports",        "technology"};

static const char *const languages[] = {"ar", "de", "en", "es", "fr", "he", "it",
                                        "nl", "no", "pt", "ru", "sv", "ud", "zh"};

#define COUNT(a) (sizeof(a) / sizeof((a)[0]))

const char *vocab_category(const char *s)
{
    for (size_t i = 0; s && i < COUNT(categories); i++)
        if (strcasecmp(s, categories[i]) == 0)
            return categories[i];
    return NULL;
}

bool vocab_is_category(const char *s)
{
    for (size_t i = 0; s && i < COUNT(categories); i++)
        if (strcmp(s, categories[i]) == 0)
            return true;
    return false;
}

const char *vocab_language_alias(const char *code)
{
    return code && strcmp(code, "se") == 0 ? "sv" : code;
}

bool vocab_language_code(const char *s, char out[3])
{
    if (!s || !ascii_is_alpha(s[0]) || !ascii_is_alpha(s[1]) || s[2] != '\0') {
        out[0] = '\0';
        return false;
    }
    char code[3] = {ascii_lower(s[0]), ascii_lower(s[1]), '\0'};
    memcpy(out, vocab_language_alias(code), 3);
    return true;
}

const char *vocab_language(const char *s)
{
    char code[3];
    if (!vocab_language_code(s, code))
        return NULL;
    for (size_t i = 0; i < COUNT(languages); i++)
        if (strcmp(code, languages[i]) == 0)
            return languages[i];
    return NULL;
}
