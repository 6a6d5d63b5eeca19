/* text/: the tokenizer (folding, scripts, CJK bigrams, limits, offsets),
 * Snowball stems, language detection and the "newsd" FTS5 tokenizer. */
#include <pthread.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>
#include <sqlite3.h>

#include "text/text.h"
#include "text/text_fts5.h"
#include "util/err.h"
#include "util/limits.h"
#include "util/utf8.h"

/* ---- helpers ----------------------------------------------------------- */

#define MAX_TOKS 64

struct collected {
    char joined[4096]; /* tokens separated by '|' */
    size_t jlen;
    int count;
    struct text_token toks[MAX_TOKS];
    char texts[MAX_TOKS][LIMIT_TOKEN_BYTES + 1];
    const char *src; /* the tokenized input, to check offsets against */
    size_t src_len;
};

static int collect_cb(const struct text_token *t, void *ctx)
{
    struct collected *c = ctx;
    assert_true(t->len > 0);
    assert_true(t->len <= LIMIT_TOKEN_BYTES);
    assert_true(utf8_valid(t->text, t->len));
    assert_true(t->start < t->end);
    assert_true(t->end <= c->src_len);
    assert_int_equal(t->pos, (uint32_t)c->count); /* positions are consecutive */
    if (c->count < MAX_TOKS) {
        c->toks[c->count] = *t;
        memcpy(c->texts[c->count], t->text, t->len);
        c->texts[c->count][t->len] = '\0';
        c->toks[c->count].text = c->texts[c->count];
    }
    if (c->jlen + t->len + 2 < sizeof c->joined) {
        if (c->count > 0)
            c->joined[c->jlen++] = '|';
        memcpy(c->joined + c->jlen, t->text, t->len);
        c->jlen += t->len;
        c->joined[c->jlen] = '\0';
    }
    c->count++;
    return 0;
}

static void tokenize_n(struct collected *c, const char *s, size_t n)
{
    memset(c, 0, sizeof *c);
    c->src = s;
    c->src_len = n;
    assert_int_equal(text_tokenize(s, n, collect_cb, c), 0);
}

static void tokenize(struct collected *c, const char *s)
{
    tokenize_n(c, s, strlen(s));
}

/* ---- tokenization table -------------------------------------------------- */

