/*
 * scv_test.h - the project's tiny test harness. A test binary lists its tests in a table;
 * each runs in order and prints "ok N - name" or "not ok N - name" with the failing
 * checks (file:line: expression). The binary ends with "N passed, N failed" and exits
 * non-zero on any failure. An optional argument runs only the tests whose name contains it;
 * SCV_TEST_TIMES=1 adds each test's seconds ("# name: 1.234 s") after its line.
 */
#ifndef SCV_TEST_H
#define SCV_TEST_H
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static int scv_t_fail;

#define CHECK(cond)                                                                   \
    do {                                                                              \
        if (!(cond)) {                                                                \
            fprintf(stdout, "#   %s:%d: CHECK(%s)\n", __FILE__, __LINE__, #cond);     \
            scv_t_fail++;                                                             \
        }                                                                             \
    } while (0)

#define CHECK_MSG(cond, ...)                                                          \
    do {                                                                              \
        if (!(cond)) {                                                                \
            fprintf(stdout, "#   %s:%d: CHECK(%s): ", __FILE__, __LINE__, #cond);     \
            fprintf(stdout, __VA_ARGS__);                                             \
            fputc('\n', stdout);                                                      \
            scv_t_fail++;                                                             \
        }                                                                             \
    } while (0)

#define CHECK_EQ_INT(a, b)                                                                  \
    do {                                                                                    \
        long long va_ = (long long)(a), vb_ = (long long)(b);                               \
        CHECK_MSG(va_ == vb_, "%s = %lld, %s = %lld", #a, va_, #b, vb_);                    \
    } while (0)

#define CHECK_NEAR(a, b, rel, abs_)                                                         \
    do {                                                                                    \
        double va_ = (double)(a), vb_ = (double)(b);                                        \
        CHECK_MSG(fabs(va_ - vb_) <= (abs_) + (rel) * fmax(fabs(va_), fabs(vb_)),          \
                  "%s = %.9g, %s = %.9g", #a, va_, #b, vb_);                                \
    } while (0)

typedef struct {
    const char *name;
    void (*fn)(void);
} scv_test;

static double scv_t_now(void) /* C11's clock: the includer may define no POSIX level */
{
    struct timespec ts;
    timespec_get(&ts, TIME_UTC);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static int scv_test_main(const scv_test *tests, int n, int argc, char **argv)
{
    int passed = 0, failed = 0, num = 0;
    const char *times = getenv("SCV_TEST_TIMES");
    int timed = times && strcmp(times, "") && strcmp(times, "0");
    for (int i = 0; i < n; i++) {
        if (argc > 1 && !strstr(tests[i].name, argv[1])) continue;
        scv_t_fail = 0;
        double t0 = scv_t_now();
        tests[i].fn();
        num++;
        if (scv_t_fail) {
            printf("not ok %d - %s\n", num, tests[i].name);
            failed++;
        } else {
            printf("ok %d - %s\n", num, tests[i].name);
            passed++;
        }
        if (timed) printf("# %s: %.3f s\n", tests[i].name, scv_t_now() - t0);
        fflush(stdout);
    }
    printf("%d passed, %d failed\n", passed, failed);
    return failed ? 1 : 0;
}
#define SCV_TEST_MAIN(table)                                                          \
    int main(int argc, char **argv)                                                   \
    {                                                                                 \
        return scv_test_main(table, (int)(sizeof table / sizeof table[0]), argc, argv); \
    }
#endif
