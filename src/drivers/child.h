/*
 * child.h - running the scavenger executable's own commands as child processes (the
 * relaunch driver and `sweep` drive `scavenger train` this way), capturing the JSON
 * summary line, and building a `scavenger train` command line in one place.
 */
#ifndef SCV_CHILD_H
#define SCV_CHILD_H
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>
#include "scv.h"
#include "../io/segwire.h"

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
/* While fn is set (NULL: none), scv_run_self_err passes it every line of the child's stderr
 * as it comes (the relaunch driver watches its job's output for a failed launch). */
void scv_run_self_on_line(void (*fn)(void *ctx, const char *line), void *ctx);
/* 1 once SIGINT or SIGTERM reached this process while scv_run_self waits for its child (the
 * child was asked to stop and is saving its state): a tick must not end it then. */
int scv_run_self_stopping(void);
/* Sends sig to the child scv_run_self is waiting for (from its tick; none: no-op). */
void scv_run_self_signal(int sig);
/* scv_kill_tree on that child; 0 when there is none (it has exited and been reaped). */
int scv_run_self_kill_tree(void);
/* SIGKILL to root and every process descending from it on this machine (found in /proc by
 * their parents), a stopped one too: a job the watchdog ends leaves nothing behind (mpirun
 * puts ranks in process groups of their own, so a group's kill misses them). */
void scv_kill_tree(pid_t root);
/* 1 when a child's error line says that a file could not be written because its file
 * system refuses writes (no space left, quota exceeded, read-only, file too large): a
 * relaunch cannot mend that; 0 otherwise (a worker that died, a crash). */
int scv_child_write_failure(const char *errline);

/* One `scavenger train` invocation: the job and where it runs, then the segment (the
 * codec's struct, src/io/segwire.h: its options come from the codec's one table). Zero
 * fields are left out. */
typedef struct scv_train_cmd {
    const char *const *job_opts;  /* the job's own options: "--model", "lenet", ..., NULL */
    const char *cluster, *vm_type;
    const char *hosts;            /* an Open MPI hostfile (real machines) */
    const char *catalog;          /* the VM catalog --vm-type is checked against (NULL = default) */
    int progress;                 /* the child's progress line on stderr */
    const char *elastic_control;  /* the elastic job's control directory (NULL: not elastic) */
    const scv_segwire *seg;       /* K, B, the rules, paths (NULL: none) */
} scv_train_cmd;
/* argv = {"scavenger", "train", job options, then the command's}; a.oom on failure. */
void scv_train_argv(scv_argv *a, const scv_train_cmd *c);
#endif