static const struct {
    const char *in;
    const char *want; /* tokens joined by '|' */
} token_cases[] = {
    /* case and accent folding in Latin, Greek, Cyrillic */
    {"Café", "cafe"},
    {"Ångström", "angstrom"},
    {"Ünïcödé", "unicode"},
    {"Cafe\xcc\x81 (decomposed)", "cafe|decomposed"},
    {"Straße", "strasse"},
    {"İstanbul", "istanbul"},
    {"Αθήνα ΣΟΦΟΣ", "αθηνα|σοφοσ"},
    {"Москва ЁЛКА йод", "москва|елка|иод"},
    {"Ærø Łódź", "ærø|łodz"},
    /* Hebrew points and Arabic harakat are stripped, the letters kept */
    {"עִבְרִית", "עברית"},
    {"اَلْعَرَبِيَّة", "العربية"},
    /* Indic and Thai keep their vowel signs: one token per word */
    {"हिन्दी भाषा", "हिन्दी|भाषा"},
    {"ภาษาไทย", "ภาษาไทย"},
    /* apostrophes, hyphens, dots and other punctuation split */
    {"Trump's", "trump|s"},
    {"Trump\xe2\x80\x99s", "trump|s"},
    {"covid-19", "covid|19"},
    {"U.S. e-mail", "u|s|e|mail"},
    {"3.14 1,000", "3|14|1|000"},
    {"5G covid19 COVID19", "5g|covid19|covid19"},
    {"hello_world @user #tag", "hello|world|user|tag"},
    /* NFKC compatibility characters */
    {"\xef\xac\x81nance", "finance"},   /* ﬁ ligature */
    {"\xe2\x91\xa0 x\xc2\xb2", "1|x2"}, /* ① and superscript two */
    {"ＡＢＣ１２３", "abc123"},         /* fullwidth */
    {"\xe2\x84\xab", "a"},              /* angstrom sign */
    /* format characters inside words do not split them */
    {"Wiki\xc2\xadpedia", "wikipedia"},
    /* CJK bigrams, single characters, mixed scripts */
    {"中华人民共和国", "中华|华人|人民|民共|共和|和国"},
    {"中", "中"},
    {"中 国", "中|国"},
    {"iPhone手机", "iphone|手机"},
    {"手机iPhone", "手机|iphone"},
    {"新一代GPU芯片", "新一|一代|gpu|芯片"},
    {"한국어 뉴스", "한국|국어|뉴스"},
    {"ひらがなカタカナ", "ひら|らが|がな|なカ|カタ|タカ|カナ"},
    {"\xef\xbd\xb6\xef\xbe\x9e\xef\xbd\xb7\xef\xbe\x9e", "ガギ"}, /* halfwidth ｶﾞｷﾞ */
    {"\xe3\x81\x8b\xe3\x82\x99", "が"},                           /* か + combining dakuten */
    /* separators only, empty input */
    {"", ""},
    {"  -- ... !!! ", ""},
    {"\xcc\x81", ""}, /* a lone combining mark */
    /* invalid UTF-8 bytes are separators */
    {"ab\xff"
     "cd",
     "ab|cd"},
    {"ab\xc3", "ab"},
    {"\xed\xa0\x80x", "x"}, /* a surrogate */
    {"\xc0\xaf"
     "a",
     "a"}, /* an overlong slash */
    {"caf\xc3\xa9\xe2\x82", "cafe"},
};

static void tokens_are_folded_and_split_as_the_table_says(void **state)
{
    (void)state;
    for (size_t i = 0; i < sizeof token_cases / sizeof token_cases[0]; i++) {
        struct collected c;
        tokenize(&c, token_cases[i].in);
        if (strcmp(c.joined, token_cases[i].want) != 0)
            fail_msg("case %zu \"%s\": got \"%s\", want \"%s\"", i, token_cases[i].in, c.joined,
                     token_cases[i].want);
    }
}

static void byte_offsets_point_at_the_source_of_each_token(void **state)
{
    (void)state;
    struct collected c;
    const char *s = "Le Café, 中华人民 & iPhone's";
    tokenize(&c, s);
    assert_int_equal(c.count, 7);
    static const char *const src[] = {"Le", "Café", "中华", "华人", "人民", "iPhone", "s"};
    for (int i = 0; i < c.count; i++) {
        size_t len = c.toks[i].end - c.toks[i].start;
        assert_int_equal(len, strlen(src[i]));
        assert_memory_equal(s + c.toks[i].start, src[i], len);
        assert_int_equal(c.toks[i].pos, (uint32_t)i);
    }
}

static void cjk_tokens_are_flagged_and_others_are_not(void **state)
{
    (void)state;
    struct collected c;
    tokenize(&c, "abc 中国 def 国");
    assert_int_equal(c.count, 4);
    assert_int_equal(c.toks[0].flags & TEXT_TOKEN_CJK, 0);
    assert_int_equal(c.toks[1].flags & TEXT_TOKEN_CJK, TEXT_TOKEN_CJK);
    assert_int_equal(c.toks[2].flags & TEXT_TOKEN_CJK, 0);
    assert_int_equal(c.toks[3].flags & TEXT_TOKEN_CJK, TEXT_TOKEN_CJK);
}

static void one_compatibility_character_can_give_several_tokens(void **state)
{
    (void)state;
    struct collected c;
    const char *s = "x \xc2\xbd y"; /* ½ → 1 ⁄ 2 */
    tokenize(&c, s);
    assert_string_equal(c.joined, "x|1|2|y");
    /* both digits point at the same source character */
    assert_int_equal(c.toks[1].start, 2);
    assert_int_equal(c.toks[1].end, 4);
    assert_int_equal(c.toks[2].start, 2);
    assert_int_equal(c.toks[2].end, 4);
}

