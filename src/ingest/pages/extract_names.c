/* The author's name in a byline (ingest/pages/extract_internal.h:
 * xmeta_byline_clean, xmeta_label_is_author): the labels before the names
 * ("By", "Veröffentlicht von") and what follows them (a date, "| 3
 * comments", a role) cut off, and what names no one refused (a URL, a
 * stand-in such as "Staff", a label left alone, the site's own name, a
 * sentence). docs/extraction.md "Author" says what and why. */
#include "ingest/pages/extract_internal.h"

#include <stdbool.h>
#include <stddef.h>
#include <string.h>
#include <strings.h>

#include "ingest/pages/pages.h"
#include "util/ascii.h"

#include "util/banned.h"

/* Words a byline writes before the names ("By", "Veröffentlicht von",
 * "Zeige alle Beiträge von"), longest first where one starts another. */
static const char *const byline_labels[] = {
    "zeige alle beiträge von", "alle beiträge von", "view all posts by", "all posts by",
    "ein artikel von", "ein beitrag von", "blog beitrag von", "beitrag von", "alles von",
    "mehr von", "eingestellt von", "gespeichert von", "veröffentlicht von", "geschrieben von",
    "verfasst von", "written by", "posted by", "published by", "publié par", "escrito por",
    "publicado por", "napisał", "autoren", "autor/in", "autorin", "autor", "auteur", "author",
    "text von", "text:", "redaktion:", "von", "vom", "by", "par", "por", "door",
    /* Chinese news' "责任编辑：" (editor in charge), "作者：", "记者：" (reporter),
     * and "记者" glued to the name: "作者： 记者王敬照" */
    "\xe8\xb4\xa3\xe4\xbb\xbb\xe7\xbc\x96\xe8\xbe\x91\xef\xbc\x9a",
    "\xe4\xbd\x9c\xe8\x80\x85\xef\xbc\x9a", "\xe8\xae\xb0\xe8\x80\x85\xef\xbc\x9a",
    "\xe8\xae\xb0\xe8\x80\x85"};

/* Where a byline's names end: a date, a place, a separator. */
static const char *const byline_stops[] = {
    " · ", "•", " | ", "|", " - ", " – ", " — ", " / ", "→", " @", /* a handle after the name */
    " am ", " on ", " le ", " el ", " in ", " at ", " um ", ", Datum",
    " Datum:", /* the date's label */
    /* a credit for the pictures after the writer's */
    " Illustration von ", " Illustrationen von ", " Illustration: ", " Fotos von ", " Foto von ",
    " Fotos: ", " Foto: ", " Photos: ", " Photo: ", " Photos by ", " Photo by ",
    " Illustrations by "};

/* Months that, a day after them, start the date after the names. */
static const char *const byline_months[] = {
    " January ", " February ",  " March ",   " April ",    " May ",      " June ",    " July ",
    " August ",  " September ", " October ", " November ", " December ", " Januar ",  " Februar ",
    " März ",    " Mai ",       " Juni ",    " Juli ",     " Oktober ",  " Dezember "};

/* Bylines that name no one (lower case). "Redaktion" is not among them:
 * a desk the page prints as its byline is an author, as NewsAPI's own
 * "Reuters" or "BBC News" are (extract_byline.c lets a writer replace it). */
static const char *const byline_nobody[] = {
    "staff", "admin", "administrator", "editor", "editors", "anonymous", "unknown", "guest",
    "posted on", "published on", "veröffentlicht am", "publiziert am", "last updated", "updated",
    "sign in", "log in", "login",
    /* a label whose name is elsewhere */
    "veröffentlicht", "published", "posted", "stand", "alle beiträge", "no author", "datum",
    "quelle", "source",
    /* a social network's button beside the name */
    "follow", "folgen",
    /* a date's month, cut from its day */
    "january", "february", "march", "april", "may", "june", "july", "august", "september",
    "october", "november", "december", "januar", "februar", "märz", "mai", "juni", "juli",
    "oktober", "dezember"};

#define BYLINE_MAX_WORDS 8
#define BYLINE_MAX_LIST_WORDS 16 /* "Nathan Parker, Varun Khaneja, Eric Mill and Kiran C Nair" */

/* Every word of s[0..n) starts with a capital but "and", "und", "et", "y"
 * and "&": a list of names, where a sentence or a bio has small words. */
static bool names_only(const char *s, size_t n)
{
    static const char *const joins[] = {"and", "und", "et", "y", "&"};
    for (size_t i = 0; i < n;) {
        size_t w = 0;
        while (i + w < n && s[i + w] != ' ')
            w++;
        unsigned char c = (unsigned char)s[i];
        bool ok = w == 0 || (c >= 'A' && c <= 'Z') || c >= 0xC3;
        for (size_t k = 0; k < sizeof joins / sizeof joins[0] && !ok; k++)
            ok = strlen(joins[k]) == w && memcmp(s + i, joins[k], w) == 0;
        if (!ok)
            return false;
        i += w + 1;
    }
    return true;
}

/* s starts with label as a whole word (ASCII case aside). */
static size_t label_at(const char *s, const char *label)
{
    size_t n = strlen(label);
    if (strncasecmp(s, label, n) != 0)
        return 0;
    unsigned char c = (unsigned char)s[n];
    /* "AuthorAndreas Kalt": a label glued to the name (two elements) */
    bool glued = (c >= 'A' && c <= 'Z') || (c >= 0xC3 && c < 0xF5);
    return c == '\0' || c == ' ' || c == ':' || c == ',' || glued ? n : 0;
}

