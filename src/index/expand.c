/* Query expansion (index/expand.h). */
#include "index/expand.h"

#include <string.h>

#include "text/text.h"
#include "text/text_fts5.h"
#include "util/limits.h"
#include "util/banned.h"

static const char *const stemmed_langs[INDEX_EXPAND_LANGS] = {"ar", "de", "en", "es", "fr", "it",
                                                              "nl", "no", "pt", "ru", "sv"};

void index_expand_langs(const char *const *language, const char *const **langs, size_t *n)
{
    if (*language && text_lang_has_stemmer(*language)) {
        *langs = language;
        *n = 1;
        return;
    }
    *langs = stemmed_langs;
    *n = INDEX_EXPAND_LANGS;
}

static bool form_seen(const char *const *forms, size_t n, const char *f)
{
    for (size_t i = 0; i < n; i++) {
        if (strcmp(forms[i], f) == 0)
            return true;
    }
    return false;
}

int index_expand_word(struct arena *a, const char *const *langs, size_t n_langs, const char *tok,
                      const char *forms[INDEX_EXPAND_FORMS_MAX], size_t *n, struct err *err)
{
    size_t n_forms = 0, len = strlen(tok);
    char stem[LIMIT_TOKEN_BYTES + 1]; /* as the tokenizer's: longer stems are never indexed */

    if (n_langs > INDEX_EXPAND_LANGS)
        n_langs = INDEX_EXPAND_LANGS;
    forms[n_forms++] = tok;
    for (size_t i = 0; i < n_langs; i++) {
        int k = text_stem(langs[i], tok, len, stem, sizeof stem);
        if (k == ERR_TOO_LARGE || k == 0)
            continue;
        if (k < 0)
            return err_set(err, k, "cannot stem a query word");
        if (!form_seen(forms, n_forms, stem)) {
            char *f = arena_strndup(a, stem, (size_t)k);
            if (f == NULL)
                return err_set(err, ERR_NOMEM, "out of memory");
            forms[n_forms++] = f;
        }
        char *tilde = arena_printf(a, "%s%s", TEXT_FTS5_STEM_PREFIX, stem);
        if (tilde == NULL)
            return err_set(err, ERR_NOMEM, "out of memory");
        if (!form_seen(forms, n_forms, tilde))
            forms[n_forms++] = tilde;
    }
    *n = n_forms;
    return 0;
}