/* ---- limits ------------------------------------------------------------- */

static void check_long_run(const char *unit, size_t repeat, size_t want_len, const char *want_unit)
{
    size_t ulen = strlen(unit), n = ulen * repeat;
    char *s = malloc(n + 2);
    struct collected c;
    assert_non_null(s);
    for (size_t i = 0; i < repeat; i++)
        memcpy(s + i * ulen, unit, ulen);
    memcpy(s + n, " z", 2);
    tokenize_n(&c, s, n + 2);
    assert_int_equal(c.count, 2);
    assert_int_equal(c.toks[0].len, want_len);
    assert_int_equal(c.toks[0].start, 0);
    assert_int_equal(c.toks[0].end, n); /* the token still covers its whole source word */
    for (size_t off = 0; off < want_len; off += strlen(want_unit))
        assert_memory_equal(c.texts[0] + off, want_unit, strlen(want_unit));
    assert_string_equal(c.texts[1], "z");
    assert_int_equal(c.toks[1].pos, 1);
    free(s);
}

static void a_very_long_token_is_cut_at_a_code_point_boundary(void **state)
{
    (void)state;
    check_long_run("A", 1000, LIMIT_TOKEN_BYTES, "a");
    check_long_run("\xc3\xa9", 400, LIMIT_TOKEN_BYTES, "e");        /* é folds to 1 byte */
    check_long_run("\xd0\x96", 400, LIMIT_TOKEN_BYTES, "\xd0\xb6"); /* Ж → ж, 2 bytes */
    check_long_run("\xe0\xa4\x95", 200, LIMIT_TOKEN_BYTES / 3 * 3, "\xe0\xa4\x95"); /* क, 3 bytes */
    check_long_run("\xf0\x9d\x90\x80", 300, LIMIT_TOKEN_BYTES, "a"); /* 𝐀 (math bold) → a */
}

/* ---- callbacks ------------------------------------------------------------ */

struct stop_ctx {
    int seen, stop_at;
};

static int stop_cb(const struct text_token *t, void *arg)
{
    struct stop_ctx *st = arg;
    (void)t;
    st->seen++;
    return st->seen == st->stop_at ? 42 : 0;
}

static void a_nonzero_callback_return_stops_tokenizing_and_is_returned(void **state)
{
    (void)state;
    static const char *const inputs[] = {"one two three four", "中华人民共和国", "a 中 b 国 c"};
    for (size_t i = 0; i < sizeof inputs / sizeof inputs[0]; i++) {
        struct stop_ctx st = {0, 2};
        assert_int_equal(text_tokenize(inputs[i], strlen(inputs[i]), stop_cb, &st), 42);
        assert_int_equal(st.seen, 2);
    }
}

static int count_cb(const struct text_token *t, void *arg)
{
    (void)t;
    (*(int *)arg)++;
    return 0;
}

static void empty_input_gives_no_tokens(void **state)
{
    (void)state;
    int n = 0;
    assert_int_equal(text_tokenize("", 0, count_cb, &n), 0);
    assert_int_equal(text_tokenize(NULL, 0, count_cb, &n), 0);
    assert_int_equal(n, 0);
}

/* ---- adversarial input -------------------------------------------------- */

static const char mixed_input[] =
    "Café \xe4\xb8\xad\xe5\x8d\x8e hi\xef\xac\x81 \xed\xa0\x80 \xff\xfe \xe0\xa4\xb9\xe0\xa4\xbf"
    "\xe0\xa4\xa8\xe0\xa5\x8d \xef\xbd\xb6\xef\xbe\x9e \xea\xb0\x80\xe1\x86\xa8 x\xcc\x81\xcc\x82 "
    "\xd7\xa2\xd6\xb4 \xf0\x9f\x98\x80 \xf4\x90\x80\x80 \xe2\x91\xa0\xc2\xbd\xef\xb7\xba end";

