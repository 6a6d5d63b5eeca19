/* text_detect_language() of text.h.
 * Scripts that identify a language on their own (Han, Hebrew, Arabic/Urdu)
 * are settled by counting letters; Latin and Cyrillic text is compared with
 * libexttextcat's n-gram models (its fingerprint API, with the .lm files of
 * the API's languages and their neighbours, not textcat_Classify over all
 * 160 models, which answers UNKNOWN for most short headlines). The models
 * are loaded once and only read afterwards, so no lock is needed. Input is
 * capped at DETECT_MAX_BYTES: this runs per imported article. */
#include "text/text.h"

#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <fingerprint.h>
#include <utf8proc.h>

#include "text/category.h"
#include "util/utf8.h"

#include "util/banned.h"

#define DETECT_MAX_BYTES 1000
#define TEXTCAT_DIR "/usr/share/libexttextcat/"
#define TEXTCAT_NGRAMS 400 /* n-grams per profile, as textcat itself uses */

/* The n-gram models compared, per script: the API's languages plus their
 * near neighbours, so that e.g. a Polish text is recognised as such (and
 * gets "") instead of being forced onto the closest API language. api is
 * the API code, "" for a neighbour. Danish counts as Norwegian: no API
 * country writes Danish, and real Norwegian (Bokmål) headlines are closer
 * to textcat's Danish model than to its Bokmål one (measured: 140 of 166
 * Norwegian headlines of the sample data). */
struct model {
    const char *file, *api;
};

static const struct model latin_models[] = {
    {"en", "en"}, {"de", "de"}, {"fr", "fr"}, {"es", "es"}, {"it", "it"},    {"nl", "nl"},
    {"pt", "pt"}, {"sv", "sv"}, {"nb", "no"}, {"nn", "no"}, {"da", "no"},    {"ca", ""},
    {"gl", ""},   {"ro", ""},   {"af", ""},   {"fy", ""},   {"lb", ""},      {"pl", ""},
    {"cs", ""},   {"sk", ""},   {"hr", ""},   {"sl", ""},   {"sr-Latn", ""}, {"bs", ""},
    {"tr", ""},   {"id", ""},   {"ms", ""},   {"hu", ""},   {"fi", ""},      {"et", ""},
    {"lt", ""},   {"lv", ""},   {"sq", ""},   {"eu", ""},   {"is", ""},      {"oc", ""},
    {"ga", ""},   {"cy", ""},   {"mt", ""},   {"vi", ""},   {"tl", ""},      {"sw", ""},
    {"eo", ""},   {"la", ""},
};

static const struct model cyrillic_models[] = {
    {"ru", "ru"}, {"uk", ""}, {"bg", ""}, {"sr-Cyrl", ""}, {"mk", ""}, {"be", ""}, {"kk", ""},
};

#define LATIN_COUNT (sizeof latin_models / sizeof latin_models[0])
#define CYRILLIC_COUNT (sizeof cyrillic_models / sizeof cyrillic_models[0])

/* Loaded once; read-only afterwards, so shared by all threads. A model
 * that failed to load stays NULL and is skipped. */
static pthread_once_t models_once = PTHREAD_ONCE_INIT;
static void *latin_fp[LATIN_COUNT];
static void *cyrillic_fp[CYRILLIC_COUNT];

static void models_load_set(const struct model *m, size_t n, void **fp)
{
    char path[256];
    for (size_t i = 0; i < n; i++) {
        int len = snprintf(path, sizeof path, TEXTCAT_DIR "%s.lm", m[i].file);
        fp[i] = NULL;
        if (len < 0 || (size_t)len >= sizeof path)
            continue;
        fp[i] = fp_Init(m[i].file);
        if (fp[i] != NULL && fp_Read(fp[i], path, TEXTCAT_NGRAMS) == 0) {
            fp_Done(fp[i]);
            fp[i] = NULL;
        }
    }
}

static void models_load(void)
{
    models_load_set(latin_models, LATIN_COUNT, latin_fp);
    models_load_set(cyrillic_models, CYRILLIC_COUNT, cyrillic_fp);
}

