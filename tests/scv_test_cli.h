/*
 * scv_test_cli.h - what the end-to-end tests of the command line share (test_cli.c: train,
 * plan and the other commands; test_cli_run.c: `scavenger run` and the exec driver, a binary
 * of its own so that the two run side by side): the binary under test ($SCV_BIN, else
 * build/scavenger), a private temporary directory, the small jobs, a checkpoint's parameters
 * and a look into a file. Needs _POSIX_C_SOURCE 200809L and scv_test.h first.
 */
#ifndef SCV_TEST_CLI_H
#define SCV_TEST_CLI_H
#include "scv.h"
#include "train/ckpt.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static const char *bin;
static char tmp[256];
#define JOB "--model mlp --hidden 32 --dataset synthetic:2000 --seed 3 --progress never"
#define RUNJOB                                                                                                         \
    "--model mlp --hidden 32 --dataset synthetic:4000 --lr 0.003 --target-accuracy 0.96 --workers 1,2 --batch 32,128"

/* The parameters of the checkpoint in dir (malloc'ed; NULL, said why, when it cannot load). */
static inline float *load_params(const char *dir, size_t *n, scv_ckpt_state *st)
{
    float *p = NULL, *m = NULL;
    scv_err err = {0};
    if (scv_ckpt_load(dir, st, &p, &m, n, &err) != SCV_OK) {
        printf("#   %s\n", err.msg);
        return NULL;
    }
    free(m);
    return p;
}

/* 1 when the file's first MiB holds needle. */
static inline int file_has(const char *path, const char *needle)
{
    FILE *f = fopen(path, "r");
    if (!f) return 0;
    static char buf[1 << 20];
    size_t n = fread(buf, 1, sizeof buf - 1, f);
    fclose(f);
    buf[n] = 0;
    return strstr(buf, needle) != NULL;
}

/* main() of a binary of end-to-end tests: the binary under test, the temporary directory
 * /tmp/scv-test-NAME-PID (removed after a pass, kept after a failure), the tests. */
static inline int scv_cli_main(const scv_test *tests, int n, const char *name, int argc, char **argv)
{
    bin = getenv("SCV_BIN") ? getenv("SCV_BIN") : "build/scavenger";
    snprintf(tmp, sizeof tmp, "/tmp/scv-test-%s-%ld", name, (long)getpid());
    mkdir(tmp, 0755);
    int rc = scv_test_main(tests, n, argc, argv);
    char cmd[300];
    snprintf(cmd, sizeof cmd, "rm -rf %s", tmp);
    if (rc == 0 && system(cmd) != 0) rc = 1;
    return rc;
}
#endif