/* Every prefix and suffix, each in a buffer of its exact size so that ASan
 * sees any read past the end. */
static void splitting_the_input_at_every_byte_never_breaks_the_tokenizer(void **state)
{
    (void)state;
    const size_t n = sizeof mixed_input - 1;
    for (size_t k = 0; k <= n; k++) {
        struct collected c;
        char *head = malloc(k ? k : 1), *tail = malloc(n - k ? n - k : 1);
        assert_non_null(head);
        assert_non_null(tail);
        memcpy(head, mixed_input, k);
        memcpy(tail, mixed_input + k, n - k);
        tokenize_n(&c, head, k);
        tokenize_n(&c, tail, n - k);
        free(head);
        free(tail);
    }
}

static void every_single_byte_value_is_handled(void **state)
{
    (void)state;
    for (int b = 0; b < 256; b++) {
        char s[3] = {'a', (char)b, 'b'};
        struct collected c;
        tokenize_n(&c, s, 3);
        assert_true(c.count >= 1 && c.count <= 2);
    }
}

/* ---- stems and languages ---------------------------------------------------- */

static const struct {
    const char *lang, *tok, *stem;
} stem_cases[] = {
    {"en", "running", "run"},
    {"en", "universities", "univers"},
    {"en", "runners", "runner"},
    {"de", "häuser", "haus"},
    {"de", "kinder", "kind"},
    {"fr", "chevaux", "cheval"},
    {"fr", "nationale", "national"},
    {"ru", "книгами", "книг"},
    {"ru", "москвы", "москв"},
    {"es", "corriendo", "corr"},
    {"sv", "flickorna", "flick"},
    {"se", "flickorna", "flick"}, /* the catalogue's quirk for Swedish */
    {"no", "bilene", "bil"},
};

static void stems_come_from_the_snowball_stemmer_of_the_language(void **state)
{
    (void)state;
    for (size_t i = 0; i < sizeof stem_cases / sizeof stem_cases[0]; i++) {
        char out[64];
        int n = text_stem(stem_cases[i].lang, stem_cases[i].tok, strlen(stem_cases[i].tok), out,
                          sizeof out);
        if (n != (int)strlen(stem_cases[i].stem) || strcmp(out, stem_cases[i].stem) != 0)
            fail_msg("%s %s: got %d \"%s\", want \"%s\"", stem_cases[i].lang, stem_cases[i].tok, n,
                     n > 0 ? out : "", stem_cases[i].stem);
    }
}

static void languages_without_a_stemmer_leave_the_output_untouched(void **state)
{
    (void)state;
    static const char *const langs[] = {"he", "zh", "ud", "xx", "", "eng"};
    for (size_t i = 0; i < sizeof langs / sizeof langs[0]; i++) {
        char out[16] = "unchanged";
        assert_int_equal(text_stem(langs[i], "running", 7, out, sizeof out), 0);
        assert_string_equal(out, "unchanged");
    }
}

static void a_stem_too_long_for_the_output_is_an_error(void **state)
{
    (void)state;
    char out[4];
    assert_int_equal(text_stem("en", "running", 7, out, sizeof out), 3);
    assert_int_equal(text_stem("en", "universities", 12, out, sizeof out), ERR_TOO_LARGE);
}

/* The per-thread memo of stems (stem.c) answers a repeat as the stemmer
 * did: the same token in another language keeps its own stem, a remembered
 * stem too long for the output is still an error, and after release the
 * thread starts afresh. */
