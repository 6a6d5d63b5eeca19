/* util/netpolicy.h: the special-use ranges outgoing requests may not reach,
 * allow lists, addresses read from sockets and from URL hosts (checked
 * against the C library's own inet_aton and inet_pton). The expected kinds
 * are those of IANA's special-purpose address registries. */
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <sys/un.h>

#include "util/err.h"
#include "util/netpolicy.h"

/* An address from its usual text (inet_pton), IPv4 as IPv4-mapped. */
static struct netpolicy_addr addr(const char *text)
{
    struct netpolicy_addr a;
    memset(&a, 0, sizeof a);
    uint8_t v4[4];
    if (inet_pton(AF_INET, text, v4) == 1) {
        a.b[10] = a.b[11] = 0xff;
        memcpy(a.b + 12, v4, 4);
    } else if (inet_pton(AF_INET6, text, a.b) != 1) {
        fail_msg("bad test address %s", text);
    }
    return a;
}

static const struct {
    const char *addr;
    const char *kind; /* NULL: public */
} cases[] = {
    /* IPv4: each range, its first and last address, and its neighbours. */
    {"0.0.0.0", "unspecified"},
    {"0.255.255.255", "unspecified"},
    {"1.0.0.0", NULL},
    {"9.255.255.255", NULL},
    {"10.0.0.0", "private"},
    {"10.255.255.255", "private"},
    {"11.0.0.0", NULL},
    {"100.63.255.255", NULL},
    {"100.64.0.0", "shared address space (CGNAT)"},
    {"100.127.255.255", "shared address space (CGNAT)"},
    {"100.128.0.0", NULL},
    {"126.255.255.255", NULL},
    {"127.0.0.0", "loopback"},
    {"127.0.0.1", "loopback"},
    {"127.255.255.255", "loopback"},
    {"128.0.0.0", NULL},
    {"169.253.255.255", NULL},
    {"169.254.0.0", "link-local"},
    {"169.254.169.254", "link-local (cloud metadata)"},
    {"169.254.255.255", "link-local"},
    {"169.255.0.0", NULL},
    {"172.15.255.255", NULL},
    {"172.16.0.0", "private"},
    {"172.31.255.255", "private"},
    {"172.32.0.0", NULL},
    {"192.0.0.8", "reserved (IETF protocol assignments)"},
    {"192.0.2.1", "reserved (documentation)"},
    {"192.88.99.1", "reserved (6to4 relay)"},
    {"192.167.255.255", NULL},
    {"192.168.0.0", "private"},
    {"192.168.255.255", "private"},
    {"192.169.0.0", NULL},
    {"198.18.0.1", "reserved (benchmarking)"},
    {"198.19.255.255", "reserved (benchmarking)"},
    {"198.20.0.0", NULL},
    {"198.51.100.7", "reserved (documentation)"},
    {"203.0.113.9", "reserved (documentation)"},
    {"223.255.255.255", NULL},
    {"224.0.0.0", "multicast"},
    {"239.255.255.255", "multicast"},
    {"240.0.0.0", "reserved"},
    {"255.255.255.254", "reserved"},
    {"255.255.255.255", "broadcast"},
    {"8.8.8.8", NULL},
    {"93.184.216.34", NULL},
    /* IPv4-mapped IPv6 is its IPv4 address. */
    {"::ffff:127.0.0.1", "loopback"},
    {"::ffff:10.1.2.3", "private"},
    {"::ffff:169.254.169.254", "link-local (cloud metadata)"},
    {"::ffff:8.8.8.8", NULL},
    /* IPv6. */
    {"::", "unspecified"},
    {"::1", "loopback"},
    {"::2", "reserved (IPv4-compatible)"},
    {"::127.0.0.1", "reserved (IPv4-compatible)"},
    {"::ffff:0:7f00:1", "reserved (IPv4-translated)"},
    {"64:ff9b::7f00:1", "loopback"}, /* NAT64 of 127.0.0.1 */
    {"64:ff9b::a9fe:a9fe", "link-local (cloud metadata)"},
    {"64:ff9b::808:808", NULL}, /* NAT64 of 8.8.8.8 */
    {"64:ff9b:1::1", "private (local-use NAT64)"},
    {"100::1", "reserved (discard-only)"},
    {"2001:0:4136:e378:8000:63bf:80ff:fffe", "loopback"}, /* Teredo, client ~ = 127.0.0.1 */
    {"2001:0:4136:e378:8000:63bf:f7f7:f7f7", NULL},       /* client 8.8.8.8 */
    {"2001:db8::1", "reserved (documentation)"},
    {"2002:7f00:1::1", "loopback"},  /* 6to4 of 127.0.0.1 */
    {"2002:c0a8:101::1", "private"}, /* 6to4 of 192.168.1.1 */
    {"2002:808:808::1", NULL},
    {"2606:4700:4700::1111", NULL},
    {"fbff:ffff::1", NULL},
    {"fc00::1", "private"},
    {"fd00:ec2::254", "private"}, /* a cloud's IPv6 metadata address */
    {"fdff:ffff::1", "private"},
    {"fe00::1", NULL},
    {"fe80::1", "link-local"},
    {"febf:ffff::1", "link-local"},
    {"fec0::1", "private (site-local)"},
    {"feff::1", "private (site-local)"},
    {"ff00::1", "multicast"},
    {"ff02::1", "multicast"},
};

