/* The request headers the HTTP layer reads itself, as functions of their
 * text alone: server.c looks the values up in libmicrohttpd and calls
 * these; fuzz/fuzz_headers.c runs them on any bytes. */
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include "http/internal.h"

long long http_content_length_parse(const char *cl)
{
    if (!cl)
        return -1;
    while (*cl == ' ' || *cl == '\t')
        cl++;
    long long n = 0;
    size_t digits = 0;
    for (; *cl >= '0' && *cl <= '9'; cl++, digits++) {
        if (n > (1LL << 40))
            return -1;
        n = n * 10 + (*cl - '0');
    }
    while (*cl == ' ' || *cl == '\t')
        cl++;
    return digits && !*cl ? n : -1;
}

bool http_content_length_announces(const char *cl)
{
    if (!cl)
        return false;
    while (*cl == ' ' || *cl == '\t')
        cl++;
    while (*cl == '0')
        cl++;
    return *cl >= '1' && *cl <= '9';
}

void http_forwarded_client(char client[NETPOLICY_ADDR_TEXT], const char *xff,
                           const struct netpolicy *trusted)
{
    struct netpolicy_addr a;
    size_t end = xff ? strlen(xff) : 0;
    while (end > 0) {
        size_t start = end;
        while (start > 0 && xff[start - 1] != ',')
            start--;
        size_t b = start, e = end;
        while (b < e && (xff[b] == ' ' || xff[b] == '\t'))
            b++;
        while (e > b && (xff[e - 1] == ' ' || xff[e - 1] == '\t'))
            e--;
        if (e == b || e - b >= NETPOLICY_ADDR_TEXT || !netpolicy_addr_from_host(&a, xff + b, e - b))
            return;
        char text[NETPOLICY_ADDR_TEXT];
        netpolicy_addr_format(&a, text);
        snprintf(client, NETPOLICY_ADDR_TEXT, "%s", text);
        if (!netpolicy_holds(trusted, &a))
            return;
        end = start > 0 ? start - 1 : 0;
    }
}