static void repeated_stems_are_the_stemmers_in_every_language(void **state)
{
    (void)state;
    char out[64], small[4];
    for (int round = 0; round < 3; round++) {
        for (size_t i = 0; i < sizeof stem_cases / sizeof stem_cases[0]; i++) {
            int n = text_stem(stem_cases[i].lang, stem_cases[i].tok, strlen(stem_cases[i].tok), out,
                              sizeof out);
            assert_int_equal(n, (int)strlen(stem_cases[i].stem));
            assert_string_equal(out, stem_cases[i].stem);
        }
        assert_int_equal(text_stem("en", "universities", 12, small, sizeof small), ERR_TOO_LARGE);
        assert_int_equal(text_stem("en", "universities", 12, out, sizeof out), 7);
        assert_string_equal(out, "univers");
        assert_int_equal(text_stem("en", "kinder", 6, out, sizeof out), 6); /* de: "kind" */
        assert_string_equal(out, "kinder");
        assert_int_equal(text_stem("de", "kinder", 6, out, sizeof out), 4);
        assert_string_equal(out, "kind");
        assert_int_equal(text_stem("en", "universities", 12, small, sizeof small), ERR_TOO_LARGE);
        if (round == 1)
            text_thread_release();
    }
    /* Many distinct tokens: slots are overwritten, answers never mixed. */
    char tok[32], first[64];
    for (int i = 0; i < 200000; i += 7) {
        int len = snprintf(tok, sizeof tok, "walking%dx", i);
        int n = text_stem("en", tok, (size_t)len, first, sizeof first);
        assert_true(n > 0);
        assert_int_equal(text_stem("en", tok, (size_t)len, out, sizeof out), n);
        assert_string_equal(out, first);
        assert_int_equal(text_stem("de", tok, (size_t)len, out, sizeof out) > 0, 1);
    }
    text_thread_release();
}

static void the_api_languages_are_known_and_stemmed_as_documented(void **state)
{
    (void)state;
    static const struct {
        const char *lang;
        bool known, stemmer;
    } cases[] = {
        {"ar", true, true},  {"de", true, true},   {"en", true, true},    {"es", true, true},
        {"fr", true, true},  {"he", true, false},  {"it", true, true},    {"nl", true, true},
        {"no", true, true},  {"pt", true, true},   {"ru", true, true},    {"sv", true, true},
        {"ud", true, false}, {"zh", true, false},  {"se", false, true},   {"ja", false, false},
        {"", false, false},  {"EN", false, false}, {"eng", false, false},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        if (text_lang_known(cases[i].lang) != cases[i].known ||
            text_lang_has_stemmer(cases[i].lang) != cases[i].stemmer)
            fail_msg("language \"%s\"", cases[i].lang);
    }
    assert_false(text_lang_known(NULL));
    assert_false(text_lang_has_stemmer(NULL));
}

struct thread_arg {
    int ok;
    bool release; /* free the stemmers explicitly, else at thread exit */
};

static void *stem_in_thread(void *p)
{
    struct thread_arg *arg = p;
    char out[64];
    arg->ok = 1;
    for (int i = 0; i < 2000; i++) {
        const char *lang = (i & 1) ? "en" : "ru";
        const char *tok = (i & 1) ? "universities" : "книгами";
        const char *want = (i & 1) ? "univers" : "книг";
        if (text_stem(lang, tok, strlen(tok), out, sizeof out) != (int)strlen(want) ||
            strcmp(out, want) != 0)
            arg->ok = 0;
    }
    if (arg->release)
        text_thread_release();
    return NULL;
}

/* Run under ASan: stemmers are per thread (no data race corrupting
 * results) and are freed either explicitly or when the thread exits (the
 * leak checker would report them otherwise). */
static void threads_stem_concurrently_with_their_own_stemmers(void **state)
{
    (void)state;
    pthread_t th[4];
    struct thread_arg args[4];
    for (int i = 0; i < 4; i++) {
        args[i].ok = 0;
        args[i].release = (i % 2) == 0;
        assert_int_equal(pthread_create(&th[i], NULL, stem_in_thread, &args[i]), 0);
    }
    for (int i = 0; i < 4; i++) {
        assert_int_equal(pthread_join(th[i], NULL), 0);
        assert_int_equal(args[i].ok, 1);
    }
}

/* ---- language detection ---------------------------------------------------- */

