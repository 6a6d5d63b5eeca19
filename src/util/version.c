/* The build's version (util/version.h), from build/gen/version.h. */
#include "util/version.h"

#include "newsd_version.h" /* build/gen, scripts/version.sh */

const char *version_release(void)
{
    return NEWSD_VERSION;
}

const char *version_commit(void)
{
    return NEWSD_COMMIT;
}
