/* Functions we never call: unbounded copies and non-reentrant time calls.
 * Include after system headers. */
#ifndef NEWSD_UTIL_BANNED_H
#define NEWSD_UTIL_BANNED_H

#define BANNED_(func) sorry_##func##_is_banned

#undef strcpy
#define strcpy(x, y) BANNED_(strcpy)
#undef strcat
#define strcat(x, y) BANNED_(strcat)
#undef strncpy
#define strncpy(x, y, n) BANNED_(strncpy)
#undef strncat
#define strncat(x, y, n) BANNED_(strncat)
#undef sprintf
#define sprintf(...) BANNED_(sprintf)
#undef vsprintf
#define vsprintf(...) BANNED_(vsprintf)
#undef strtok
#define strtok(x, y) BANNED_(strtok)
#undef gmtime
#define gmtime(x) BANNED_(gmtime)
#undef localtime
#define localtime(x) BANNED_(localtime)
#undef ctime
#define ctime(x) BANNED_(ctime)
#undef asctime
#define asctime(x) BANNED_(asctime)
#undef atoi
#define atoi(x) BANNED_(atoi)
#undef atol
#define atol(x) BANNED_(atol)

#endif
