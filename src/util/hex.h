/* Hexadecimal digits: the one reader of them, for the %XX decoders (query
 * strings, the access log's key masking, URL hosts) and hex numbers. */
#ifndef NEWSD_UTIL_HEX_H
#define NEWSD_UTIL_HEX_H

/* The value of hex digit c (0-9, a-f, A-F), -1 when it is not one. */
static inline int hex_digit_value(char c)
{
    if (c >= '0' && c <= '9')
        return c - '0';
    if (c >= 'a' && c <= 'f')
        return c - 'a' + 10;
    if (c >= 'A' && c <= 'F')
        return c - 'A' + 10;
    return -1;
}

#endif
