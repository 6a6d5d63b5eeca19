/* The one reading of a domain a client names (domains=, excludeDomains=,
 * and domain: in q): ASCII lower case, a pasted "http://" / "https://" and
 * a leading "www." dropped, trailing dots dropped. Shared so a domain means
 * the same as a parameter and as a field term of the query language. */
#ifndef NEWSD_UTIL_DOMAIN_H
#define NEWSD_UTIL_DOMAIN_H

/* Normalize the NUL-terminated d in place; the domain starts at the
 * returned pointer (inside d). NULL when nothing is left, it starts with a
 * dot, or it holds a byte no host name has (space, control, '/', '?', '#',
 * '@', '\\', DEL, ','). */
char *domain_normalize(char *d);

#endif