static void every_special_range_is_named_and_public_addresses_pass(void **state)
{
    (void)state;
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        struct netpolicy_addr a = addr(cases[i].addr);
        const char *kind = netpolicy_special_use(&a);
        char why[NETPOLICY_WHY_MAX] = "";
        bool ok = netpolicy_permits(NULL, &a, why, sizeof why);
        if (cases[i].kind == NULL) {
            if (kind || !ok)
                fail_msg("%s: want public, got %s (%s)", cases[i].addr, kind, why);
        } else {
            if (!kind || strcmp(kind, cases[i].kind) != 0 || ok)
                fail_msg("%s: want %s, got %s", cases[i].addr, cases[i].kind,
                         kind ? kind : "public");
            if (!strstr(why, cases[i].kind) || !strstr(why, "allow_networks"))
                fail_msg("%s: message '%s'", cases[i].addr, why);
        }
    }
}

static void a_refusal_says_what_the_address_is_and_how_to_allow_it(void **state)
{
    (void)state;
    char why[NETPOLICY_WHY_MAX];
    struct netpolicy_addr a = addr("127.0.0.1");
    assert_false(netpolicy_permits(NULL, &a, why, sizeof why));
    assert_string_equal(why,
                        "refused: 127.0.0.1 is loopback; allow it with [outbound] allow_networks");
    a = addr("::ffff:127.0.0.1");
    assert_false(netpolicy_permits(NULL, &a, why, sizeof why));
    assert_string_equal(why,
                        "refused: 127.0.0.1 is loopback; allow it with [outbound] allow_networks");
    a = addr("64:ff9b::7f00:1");
    assert_false(netpolicy_permits(NULL, &a, why, sizeof why));
    assert_string_equal(why, "refused: 64:ff9b::7f00:1 is loopback (it leads to 127.0.0.1); "
                             "allow it with [outbound] allow_networks");
    /* A short buffer is cut, still a string. */
    char tiny[12];
    assert_false(netpolicy_permits(NULL, &a, tiny, sizeof tiny));
    assert_int_equal(strlen(tiny), sizeof tiny - 1);
    assert_false(netpolicy_permits(NULL, &a, NULL, 0));
}

static void allowed_networks_open_exactly_their_addresses(void **state)
{
    (void)state;
    struct netpolicy p;
    netpolicy_init(&p);
    char why[NETPOLICY_WHY_MAX];
    const char *list = "127.0.0.0/8, 10.1.0.0/16\t::1 fd00::/8 169.254.169.254";
    assert_int_equal(netpolicy_allow_parse(&p, list, strlen(list), why, sizeof why), 0);
    assert_int_equal(p.n_allow, 5);
    static const struct {
        const char *addr;
        bool ok;
    } want[] = {
        {"127.0.0.1", true},
        {"127.255.0.9", true},
        {"::ffff:127.0.0.1", true},
        {"10.1.255.255", true},
        {"10.2.0.0", false},
        {"10.0.255.255", false},
        {"::1", true},
        {"fd12::1", true},
        {"fc00::1", false},
        {"169.254.169.254", true},
        {"169.254.169.253", false},
        {"192.168.1.1", false},
        {"64:ff9b::7f00:1", false}, /* the allow list matches the address itself */
        {"8.8.8.8", true},
    };
    for (size_t i = 0; i < sizeof want / sizeof want[0]; i++) {
        struct netpolicy_addr a = addr(want[i].addr);
        if (netpolicy_permits(&p, &a, why, sizeof why) != want[i].ok)
            fail_msg("%s: want %s", want[i].addr, want[i].ok ? "allowed" : "refused");
    }
    /* Everything: the rule switched off. */
    assert_int_equal(netpolicy_allow_parse(&p, "0.0.0.0/0 ::/0", 14, why, sizeof why), 0);
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        struct netpolicy_addr a = addr(cases[i].addr);
        assert_true(netpolicy_permits(&p, &a, NULL, 0));
    }
    /* An empty list allows nothing special. */
    assert_int_equal(netpolicy_allow_parse(&p, " , ", 3, why, sizeof why), 0);
    assert_int_equal(p.n_allow, 0);
}

