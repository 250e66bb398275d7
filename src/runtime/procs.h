/*
 * procs.h - the processes of a job, found and ended (procs.c), and the rank guard
 * (rankguard.c). A job's processes are found two ways: by descent (from /proc's parent
 * links; a subreaper, PR_SET_CHILD_SUBREAPER, keeps a double-forked child among its
 * descendants), and by the tag every process of a launch inherits in its environment
 * (SCV_JOB_<launcher pid>=<child pid>, set by launch.c before mpirun starts), which finds a
 * process wherever it was reparented (to init, after its mpirun or its guard died).
 */
#ifndef SCV_PROCS_H
#define SCV_PROCS_H
#include <signal.h>
#include <stddef.h>
#include <sys/types.h>

/* How a job's remaining processes are ended (scv_proc_end). */
typedef struct scv_proc_policy {
    double linger_s; /* 0.5: after the trainer's main process exited, its other processes may
                        end by themselves (a logging daemon that watches its parent) */
    double term_s;   /* 2: after SIGTERM (and SIGCONT, for a stopped one), before SIGKILL */
    double gone_s;   /* 5: after SIGKILL, the longest waited for them to be gone */
    /* NULL, or a flag a signal handler sets when the end must come sooner (the rank guard:
     * mpirun is ending the job, its SIGKILL near): from then on no more lingering, and at
     * most hurry_s between SIGTERM and SIGKILL */
    const volatile sig_atomic_t *hurry;
    double hurry_s;
} scv_proc_policy;
scv_proc_policy scv_proc_policy_default(void);

/* Up to cap live (not zombie) descendants of root on this machine, from /proc, root
 * excluded, parents before their children; returns how many. */
int scv_proc_descendants(pid_t root, pid_t *out, int cap);
/* Up to cap live processes whose environment holds SCV_JOB_<launcher>=<child> (the tag of
 * the launch of child by launcher; scv_proc_tag_set), this process excluded; returns how many. */
int scv_proc_tagged(pid_t launcher, pid_t child, pid_t *out, int cap);
/* In a forked child, before exec: tags it and every process it will start (the variable
 * SCV_JOB_<parent pid>=<its pid>). */
void scv_proc_tag_set(void);
/* "pid N `COMMAND LINE`" (the command line cut to fit; its name from /proc/N/comm when the
 * command line cannot be read) into buf. */
void scv_proc_describe(pid_t pid, char *buf, size_t cap);

/* A way to find a set of processes: fills out (up to cap), returns how many. */
typedef int (*scv_proc_find)(void *ctx, pid_t *out, int cap);
/* Ends the processes find finds: waits up to linger_s for them to end by themselves, then
 * SIGTERM and SIGCONT to each, term_s, SIGKILL to those left (looked up again: a child
 * started meanwhile too), and waits up to gone_s for none to be left; reaps those that are
 * this process's children. Those found after linger_s are named in named ("pid N `CMD`,
 * ...", cut to cap; "" when none), with "(SIGKILL)" after those SIGTERM did not end.
 * Returns how many were found after linger_s (0: none lingered); -1 if some were still
 * there after gone_s (a process in uninterruptible sleep). */
int scv_proc_end(scv_proc_find find, void *ctx, const scv_proc_policy *p, char *named, size_t cap);
/* scv_proc_end on the processes tagged by the launch of child by this process (the launch's
 * processes left after its mpirun exited, wherever they were reparented), lingering at most
 * 0.3 s (what ends with mpirun). */
int scv_proc_end_launch(pid_t child, const scv_proc_policy *p, char *named, size_t cap);
/* scv_proc_end_launch with the default policy, those it ended said on stderr: "scavenger:
 * WHOSE processes pid N `CMD`, ... were left running after EXITED exited; ended". Returns
 * scv_proc_end_launch's value. */
int scv_proc_end_launch_said(pid_t child, const char *whose, const char *exited);

/* `scavenger rank-guard [--report FILE] -- PROGRAM ARGS...`: the exec driver's rank
 * program (docs/TRAINER-CONTRACT.md). Runs PROGRAM as its child, a subreaper
 * (PR_SET_CHILD_SUBREAPER) so that every process PROGRAM starts stays its descendant, even
 * double-forked or in a session of its own; once PROGRAM exits, ends the processes it left
 * (scv_proc_end, the default policy), names each on stderr and in FILE (appended, one line
 * a process: "worker R: pid N `CMD` outlived the trainer; ended"), and exits as PROGRAM did.
 * Its signals are left to the process group (mpirun signals the rank's group, which holds
 * PROGRAM): the guard survives them and waits. Returns the exit status (2: usage). */
int scv_rank_guard_main(int argc, char **argv);
#endif