bool xmeta_label_is_author(const char *s)
{
    size_t n = strlen(s);
    while (n > 0 && (s[n - 1] == ' ' || s[n - 1] == ':'))
        n--;
    for (size_t k = 0; k < sizeof byline_labels / sizeof byline_labels[0]; k++)
        if (strlen(byline_labels[k]) == n && label_at(s, byline_labels[k]) == n)
            return true;
    return false;
}

static bool byline_separator(char c)
{
    return c == ' ' || c == ':' || c == ',' || c == '|' || c == '-' || c == ';' || c == '~';
}

/* s[0..n) less a weekday's abbreviation that ends it, before a date's day
 * ("Heiko Sauer Do 9 Apr 2020", "Jane Doe, Thu 3 May"). */
static size_t before_weekday(const char *s, size_t n)
{
    static const char *const days[] = {"Mo",  "Di",  "Mi",  "Do",  "Fr",  "Sa",  "So",
                                       "Mon", "Tue", "Wed", "Thu", "Fri", "Sat", "Sun"};
    for (size_t k = 0; k < sizeof days / sizeof days[0]; k++) {
        size_t w = strlen(days[k]);
        if (n > w + 1 && s[n - w - 1] == ' ' && memcmp(s + n - w, days[k], w) == 0) {
            n -= w + 1;
            while (n > 0 && (s[n - 1] == ',' || s[n - 1] == ' '))
                n--;
            return n;
        }
    }
    return n;
}

char *xmeta_byline_clean(struct arena *a, const char *s, const char *site, int *rc)
{
    if (!s)
        return NULL;
    /* "Posted on September 21, 2020 by Adi Tzlil": the date first, the
     * names after its "by" */
    static const char *const dated[][2] = {{"posted on ", " by "},
                                           {"published on ", " by "},
                                           {"veröffentlicht am ", " von "},
                                           {"publié le ", " par "}};
    for (size_t k = 0; k < sizeof dated / sizeof dated[0]; k++) {
        const char *by =
            strncasecmp(s, dated[k][0], strlen(dated[k][0])) == 0 ? strstr(s, dated[k][1]) : NULL;
        if (by)
            s = by + strlen(dated[k][1]);
    }
    for (bool cut = true; cut;) {
        cut = false;
        while (byline_separator(*s) || *s == '.')
            s++;
        for (size_t k = 0; k < sizeof byline_labels / sizeof byline_labels[0] && !cut; k++) {
            size_t n = label_at(s, byline_labels[k]);
            if (n)
                s += n, cut = true;
        }
    }
    size_t n = strlen(s);
    for (size_t k = 0; k < sizeof byline_stops / sizeof byline_stops[0]; k++) {
        const char *e = strstr(s, byline_stops[k]);
        if (e && (size_t)(e - s) < n)
            n = (size_t)(e - s);
    }
    /* a number with more after it starts a date ("8 January", ", 3:51");
     * one that ends the line is part of the name ("Writer 2") */
    for (size_t i = 1; i + 1 < n; i++) {
        if (s[i] != ' ' || !ascii_is_digit(s[i + 1]))
            continue;
        size_t j = i + 1;
        while (j < n && ascii_is_digit(s[j]))
            j++;
        if (j < n) {
            n = s[i - 1] == ',' ? i - 1 : i;
            n = before_weekday(s, n);
            break;
        }
    }
    for (size_t k = 0; k < sizeof byline_months / sizeof byline_months[0]; k++) {
        const char *e = strstr(s, byline_months[k]);
        if (e && (size_t)(e - s) < n && ascii_is_digit(e[strlen(byline_months[k])]))
            n = (size_t)(e - s);
    }
    while (n > 0 && byline_separator(s[n - 1]))
        n--;
    /* "KOBE –": a dateline's place, the article's first words after it */
    if ((n >= 4 && memcmp(s + n - 4, " \xe2\x80\x93", 4) == 0) ||
        (n >= 4 && memcmp(s + n - 4, " \xe2\x80\x94", 4) == 0))
        return NULL;
    static const char *const weekdays[] = {
        "monday", "tuesday",  "wednesday", "thursday",   "friday",  "saturday", "sunday",
        "montag", "dienstag", "mittwoch",  "donnerstag", "freitag", "samstag",  "sonntag"};
    for (size_t k = 0; k < sizeof weekdays / sizeof weekdays[0]; k++)
        if (strncasecmp(s, weekdays[k], strlen(weekdays[k])) == 0)
            return NULL; /* a date where the name should be */
    if (n == 0 || memchr(s, '@', n) || strstr(s, "://") || strncasecmp(s, "www.", 4) == 0 ||
        (s[0] >= '0' && s[0] <= '9'))
        return NULL;
    for (size_t k = 0; k < sizeof byline_nobody / sizeof byline_nobody[0]; k++)
        if (strlen(byline_nobody[k]) == n && strncasecmp(s, byline_nobody[k], n) == 0)
            return NULL;
    if (site && strlen(site) == n && strncasecmp(s, site, n) == 0)
        return NULL;
    size_t words = 1;
    for (size_t i = 0; i < n; i++)
        words += s[i] == ' ';
    if (words > (names_only(s, n) ? BYLINE_MAX_LIST_WORDS : BYLINE_MAX_WORDS))
        return NULL;
    return xtext_clean(a, s, n, EXTRACT_MAX_FIELD, false, rc);
}
