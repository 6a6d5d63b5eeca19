/* What build of newsd this is: the release (the VERSION file) and the git
 * commit it was built from ("unknown" outside a checkout; "-dirty" when
 * the tree had changes). Shown by newsd --version, /healthz and the
 * newsd_build_info metric. */
#ifndef NEWSD_UTIL_VERSION_H
#define NEWSD_UTIL_VERSION_H

/* "0.14.0" */
const char *version_release(void);
/* "1a2b3c4d5e6f", "1a2b3c4d5e6f-dirty" or "unknown" */
const char *version_commit(void);

#endif