/* Real titles (and descriptions) from the sample data, except Urdu (the
 * sample has none), the Chinese title borrowing a kana, Korean and Greek. */
static const struct {
    const char *want, *text;
} detect_cases[] = {
    {"en", "Scientists resolve mystery of why otters stay warm in cold surroundings - WION. It "
           "has been an enduring mystery how otters manage to stay warm in the chilly waters of "
           "their Pacific habitat"},
    {"en", "The National Fight Against COVID-19 Isn't Ready To Go To The Sewers - FiveThirtyEight"},
    {"fr", "Le bitcoin plonge dans un contexte de liquidation générale du marché des "
           "crypto-monnaies - Mon Livret"},
    {"de", "Corona kommt mit Macht nach Großbritannien zurück: Inzidenz nähert sich 300 - WELT. "
           "Das Coronavirus kehrt nach Großbritannien zurück. Und das trotz guter Impfquoten."},
    {"es", "Angelique Boyer revela más información sobre el estado de salud de Fernanda Castillo "
           "- infobae"},
    {"it", "Haiti disperata e senza guida, il governo vuole i soldati Usa - Corriere della Sera"},
    {"nl", "Therapie maakte nieuwe album Billie Eilish beter dan haar vorige - AD.nl. Billie "
           "Eilish vindt haar nieuwe album veel beter dan haar debuutplaat. Dat zegt de "
           "Amerikaanse singer-songwriter in een interview met Zane Lowe op Apple Music 1."},
    {"pt", "Surto de febre chikungunya: Número de casos da doença sobe para 16 em Tefé, no AM - "
           "G1"},
    {"sv", "Proust är ingen yvig romantiker | GP - Göteborgs-Posten. Meningar växer som vildvin "
           "men få författare är mer precisa, skriver Mikael van Reis."},
    {"no", "Nydelige angrep sikret etterlengtet seier: – Han er brennhet - VG. Vegard Hansens "
           "menn sikret sesongens andre trepoenger, hjemme mot Haugesund."},
    {"ru", "Рангник объяснил, почему назначил Роналду капитаном «Манчестер Юнайтед» - "
           "Евро-Футбол.Ру"},
    {"ar", "اللجنة العلمية لمكافحة كورونا تدعو الى وجوب اعطاء المثل القدوة في تطبيق الاجراءات "
           "الوقائية ضد كورونا - Babnet Tunisie"},
    {"zh", "新一代国产黄山芯片来了：独立GPU 或定名“黄山2S” - 硬件 - cnBeta"},
    {"zh", "保羅一招行走江湖16年 瑞迪克讚嘆：他是異類 - NBA 台灣 | 聯合新聞網"},
    {"zh", "台灣の味 夜市小吃排行榜出爐"},
    {"he", "מתקפת סייבר על מערך התחבורה האיראני - קול חי"},
    {"ud", "پاکستان میں بارش سے سیلاب کا خطرہ بڑھ گیا ہے"},
    /* languages the API does not have */
    {"", "紙のパッケージが、スマホと連動してゲーム機や楽器になる技術！ NFCって便利ですね〜 - "
         "ギズモード・ジャパン"},
    {"", "Чоловіки важче хворіють на COVID-19 — учені назвали причину - Ракурс UA"},
    {"", "Waloryzacja emerytur 2022 - w jakiej wysokości mogą być wypłacane? [WYLICZENIA, "
         "KWOTY] - Gazeta.pl"},
    {"", "한국어 뉴스 기사 제목입니다"},
    {"", "Η κυβέρνηση ανακοίνωσε νέα μέτρα για την οικονομία"},
    /* nothing to go on */
    {"", ""},
    {"", "2021-07-08 12:00 — 1, 2, 3 !!!"},
};

static void languages_of_real_headlines_are_detected(void **state)
{
    (void)state;
    for (size_t i = 0; i < sizeof detect_cases / sizeof detect_cases[0]; i++) {
        char out[3] = "??";
        text_detect_language(detect_cases[i].text, strlen(detect_cases[i].text), out);
        if (strcmp(out, detect_cases[i].want) != 0)
            fail_msg("case %zu: got \"%s\", want \"%s\" for \"%s\"", i, out, detect_cases[i].want,
                     detect_cases[i].text);
    }
}