/* Letter counts per script over the (capped) text. */
struct script_counts {
    unsigned latin, cyrillic, greek, hebrew, arabic, han, kana, hangul, other;
    unsigned urdu;        /* letters only Urdu uses among Arabic-script languages */
    unsigned persian;     /* letters of Persian/Urdu absent from Arabic */
    unsigned arabic_only; /* ة ى and friends, Arabic but not Persian/Urdu */
    unsigned cyr_other;   /* і ї є ґ ў ђ ј љ њ ћ џ ѓ ќ ѕ: not Russian */
    unsigned hard_sign;   /* ъ not before е ё ю я: a vowel, so Bulgarian not Russian */
    unsigned yery;        /* ы э: Russian, absent from Bulgarian */
};

static void script_count(struct script_counts *sc, int32_t cp)
{
    if (cp < 0x0250) {
        sc->latin++;
    } else if (cp >= 0x0370 && cp <= 0x03FF) {
        sc->greek++;
    } else if (cp >= 0x0400 && cp <= 0x052F) {
        sc->cyrillic++;
        if (cp == 0x0456 || cp == 0x0457 || cp == 0x0454 || cp == 0x0491 || cp == 0x045E ||
            cp == 0x0452 || cp == 0x0458 || cp == 0x0459 || cp == 0x045A || cp == 0x045B ||
            cp == 0x045F || cp == 0x0453 || cp == 0x045C || cp == 0x0455)
            sc->cyr_other++;
        if (cp == 0x044B || cp == 0x042B || cp == 0x044D || cp == 0x042D)
            sc->yery++;
    } else if (cp >= 0x0590 && cp <= 0x05FF) {
        sc->hebrew++;
    } else if ((cp >= 0x0600 && cp <= 0x06FF) || (cp >= 0x0750 && cp <= 0x077F)) {
        sc->arabic++;
        /* ٹ ڈ ڑ ں ے ۓ ھ: Urdu letters that Arabic and Persian do not use */
        if (cp == 0x0679 || cp == 0x0688 || cp == 0x0691 || cp == 0x06BA || cp == 0x06D2 ||
            cp == 0x06D3 || cp == 0x06BE)
            sc->urdu++;
        /* پ چ ژ گ ک ی */
        if (cp == 0x067E || cp == 0x0686 || cp == 0x0698 || cp == 0x06AF || cp == 0x06A9 ||
            cp == 0x06CC)
            sc->persian++;
        /* ة ى ي ك */
        if (cp == 0x0629 || cp == 0x0649 || cp == 0x064A || cp == 0x0643)
            sc->arabic_only++;
    } else if ((cp >= 0x3400 && cp <= 0x4DBF) || (cp >= 0x4E00 && cp <= 0x9FFF) ||
               (cp >= 0xF900 && cp <= 0xFAFF) || (cp >= 0x20000 && cp <= 0x323AF)) {
        sc->han++;
    } else if ((cp >= 0x3041 && cp <= 0x30FF) || (cp >= 0x31F0 && cp <= 0x31FF) ||
               (cp >= 0xFF66 && cp <= 0xFF9F)) {
        sc->kana++;
    } else if ((cp >= 0xAC00 && cp <= 0xD7AF) || (cp >= 0x1100 && cp <= 0x11FF) ||
               (cp >= 0x3130 && cp <= 0x318F)) {
        sc->hangul++;
    } else if (cp >= 0x1E00 && cp <= 0x1EFF) {
        sc->latin++;
    } else if (cp >= 0x1F00 && cp <= 0x1FFF) {
        sc->greek++;
    } else {
        sc->other++;
    }
}

/* The closest model by textcat's out-of-place distance decides; when it
 * is a neighbour but an API language scores within `margin` of it, the API
 * language is taken (headlines are short and full of names, so close calls
 * between neighbours are frequent). Any score above margin × best cannot
 * matter, so it is the cut-off that lets fp_Compare stop early. */