static void malformed_allow_lists_are_refused_with_the_culprit_named(void **state)
{
    (void)state;
    static const struct {
        const char *text;
        int rc;
        const char *msg;
    } bad[] = {
        {"127.0.0.1/8", ERR_PARSE,
         "'127.0.0.1/8' has bits set past its prefix length: write "
         "127.0.0.0/8"},
        {"fd00::1/8", ERR_PARSE, "write fd00::/8"},
        {"10.0.0.0/33", ERR_PARSE,
         "'10.0.0.0/33': the prefix length must be a number from 0 to "
         "32"},
        {"::/129", ERR_PARSE, "0 to 128"},
        {"10.0.0.0/", ERR_PARSE, "prefix length"},
        {"10.0.0.0/-1", ERR_PARSE, "prefix length"},
        {"10.0.0.0/0008", ERR_PARSE, "prefix length"},
        {"127.1/32", ERR_PARSE, "'127.1/32' is not a network"},
        {"0x7f000001", ERR_PARSE, "is not a network"},
        {"010.0.0.0/8", ERR_PARSE, "is not a network"},
        {"localhost", ERR_PARSE, "'localhost' is not a network"},
        {"/8", ERR_PARSE, "is not a network"},
        {"10.0.0.0/8 nonsense", ERR_PARSE, "'nonsense'"},
        {"fe80::1%eth0", ERR_PARSE, "is not a network"},
        {"1.2.3.4\x01/32", ERR_PARSE, "'1.2.3.4?/32'"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        struct netpolicy p;
        netpolicy_init(&p);
        assert_int_equal(netpolicy_allow_parse(&p, "::1", 3, NULL, 0), 0);
        char why[NETPOLICY_WHY_MAX] = "";
        int rc = netpolicy_allow_parse(&p, bad[i].text, strlen(bad[i].text), why, sizeof why);
        if (rc != bad[i].rc || !strstr(why, bad[i].msg))
            fail_msg("'%s': rc %d, message '%s'", bad[i].text, rc, why);
        assert_int_equal(p.n_allow, 1); /* unchanged */
    }
    /* More networks than fit. */
    char many[NETPOLICY_ALLOW_MAX * 16 + 32];
    size_t n = 0;
    for (int i = 0; i <= NETPOLICY_ALLOW_MAX; i++)
        n += (size_t)snprintf(many + n, sizeof many - n, "10.%d.0.0/16 ", i);
    struct netpolicy p;
    char why[NETPOLICY_WHY_MAX];
    assert_int_equal(netpolicy_allow_parse(&p, many, n, why, sizeof why), ERR_TOO_LARGE);
    /* Exactly as many as fit. */
    n = 0;
    for (int i = 0; i < NETPOLICY_ALLOW_MAX; i++)
        n += (size_t)snprintf(many + n, sizeof many - n, "10.%d.0.0/16,", i);
    assert_int_equal(netpolicy_allow_parse(&p, many, n, why, sizeof why), 0);
    assert_int_equal(p.n_allow, NETPOLICY_ALLOW_MAX);
}

/* Host literals are read as inet_aton reads them: the resolver libcurl
 * calls accepts the same forms. */
static void numeric_hosts_read_as_inet_aton_does(void **state)
{
    (void)state;
    static const char *const hosts[] = {
        "127.0.0.1",
        "127.1",
        "127.0.1",
        "0x7f000001",
        "0X7F000001",
        "2130706433",
        "017700000001",
        "0x7f.1",
        "0177.0.0.01",
        "0x7f.0x0.0x0.0x1",
        "127.0.0.0x1",
        "10.0.0.1",
        "0",
        "0x0",
        "00",
        "4294967295",
        "4294967296",
        "0x100000000",
        "1.2.3.4.5",
        "256.0.0.1",
        "1.256.0.1",
        "1.2.65535",
        "1.2.65536",
        "1.16777215",
        "1.16777216",
        "08",
        "09.1.1.1",
        "0x",
        "0x.1.1.1",
        "0xg",
        "1..1",
        ".1.1.1",
        "1.1.1.",
        "1.1.1.1.",
        "+1.1.1.1",
        "-1",
        "1e3",
        "",
        "a.b.c.d",
        "0xffffffff",
        "0x00000000007f000001",
        "000000000000000000000000000000000001",
        "99999999999999999999",
        "1.2.3.0x",
        "0.0.0.0",
        "255.255.255.255",
        "0377.0377.0377.0377",
        "0400.0.0.0",
    };
    for (size_t i = 0; i < sizeof hosts / sizeof hosts[0]; i++) {
        const char *h = hosts[i];
        size_t n = strlen(h);
        struct in_addr want;
        /* One trailing dot names the same host; inet_aton lacks that rule. */
        char plain[64];
        snprintf(plain, sizeof plain, "%s", h);
        if (n > 0 && plain[n - 1] == '.')
            plain[n - 1] = '\0';
        bool libc = inet_aton(plain, &want) != 0;
        struct netpolicy_addr a;
        bool ours = netpolicy_addr_from_host(&a, h, n);
        if (ours != libc)
            fail_msg("'%s': inet_aton says %d, we say %d", h, libc, ours);
        if (ours && memcmp(a.b + 12, &want.s_addr, 4) != 0)
            fail_msg("'%s': a different address", h);
    }
    /* However long: "0000...0177.1" is 127.0.0.1 (found by fuzz_netpolicy:
     * a copy into a fixed buffer had refused hosts over 255 bytes). */
    char longer[600];
    memset(longer, '0', 400);
    snprintf(longer + 400, sizeof longer - 400, "177.1");
    struct netpolicy_addr la;
    struct in_addr lw;
    assert_int_equal(inet_aton(longer, &lw), 1);
    assert_true(netpolicy_addr_from_host(&la, longer, strlen(longer)));
    assert_memory_equal(la.b + 12, &lw.s_addr, 4);
    assert_string_equal(netpolicy_special_use(&la), "loopback");
    /* Every way of writing 127.0.0.1 the issue lists is loopback. */
    static const char *const loopbacks[] = {
        "0x7f000001", "127.1", "2130706433",       "017700000001", "%31%32%37.0.0.1",
        "127.0.0.1.", "[::1]", "::ffff:127.0.0.1", "::1",          "0:0:0:0:0:0:0:1"};
    for (size_t i = 0; i < sizeof loopbacks / sizeof loopbacks[0]; i++) {
        const char *h = loopbacks[i];
        size_t n = strlen(h);
        if (h[0] == '[') { /* brackets belong to the URL, not the host */
            h++;
            n -= 2;
        }
        struct netpolicy_addr a;
        if (!netpolicy_addr_from_host(&a, h, n))
            fail_msg("'%s' not read as an address", loopbacks[i]);
        const char *kind = netpolicy_special_use(&a);
        if (!kind || strcmp(kind, "loopback") != 0)
            fail_msg("'%s' is %s", loopbacks[i], kind ? kind : "public");
    }
    /* IPv6 zones are dropped; names are not addresses. */
    struct netpolicy_addr a;
    assert_true(netpolicy_addr_from_host(&a, "fe80::1%25eth0", 14));
    assert_string_equal(netpolicy_special_use(&a), "link-local");
    assert_false(netpolicy_addr_from_host(&a, "localhost", 9));
    assert_false(netpolicy_addr_from_host(&a, "example.com", 11));
    assert_false(netpolicy_addr_from_host(&a, "127.0.0.1%00", 12));
    /* Only len bytes count: "1.2" of "1.2.3.4" is 1.0.0.2. */
    assert_true(netpolicy_addr_from_host(&a, "1.2.3.4", 3));
    char text[NETPOLICY_ADDR_TEXT];
    netpolicy_addr_format(&a, text);
    assert_string_equal(text, "1.0.0.2");
}

static void url_hosts_that_are_blocked_addresses_are_refused(void **state)
{
    (void)state;
    char why[NETPOLICY_WHY_MAX];
    static const char *const refused[] = {
        "http://0x7f000001:8080/",
        "http://127.1/",
        "http://[::1]/",
        "http://[::1]:8080/x",
        "https://user:pw@10.0.0.1/feed",
        "http://2130706433/",
        "http://017700000001/",
        "http://169.254.169.254/latest/meta-data/",
        "http://[::ffff:127.0.0.1]/",
        "HTTP://0.0.0.0/",
        "http://[fe80::1%25eth0]/",
    };
    for (size_t i = 0; i < sizeof refused / sizeof refused[0]; i++) {
        if (netpolicy_permits_url(NULL, refused[i], why, sizeof why))
            fail_msg("%s was permitted", refused[i]);
        assert_non_null(strstr(why, "refused: "));
    }
    static const char *const passed[] = {
        "http://localhost/",
        "https://example.com/feed?x=127.0.0.1",
        "http://8.8.8.8/",
        "http://[2606:4700::1]/",
        "http://example.com/127.0.0.1",
        "no url at all",
        "http://127.0.0.1.example.com/",
    };
    for (size_t i = 0; i < sizeof passed / sizeof passed[0]; i++) {
        if (!netpolicy_permits_url(NULL, passed[i], why, sizeof why))
            fail_msg("%s was refused: %s", passed[i], why);
    }
    struct netpolicy p;
    assert_int_equal(netpolicy_allow_parse(&p, "127.0.0.0/8", 11, why, sizeof why), 0);
    assert_true(netpolicy_permits_url(&p, "http://0x7f000001:8080/", why, sizeof why));
    assert_false(netpolicy_permits_url(&p, "http://[::1]/", why, sizeof why));
    assert_false(netpolicy_permits_url(&p, "http://10.0.0.1/", why, sizeof why));
}

static void socket_addresses_of_either_family_compare_alike(void **state)
{
    (void)state;
    struct sockaddr_in in;
    memset(&in, 0, sizeof in);
    in.sin_family = AF_INET;
    in.sin_port = htons(80);
    in.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    struct sockaddr_in6 in6;
    memset(&in6, 0, sizeof in6);
    in6.sin6_family = AF_INET6;
    assert_int_equal(inet_pton(AF_INET6, "::ffff:127.0.0.1", &in6.sin6_addr), 1);
    struct netpolicy_addr a, b;
    assert_true(netpolicy_addr_from_sockaddr(&a, &in, sizeof in));
    assert_true(netpolicy_addr_from_sockaddr(&b, &in6, sizeof in6));
    assert_memory_equal(a.b, b.b, 16);
    char text[NETPOLICY_ADDR_TEXT];
    netpolicy_addr_format(&b, text);
    assert_string_equal(text, "127.0.0.1");
    in6.sin6_addr = in6addr_loopback;
    assert_true(netpolicy_addr_from_sockaddr(&b, &in6, sizeof in6));
    netpolicy_addr_format(&b, text);
    assert_string_equal(text, "::1");
    assert_string_equal(netpolicy_special_use(&b), "loopback");
    /* Other families and short lengths are not addresses. */
    struct sockaddr_un un;
    memset(&un, 0, sizeof un);
    un.sun_family = AF_UNIX;
    assert_false(netpolicy_addr_from_sockaddr(&a, &un, sizeof un));
    assert_false(netpolicy_addr_from_sockaddr(&a, &in, sizeof in - 1));
    assert_false(netpolicy_addr_from_sockaddr(&a, &in6, sizeof in6 - 1));
    assert_false(netpolicy_addr_from_sockaddr(&a, &in, 1));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(every_special_range_is_named_and_public_addresses_pass),
        cmocka_unit_test(a_refusal_says_what_the_address_is_and_how_to_allow_it),
        cmocka_unit_test(allowed_networks_open_exactly_their_addresses),
        cmocka_unit_test(malformed_allow_lists_are_refused_with_the_culprit_named),
        cmocka_unit_test(numeric_hosts_read_as_inet_aton_does),
        cmocka_unit_test(url_hosts_that_are_blocked_addresses_are_refused),
        cmocka_unit_test(socket_addresses_of_either_family_compare_alike),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