static void detection_reads_only_the_start_of_a_long_text(void **state)
{
    (void)state;
    /* French first, then a lot of English: the cap keeps only French */
    const char *fr = "Le prix du bitcoin a chuté sous le niveau de 33 000 dollars vendredi pour la "
                     "première fois en plus d'une semaine, la baisse continue. ";
    const char *en = "The quick brown fox jumps over the lazy dog and the people of the town. ";
    size_t cap = 64 * 1024, len = 0;
    char *s = malloc(cap), out[3];
    assert_non_null(s);
    while (len + strlen(fr) < 900) {
        memcpy(s + len, fr, strlen(fr));
        len += strlen(fr);
    }
    while (len + strlen(en) < cap) {
        memcpy(s + len, en, strlen(en));
        len += strlen(en);
    }
    text_detect_language(s, len, out);
    assert_string_equal(out, "fr");
    free(s);
}

/* ---- FTS5 ------------------------------------------------------------------- */

static sqlite3 *fts_open(void)
{
    sqlite3 *db = NULL;
    assert_int_equal(sqlite3_open(":memory:", &db), SQLITE_OK);
    assert_int_equal(text_fts5_register(db), 0);
    assert_int_equal(sqlite3_exec(db, "CREATE VIRTUAL TABLE t USING fts5(a, m, tokenize='newsd')",
                                  NULL, NULL, NULL),
                     SQLITE_OK);
    return db;
}

static void fts_insert(sqlite3 *db, long rowid, const char *a, const char *m)
{
    sqlite3_stmt *st = NULL;
    assert_int_equal(
        sqlite3_prepare_v2(db, "INSERT INTO t(rowid, a, m) VALUES (?1, ?2, ?3)", -1, &st, NULL),
        SQLITE_OK);
    sqlite3_bind_int64(st, 1, rowid);
    sqlite3_bind_text(st, 2, a, -1, SQLITE_STATIC);
    sqlite3_bind_text(st, 3, m, -1, SQLITE_STATIC);
    assert_int_equal(sqlite3_step(st), SQLITE_DONE);
    sqlite3_finalize(st);
}

/* The rowids matching q, as "1,2" ("" for none). */
static void fts_match(sqlite3 *db, const char *q, char *out, size_t cap)
{
    sqlite3_stmt *st = NULL;
    size_t len = 0;
    int rc;
    out[0] = '\0';
    assert_int_equal(sqlite3_prepare_v2(db, "SELECT rowid FROM t WHERE t MATCH ?1 ORDER BY rowid",
                                        -1, &st, NULL),
                     SQLITE_OK);
    sqlite3_bind_text(st, 1, q, -1, SQLITE_STATIC);
    while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
        int w = snprintf(out + len, cap - len, "%s%lld", len ? "," : "",
                         (long long)sqlite3_column_int64(st, 0));
        assert_true(w > 0 && (size_t)w < cap - len);
        len += (size_t)w;
    }
    if (rc != SQLITE_DONE)
        fail_msg("MATCH %s: %s", q, sqlite3_errmsg(db));
    sqlite3_finalize(st);
}

