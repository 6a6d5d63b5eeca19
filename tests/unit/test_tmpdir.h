/* Shared by the unit tests that make stores in temporary directories:
 * remove one again, whatever it holds. */
#ifndef NEWSD_TEST_TMPDIR_H
#define NEWSD_TEST_TMPDIR_H

#include <dirent.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

static void remove_tree(const char *path)
{
    DIR *d = opendir(path);
    if (d) {
        struct dirent *e;
        while ((e = readdir(d)) != NULL) {
            char child[512];
            if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, ".."))
                continue;
            snprintf(child, sizeof child, "%s/%s", path, e->d_name);
            remove_tree(child);
        }
        closedir(d);
        rmdir(path);
    } else {
        unlink(path);
    }
}

#endif
