/* domain_normalize() of util/domain.h. */
#include "util/domain.h"

#include <string.h>

#include "util/ascii.h"
#include "util/banned.h"

static int domain_char_ok(unsigned char ch)
{
    return ch > ' ' && ch != '/' && ch != '?' && ch != '#' && ch != '@' && ch != '\\' &&
           ch != 0x7F && ch != ',';
}

char *domain_normalize(char *d)
{
    for (char *p = d; *p; p++)
        *p = ascii_lower(*p);
    /* Clients paste URLs: accept a scheme prefix and drop it. */
    if (!strncmp(d, "https://", 8))
        d += 8;
    else if (!strncmp(d, "http://", 7))
        d += 7;
    if (!strncmp(d, "www.", 4))
        d += 4;
    size_t len = strlen(d);
    while (len && d[len - 1] == '.')
        d[--len] = '\0';
    if (!len || d[0] == '.')
        return NULL;
    for (size_t j = 0; j < len; j++)
        if (!domain_char_ok((unsigned char)d[j]))
            return NULL;
    return d;
}
