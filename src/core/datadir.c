/*
 * datadir.c - where the distribution's data files are (vm-catalog.csv, emulated-vms.csv):
 * data/ of the working directory (a checkout), then beside the executable (a checkout's
 * build/ or build/MODE/, or an installed bin/ next to share/scavenger/), then beside the
 * library itself (libscv.so loaded by a binding: a checkout's build/, or an installed lib/),
 * then SCV_DATADIR, the directory `make install` copies them to (compiled in from PREFIX;
 * only this file depends on it).
 */
#define _GNU_SOURCE /* dladdr */
#include "scv.h"

#include <dlfcn.h>
#include <libgen.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#ifndef SCV_DATADIR
#define SCV_DATADIR "/usr/local/share/scavenger"
#endif

/* Tries DIR/REL/NAME for each relative place; 1 with the path in buf when one is readable. */
static int try_beside(const char *file, const char *name, char *buf, size_t cap)
{
    static const char *const rel[] = {"../data", "../../data", "../share/scavenger"};
    char copy[4096];
    if (snprintf(copy, sizeof copy, "%s", file) >= (int)sizeof copy) return 0;
    const char *dir = dirname(copy);
    for (size_t i = 0; i < sizeof rel / sizeof rel[0]; i++) {
        int n = snprintf(buf, cap, "%s/%s/%s", dir, rel[i], name);
        if (n > 0 && (size_t)n < cap && access(buf, R_OK) == 0) return 1;
    }
    return 0;
}

const char *scv_data_file(const char *name, char *buf, size_t cap)
{
    snprintf(buf, cap, "data/%s", name);
    if (access(buf, R_OK) == 0) return buf;
    char exe[4096];
    ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
    if (n > 0) {
        exe[n] = 0;
        if (try_beside(exe, name, buf, cap)) return buf;
    }
    Dl_info info;
    if (dladdr((void *)scv_data_file, &info) && info.dli_fname && info.dli_fname[0] == '/' &&
        (n <= 0 || strcmp(info.dli_fname, exe)) && try_beside(info.dli_fname, name, buf, cap))
        return buf;
    int len = snprintf(buf, cap, "%s/%s", SCV_DATADIR, name);
    if (len > 0 && (size_t)len < cap && access(buf, R_OK) == 0) return buf;
    snprintf(buf, cap, "data/%s", name);
    return buf;
}