static void the_fts5_tokenizer_indexes_exact_terms_stems_and_metadata(void **state)
{
    (void)state;
    static const struct {
        const char *query, *want;
    } cases[] = {
        {"\"running\"", "1"},     {"\"~run\"", "1"},
        {"\"runners\"", "1"},     {"\"~runner\"", "1"},
        {"\"run\"", ""}, /* the stem is not an exact term */
        {"m:\"s1\"", "1"},        {"m:\"len\"", "1,2"},
        {"a:\"s1\"", ""},         /* metadata stays in its column */
        {"\"en\"", ""},           /* the language header is not indexed */
        {"\"runners are\"", "1"}, /* positions survive the colocated stems */
        {"\"the are\"", ""},      {"\"cafe\"", "2"},
        {"\"geneve\"", "2"},      {"\"~cafe\"", ""}, /* already its own stem: no colocated copy */
        {"\"中华 华人\"", "3"},                      /* a phrase of bigrams */
        {"\"华人 中华\"", ""},    {"\"~中华\"", ""}, /* CJK tokens are never stemmed */
        {"\"x\"", "4"},                              /* no header: plain document */
        {"\"~walk\"", "5"},                          /* the header's language in upper case */
    };
    sqlite3 *db = fts_open();
    char got[256];

    fts_insert(db, 1, "\037en\037The runners are running", "\036s1 len");
    fts_insert(db, 2, "\037fr\037Le Café de Genève", "\036s2 len");
    fts_insert(db, 3, "\037zh\037中华人民", "\036s3");
    fts_insert(db, 4, "X Y", "");
    fts_insert(db, 5, "\037EN\037Walking", "");
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        fts_match(db, cases[i].query, got, sizeof got);
        if (strcmp(got, cases[i].want) != 0)
            fail_msg("MATCH %s: got \"%s\", want \"%s\"", cases[i].query, got, cases[i].want);
    }
    sqlite3_close(db);
}

/* The caller folds query words with text_tokenize(); those must match
 * what the document side indexed for the accented original. */
static void an_accented_query_word_folded_by_the_tokenizer_matches(void **state)
{
    (void)state;
    sqlite3 *db = fts_open();
    struct collected c;
    char q[LIMIT_TOKEN_BYTES + 8], got[64];

    fts_insert(db, 7, "\037de\037Große Häuser in Zürich", "\036s");
    tokenize(&c, "ZÜRICH");
    assert_int_equal(c.count, 1);
    snprintf(q, sizeof q, "\"%s\"", c.texts[0]);
    fts_match(db, q, got, sizeof got);
    assert_string_equal(got, "7");
    tokenize(&c, "GROSSE");
    snprintf(q, sizeof q, "\"%s\"", c.texts[0]);
    fts_match(db, q, got, sizeof got);
    assert_string_equal(got, "7");
    sqlite3_close(db);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(tokens_are_folded_and_split_as_the_table_says),
        cmocka_unit_test(byte_offsets_point_at_the_source_of_each_token),
        cmocka_unit_test(cjk_tokens_are_flagged_and_others_are_not),
        cmocka_unit_test(one_compatibility_character_can_give_several_tokens),
        cmocka_unit_test(a_very_long_token_is_cut_at_a_code_point_boundary),
        cmocka_unit_test(a_nonzero_callback_return_stops_tokenizing_and_is_returned),
        cmocka_unit_test(empty_input_gives_no_tokens),
        cmocka_unit_test(splitting_the_input_at_every_byte_never_breaks_the_tokenizer),
        cmocka_unit_test(every_single_byte_value_is_handled),
        cmocka_unit_test(stems_come_from_the_snowball_stemmer_of_the_language),
        cmocka_unit_test(languages_without_a_stemmer_leave_the_output_untouched),
        cmocka_unit_test(a_stem_too_long_for_the_output_is_an_error),
        cmocka_unit_test(repeated_stems_are_the_stemmers_in_every_language),
        cmocka_unit_test(the_api_languages_are_known_and_stemmed_as_documented),
        cmocka_unit_test(threads_stem_concurrently_with_their_own_stemmers),
        cmocka_unit_test(languages_of_real_headlines_are_detected),
        cmocka_unit_test(detection_reads_only_the_start_of_a_long_text),
        cmocka_unit_test(the_fts5_tokenizer_indexes_exact_terms_stems_and_metadata),
        cmocka_unit_test(an_accented_query_word_folded_by_the_tokenizer_matches),
    };
    int rc = cmocka_run_group_tests(tests, NULL, NULL);
    text_thread_release();
    return rc;
}
