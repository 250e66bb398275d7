/*
 * err.c - the status table and the optional error-detail buffer (scv_err).
 * Every module reports failures as an SCV_* code plus, where the caller passed a buffer,
 * a message that names the file, line, field or option at fault. Also the library's
 * version at run time (scv_version, scv_version_number), and the end of a broken
 * invariant (SCV_ASSERT, invariant.h).
 */
#include "scv.h"
#include "core/invariant.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>

void scv_assert_fail(const char *file, int line, const char *func, const char *cond)
{
    fprintf(stderr, "%s:%d: %s: invariant failed: %s\n", file, line, func, cond);
    fflush(stderr);
    abort();
}

const char *scv_version(void) { return SCV_VERSION; }

int scv_version_number(void) { return SCV_VERSION_NUMBER; }

const char *scv_strerror(int code)
{
    switch (code) {
#define SCV__STR(name, num, text) case num: return text;
        SCV_STATUS_MAP(SCV__STR)
#undef SCV__STR
    }
    return "unknown status";
}

const char *scv_errname(int code)
{
    switch (code) {
#define SCV__NAME(name, num, text) case num: return "SCV_" #name;
        SCV_STATUS_MAP(SCV__NAME)
#undef SCV__NAME
    }
    return "SCV_UNKNOWN";
}

int scv_err_set(scv_err *err, int code, const char *fmt, ...)
{
    if (err) {
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(err->msg, sizeof err->msg, fmt, ap);
        va_end(ap);
        err->code = code;
    }
    return code;
}
