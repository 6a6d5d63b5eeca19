/* A news agency's credit as the author of a page that names no one
 * (ingest/pages/extract_passes.h: extract_byline_agency): the code in
 * brackets that German and other wire copy prints after the dateline's
 * place ("Hamburg (dpa/lno) – Trotz …") or at the end of a paragraph
 * ("… hieß es. (FR mit dpa)"). The agency signs the text, and NewsAPI
 * itself gives agencies as the author ("Reuters"); a known agency's name
 * in the brackets is the evidence that they credit a source, not a party
 * ("(CDU)") or an aside. docs/extraction.md "Author". */
#include <stdint.h>
#include <string.h>

#include "ingest/pages/extract_passes.h"

#include "util/ascii.h"
#include "util/banned.h"

#define CREDIT_MAX 32          /* "(KNA/epd/dpa)", "(FR mit dpa)" */
#define CREDIT_OTHER_MAX 6     /* a desk's or region's code beside the agency: "lno", "FR" */
#define CREDIT_PLACE_MAX 40    /* "Frankfurt/Main", "Rio de Janeiro" */
#define CREDIT_PLACE_WORDS 3   /* spaces in the place, the one before "(" counted */
#define CREDIT_SENTENCE_MIN 80 /* text before a closing credit: a paragraph, no caption */
#define CREDIT_LINE_MAX 4096   /* bytes of a paragraph read */

/* Agencies whose code credits wire copy (case as they print it). */
static const char *const agencies[] = {
    "dpa",  "dpa-AFX", "AFP",          "AP",  "Reuters",   "KNA",   "epd",  "APA",
    "SDA",  "sda",     "Keystone-SDA", "dts", "kathpress", "EFE",   "ANSA", "Kyodo",
    "Jiji", "JIJI",    "ddp",          "AFX", "TASS",      "Belga", "ANP",  "PAP",
    "KAP",  "AWP",     "SID",          "sid", "PTI",       "IANS",  "UPI"};

/* Words that join codes in a credit: "FR mit dpa", "AFP und dpa". */
static const char *const joins[] = {"mit", "und", "and", "with", "et", "y"};

static bool word_in(const char *w, size_t n, const char *const *list, size_t len)
{
    for (size_t k = 0; k < len; k++)
        if (strlen(list[k]) == n && memcmp(w, list[k], n) == 0)
            return true;
    return false;
}

/* s[0..n), the inside of the brackets, credits an agency: codes split by
 * "/", ", " or a joining word, each an agency or a short code of letters,
 * one at least an agency. */
static bool is_agency_credit(const char *s, size_t n)
{
    if (n == 0 || n > CREDIT_MAX)
        return false;
    bool agency = false;
    for (size_t i = 0; i < n;) {
        size_t w = 0;
        while (i + w < n && (ascii_is_alpha(s[i + w]) || s[i + w] == '-'))
            w++;
        if (w == 0)
            return false;
        if (word_in(s + i, w, agencies, sizeof agencies / sizeof agencies[0]))
            agency = true;
        else if (w > CREDIT_OTHER_MAX)
            return false;
        i += w;
        /* the separator: "/", ", ", " / ", or a joining word between spaces */
        size_t j = i;
        while (j < n && (s[j] == ' ' || s[j] == '/' || s[j] == ','))
            j++;
        if (j == n)
            return i == n && agency; /* no separator may end it */
        if (j == i)
            return false;
        bool slash = memchr(s + i, '/', j - i) || memchr(s + i, ',', j - i);
        if (!slash) { /* spaces alone: a joining word must follow */
            size_t v = 0;
            while (j + v < n && ascii_is_alpha(s[j + v]))
                v++;
            if (!word_in(s + j, v, joins, sizeof joins / sizeof joins[0]) || j + v >= n ||
                s[j + v] != ' ')
                return false;
            j += v + 1;
        }
        i = j;
    }
    return false;
}

/* The credit in a paragraph's text line[0..n) into *at, *len: after the
 * dateline's place at its start ("Hamburg (dpa/lno) – …", "Wiesbaden
 * (KNA/iz). …") or closing it after a sentence ("… hieß es. (FR mit
 * dpa)"); false when it has none. */
static bool agency_credit(const char *line, size_t n, const char **at, size_t *len)
{
    /* the place: capitalised words, "/" and "-" inside them */
    size_t p = 0, spaces = 0;
    if (n > 0 && (ascii_is_upper(line[0]) || (unsigned char)line[0] >= 0xC3)) {
        while (p < n && p <= CREDIT_PLACE_MAX && spaces <= CREDIT_PLACE_WORDS && line[p] != '(' &&
               line[p] != '.' && line[p] != ',' && !ascii_is_digit(line[p]))
            spaces += line[p++] == ' ';
    }
    if (p > 1 && p < n && line[p] == '(' && line[p - 1] == ' ') {
        const char *close = memchr(line + p, ')', n - p);
        if (close) {
            const char *after = close + 1;
            size_t rest = n - (size_t)(after - line);
            bool dashed = (rest >= 2 && after[0] == ' ' && after[1] == '-') ||
                          (rest >= 4 && after[0] == ' ' &&
                           (memcmp(after + 1, "\xe2\x80\x93", 3) == 0 ||
                            memcmp(after + 1, "\xe2\x80\x94", 3) == 0)) ||
                          (rest >= 1 && (after[0] == '.' || after[0] == ':'));
            if (dashed && is_agency_credit(line + p + 1, (size_t)(close - line) - p - 1)) {
                *at = line + p + 1;
                *len = (size_t)(close - line) - p - 1;
                return true;
            }
        }
    }
    while (n > 0 && line[n - 1] == ' ')
        n--;
    if (n < CREDIT_SENTENCE_MIN || line[n - 1] != ')')
        return false;
    size_t open = n - 1;
    while (open > 0 && line[open] != '(' && n - open <= CREDIT_MAX + 2)
        open--;
    if (line[open] != '(' || open < CREDIT_SENTENCE_MIN || line[open - 1] != ' ')
        return false;
    if (!is_agency_credit(line + open + 1, n - open - 2))
        return false;
    *at = line + open + 1;
    *len = n - open - 2;
    return true;
}

char *extract_byline_agency(struct ctx *c)
{
    const struct xdom *d = c->d;
    struct buf b;
    buf_init(&b, 0);
    char *found = NULL;
    for (uint32_t i = 1; i < d->n && !found; i++) {
        if (d->nodes[i].tag != XTAG_p || c->f[i].gone || c->f[i].tlen == 0)
            continue;
        buf_reset(&b);
        xdom_text_line(d, i, &b, CREDIT_LINE_MAX);
        const char *at;
        size_t len;
        /* the credit first: another voice's block is an ancestors' walk */
        if (!buf_error(&b) && b.data && agency_credit(b.data, b.len, &at, &len) &&
            !extract_byline_other_voice(d, i))
            found = xtext_clean(c->a, at, len, EXTRACT_MAX_FIELD, false, &c->rc);
    }
    buf_release(&b);
    return found;
}
