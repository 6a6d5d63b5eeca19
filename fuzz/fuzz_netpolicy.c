/* libFuzzer harness: util/netpolicy.h on arbitrary bytes, read as an allow
 * list, as a URL host, as a URL and as a raw 16-byte address. Invariants:
 * an accepted allow list holds at most NETPOLICY_ALLOW_MAX networks whose
 * host bits are zero and which permit their own address, a refused one
 * leaves the policy as it was and says why; a host read as an address is
 * read again the same from its printed form, and agrees with the C
 * library's inet_aton on inputs made of its characters; a refusal always
 * says "refused: ". */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <arpa/inet.h>

#include "check.h"
#include "util/err.h"
#include "util/netpolicy.h"

static void allow_list(const char *text, size_t size)
{
    struct netpolicy p;
    netpolicy_init(&p);
    CHECK(netpolicy_allow_parse(&p, "10.0.0.0/8", 10, NULL, 0) == 0);
    char why[NETPOLICY_WHY_MAX] = "";
    int rc = netpolicy_allow_parse(&p, text, size, why, sizeof why);
    if (rc < 0) {
        CHECK(rc == ERR_PARSE || rc == ERR_TOO_LARGE);
        CHECK(why[0] != '\0' && memchr(why, '\0', sizeof why));
        CHECK(p.n_allow == 1 && p.allow[0].bits == 104);
        return;
    }
    CHECK(rc == 0 && p.n_allow <= NETPOLICY_ALLOW_MAX);
    for (size_t i = 0; i < p.n_allow; i++) {
        const struct netpolicy_net *net = &p.allow[i];
        CHECK(net->bits <= 128);
        for (unsigned b = net->bits; b < 128; b++)
            CHECK(!(net->addr.b[b / 8] & (0x80 >> (b % 8))));
        CHECK(netpolicy_permits(&p, &net->addr, NULL, 0));
    }
}

static bool aton_chars_only(const char *s, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        if (!strchr("0123456789abcdefABCDEFxX.", s[i]))
            return false;
    }
    return n > 0 && s[n - 1] != '.';
}

static void host(const char *s, size_t size)
{
    struct netpolicy_addr a, again;
    bool ok = netpolicy_addr_from_host(&a, s, size);
    if (aton_chars_only(s, size)) {
        struct in_addr want;
        bool libc = inet_aton(s, &want) != 0; /* s is NUL-terminated at size */
        CHECK(ok == libc);
        CHECK(!ok || memcmp(a.b + 12, &want.s_addr, 4) == 0);
    }
    if (!ok)
        return;
    char text[NETPOLICY_ADDR_TEXT];
    netpolicy_addr_format(&a, text);
    CHECK(netpolicy_addr_from_host(&again, text, strlen(text)));
    CHECK(memcmp(a.b, again.b, 16) == 0);
    char why[NETPOLICY_WHY_MAX] = "";
    bool permitted = netpolicy_permits(NULL, &a, why, sizeof why);
    CHECK(permitted == (netpolicy_special_use(&a) == NULL));
    CHECK(permitted || strncmp(why, "refused: ", 9) == 0);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char *s = fuzz_cstring(data, size);
    if (!s)
        return 0;
    allow_list(s, size);
    if (!memchr(s, '\0', size))
        host(s, size);
    char why[NETPOLICY_WHY_MAX] = "";
    if (!netpolicy_permits_url(NULL, s, why, sizeof why))
        CHECK(strncmp(why, "refused: ", 9) == 0);
    if (size >= 16) {
        struct netpolicy_addr a;
        memcpy(a.b, data, 16);
        const char *kind = netpolicy_special_use(&a);
        CHECK(!kind || kind[0]);
        CHECK(netpolicy_permits(NULL, &a, NULL, 0) == (kind == NULL));
    }
    free(s);
    return 0;
}
