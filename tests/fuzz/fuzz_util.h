/*
 * fuzz_util.h - shared by the libFuzzer harnesses: the readers take file paths, so each
 * harness writes its input to a file in a private directory made once with mkdtemp.
 */
#ifndef SCV_FUZZ_UTIL_H
#define SCV_FUZZ_UTIL_H
#define _POSIX_C_SOURCE 200809L
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* The harness's own temp directory (created on first use, removed at exit). */
static char fuzz_dir_path[64];
static void fuzz_dir_cleanup(void)
{
    char cmd[128];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", fuzz_dir_path);
    if (system(cmd) != 0) { /* nothing to do */ }
}
static const char *fuzz_dir(void)
{
    if (!fuzz_dir_path[0]) {
        const char *t = getenv("TMPDIR");
        snprintf(fuzz_dir_path, sizeof fuzz_dir_path, "%s/scv-fuzz-XXXXXX",
                 t && *t && strlen(t) < 40 ? t : "/tmp");
        if (!mkdtemp(fuzz_dir_path)) abort();
        atexit(fuzz_dir_cleanup);
    }
    return fuzz_dir_path;
}

/* Writes n bytes to dir/name (n == (size_t)-1: removes it); returns the path (static). */
static const char *fuzz_write(const char *name, const uint8_t *data, size_t n)
{
    static char path[256];
    snprintf(path, sizeof path, "%s/%s", fuzz_dir(), name);
    if (n == (size_t)-1) {
        unlink(path);
        return path;
    }
    FILE *f = fopen(path, "wb");
    if (!f) abort();
    if (n && fwrite(data, 1, n, f) != n) abort();
    if (fclose(f) != 0) abort();
    return path;
}
#endif