static void textcat_guess(const char *s, size_t n, const struct model *m, void *const *fp,
                          size_t count, double margin, char out[3])
{
    void *doc;
    sint4 best = INT32_MAX, best_api = INT32_MAX;
    size_t best_i = count, api_i = count;

    out[0] = '\0';
    pthread_once(&models_once, models_load);
    doc = fp_Init(NULL);
    if (doc == NULL)
        return;
    fp_SetProperty(doc, TCPROP_UTF8AWARE, TC_TRUE);
    fp_SetProperty(doc, TCPROP_MINIMUM_DOCUMENT_SIZE, 1);
    if (fp_Create(doc, s, (uint4)n, TEXTCAT_NGRAMS) != 0) {
        for (size_t i = 0; i < count; i++) {
            double cut = (double)best * margin;
            sint4 score;
            if (fp[i] == NULL)
                continue;
            score = fp_Compare(fp[i], doc, cut >= INT32_MAX ? INT32_MAX : (int)cut);
            if (score < best) {
                best = score;
                best_i = i;
            }
            if (m[i].api[0] != '\0' && score < best_api) {
                best_api = score;
                api_i = i;
            }
        }
    }
    fp_Done(doc);
    if (best_i == count)
        return;
    if (m[best_i].api[0] != '\0')
        memcpy(out, m[best_i].api, 3);
    else if (api_i < count && (double)best_api <= (double)best * margin)
        memcpy(out, m[api_i].api, 3);
}

void text_detect_language(const char *s, size_t n, char out[3])
{
    struct script_counts sc;
    unsigned letters, cjk;
    /* textcat reads past the end of a truncated UTF-8 sequence (found by
     * fuzz_tokenizer), so it only ever sees this well-formed copy */
    char clean[DETECT_MAX_BYTES + 1];
    size_t i = 0, clen = 0;
    bool after_hard_sign = false;

    memset(&sc, 0, sizeof sc);
    out[0] = '\0';
    n = utf8_cut(s, n, DETECT_MAX_BYTES); /* do not cut a code point in two */
    while (i < n) {
        utf8proc_int32_t cp;
        utf8proc_ssize_t used =
            utf8proc_iterate((const utf8proc_uint8_t *)s + i, (utf8proc_ssize_t)(n - i), &cp);
        if (used <= 0) {
            clean[clen++] = ' ';
            i++;
            continue;
        }
        memcpy(clean + clen, s + i, (size_t)used);
        clen += (size_t)used;
        i += (size_t)used;
        if (after_hard_sign && cp != 0x0435 && cp != 0x0451 && cp != 0x044E && cp != 0x044F &&
            cp != 0x0415 && cp != 0x0401 && cp != 0x042E && cp != 0x042F)
            sc.hard_sign++;
        after_hard_sign = cp == 0x044A || cp == 0x042A;
        if (text_category_letter(utf8proc_category(cp)))
            script_count(&sc, cp);
    }
    clean[clen] = '\0';
    if (after_hard_sign)
        sc.hard_sign++;
    letters = sc.latin + sc.cyrillic + sc.greek + sc.hebrew + sc.arabic + sc.han + sc.kana +
              sc.hangul + sc.other;
    if (letters == 0)
        return;
    cjk = sc.han + sc.kana + sc.hangul;
    /* A Chinese headline often carries Latin brand names: a CJK share of a
     * quarter of the letters is already a CJK text. */
    if (cjk * 4 >= letters) {
        /* Japanese mixes kana into every sentence; Chinese headlines
         * borrow one now and then (の) */
        if (sc.kana * 10 < sc.han && sc.hangul * 4 < cjk)
            memcpy(out, "zh", 3);
        return; /* Japanese and Korean are not API languages */
    }
    if (sc.hebrew * 2 > letters) {
        memcpy(out, "he", 3);
        return;
    }
    if (sc.arabic * 2 > letters) {
        if (sc.urdu > 0)
            memcpy(out, "ud", 3);
        else if (sc.persian <= sc.arabic_only)
            memcpy(out, "ar", 3);
        return; /* Persian and other Arabic-script languages */
    }
    if (sc.cyrillic * 2 > letters) {
        /* Letters of Ukrainian, Belarusian, Serbian or Macedonian rule out
         * Russian; otherwise textcat separates Russian from Bulgarian. */
        if (sc.cyr_other > 0)
            return;
        if (sc.hard_sign > 0 && sc.yery == 0)
            return; /* ъ as a vowel and no ы or э: Bulgarian (measured on the sample) */
        textcat_guess(clean, clen, cyrillic_models, cyrillic_fp, CYRILLIC_COUNT, 1.0, out);
        return;
    }
    if (sc.latin * 2 > letters)
        textcat_guess(clean, clen, latin_models, latin_fp, LATIN_COUNT, 1.02, out);
}
