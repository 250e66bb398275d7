/*
 * child.h - running the scavenger executable's own commands as child processes (the
 * relaunch driver and `sweep` drive `scavenger train` this way), capturing the JSON
 * summary line, and building a `scavenger train` command line in one place.
 */
#ifndef SCV_CHILD_H
#define SCV_CHILD_H
#include <stddef.h>
#include <stdint.h>
#include "scv.h"

/* Runs exe (NULL = /proc/self/exe) with argv (argv[0] is a name) and waits: SCV_OK with
 * its exit status in *status (128 + signal when killed), or SCV_EIO when it could not be
 * started. The last stdout line that starts with '{' goes to json. While it runs,
 * tick(ctx) is called about every tick_ms (tick may be NULL). The parent ignores SIGINT
 * meanwhile, so Ctrl-C reaches the child, which stops cleanly; SIGTERM is passed on to the
 * child the same way; *interrupted is set when SIGINT or SIGTERM arrived (with interrupted
 * NULL, a SIGTERM is raised again once the child has ended). The child gets SIGTERM when
 * this process dies (PR_SET_PDEATHSIG), so no child outlives it, even after SIGKILL. */
int scv_run_self(const char *exe, char *const *argv, char *json, size_t cap, int *status, int *interrupted,
                 void (*tick)(void *ctx), void *ctx, int tick_ms, scv_err *err);
/* scv_run_self that also reads the child's stderr: it is passed on to this process's stderr
 * as it comes, and the child's last error line (the last line that starts with "scavenger ",
 * the prefix of every command's messages) goes to errline ("" if none). The child runs with
 * SIGPIPE ignored, so it survives writing to the pipe after this process has died. */
int scv_run_self_err(const char *exe, char *const *argv, char *json, size_t cap, char *errline, size_t errcap,
                     int *status, int *interrupted, void (*tick)(void *ctx), void *ctx, int tick_ms,
                     scv_err *err);
/* 1 when a child's error line says that a file could not be written because its file
 * system refuses writes (no space left, quota exceeded, read-only, file too large): a
 * relaunch cannot mend that; 0 otherwise (a worker that died, a crash). */
int scv_child_write_failure(const char *errline);

/* A growing argv of owned strings, NULL-terminated. */
typedef struct scv_argv {
    char **v;
    int n, cap;
    int oom;
} scv_argv;
void scv_argv_add(scv_argv *a, const char *s);
void scv_argv_addf(scv_argv *a, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
void scv_argv_free(scv_argv *a);

/* One `scavenger train` invocation. Zero fields are left out. */
typedef struct scv_train_cmd {
    const char *const *job_opts;  /* the job's own options: "--model", "lenet", ..., NULL */
    const char *cluster, *vm_type;
    const char *hosts;            /* an Open MPI hostfile (real machines) */
    int dynamic_batching;
    const char *catalog;          /* the VM catalog --vm-type is checked against (NULL = default) */
    int workers, batch;
    const double *split;          /* K shares of B, NULL = even */
    const char *checkpoint_dir;
    int64_t checkpoint_every;
    int resume;
    const char *metrics;
    double target_accuracy, target_loss, epochs;
    int64_t iterations;
    double eval_every_epochs;
    int noise_window;
    double noise_tol;
    double time_rse;
    int time_min;
    int no_final_eval;
    int eval_subset;              /* periodic evaluations on this many test samples (0 = all) */
    int target_window;            /* smoothed target: mean of the last W evaluations (0 = off) */
    const double *history;        /* earlier target values that prefill the window */
    int n_history;
    int progress;                 /* the child's progress line on stderr */
    const char *elastic_control;  /* the elastic job's control directory (NULL: not elastic) */
    double compress_cf;           /* > 1: --compress topk:CF (0: dense) */
    const char *collective;       /* ... --collective allgather|artopk|auto (NULL: left out) */
    int selsync;                  /* 1: --selsync lssr:R (R = selsync_lssr > 0), or --selsync 0 (R = 0) */
    double selsync_lssr;
} scv_train_cmd;
/* argv = {"scavenger", "train", job options, then the command's}; a.oom on failure. */
void scv_train_argv(scv_argv *a, const scv_train_cmd *c);
#endif
