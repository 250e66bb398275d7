/*
 * rankguard.c - `scavenger rank-guard`, the exec driver's rank program (procs.h): each of a
 * segment's K processes is this guard running the trainer's command as its child. It is a
 * subreaper, so every process the trainer starts stays its descendant; once the trainer's
 * own process exits, the guard ends the processes it left (a logging daemon, `cmd &`, a
 * double-forked child, one in a session of its own ignoring SIGTERM), names them, and exits
 * as the trainer did. Without it such a process outlives the segment and, holding the
 * stdout and stderr Open MPI gave the rank, keeps mpirun waiting for the rank's output to
 * close: the segment never ends (mpirun counts a process as ended once it has exited AND
 * its output pipes are closed).
 */
#define _POSIX_C_SOURCE 200809L
#include "procs.h"
#include "../core/util.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

/* The signals mpirun sends the rank's process group (the stop, the job's end): the guard
 * outlives them (a handler, which exec resets to the default in the trainer), waits for the
 * trainer, which gets its own, and ends what it leaves. */
static const int GUARDED[] = {SIGUSR1, SIGUSR2, SIGTERM, SIGINT, SIGHUP, SIGQUIT, SIGPIPE};
/* SIGTERM, SIGINT or SIGHUP: the job is being ended (mpirun aborts it, or was told to), and
 * SIGKILL to the group follows within about a second: the processes outside the group (a
 * session or group of their own), which mpirun's signals miss, are ended at once. */
static volatile sig_atomic_t g_ending;
static void on_signal(int sig) { g_ending |= sig == SIGTERM || sig == SIGINT || sig == SIGHUP; }

/* Seconds between SIGTERM and SIGKILL for the processes outside the group once the job is
 * being ended (mpirun's SIGKILL to the group comes about a second after its SIGTERM). */
#define ENDING_TERM_S 0.4
/* Once the job is being ended, the guard does not exit before this many seconds have passed:
 * it waits for mpirun's SIGKILL. Open MPI sleeps a second between its SIGTERM and SIGKILL to
 * the ranks, but a rank's exit cuts that sleep short (SIGCHLD): a guard with nothing left to
 * end exited at once, and the SIGKILL took the other ranks' guards before their
 * ENDING_TERM_S, leaving a process outside the group running (tests/test_robust.c
 * guard_ended_together). Longer than mpirun's second, in case the SIGTERM came from
 * elsewhere. */
#define ENDING_HOLD_S 1.5

static int find_descendants(void *ctx, pid_t *out, int cap)
{
    (void)ctx;
    return scv_proc_descendants(getpid(), out, cap);
}

/* The descendants outside this process's group (mpirun's signals to the rank's group miss
 * them) get sig. */
static void signal_outside(int sig)
{
    pid_t d[256];
    int n = scv_proc_descendants(getpid(), d, 256);
    for (int i = 0; i < n; i++)
        if (getpgid(d[i]) != getpgrp()) kill(d[i], sig), kill(d[i], SIGCONT);
}

static void nap_ms(long ms)
{
    struct timespec ts = {ms / 1000, (ms % 1000) * 1000000L};
    nanosleep(&ts, NULL);
}

/* Appends line to path (one write: the K guards of a segment append to one file). */
static void report_line(const char *path, const char *line)
{
    if (!path) return;
    int fd = open(path, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
    if (fd < 0) {
        fprintf(stderr, "scavenger rank-guard: %s: cannot write: %s\n", path, strerror(errno));
        return;
    }
    size_t n = strlen(line);
    if (write(fd, line, n) != (ssize_t)n) fprintf(stderr, "scavenger rank-guard: %s: write failed\n", path);
    close(fd);
}

static int usage(void)
{
    fprintf(stderr, "usage: scavenger rank-guard [--report FILE] -- PROGRAM [ARGS...]\n"
                    "(the exec driver's rank program: runs PROGRAM and ends the processes it leaves)\n");
    return 2;
}

int scv_rank_guard_main(int argc, char **argv)
{
    const char *report = NULL;
    int i = 1;
    for (; i < argc && strcmp(argv[i], "--"); i++) {
        if (!strcmp(argv[i], "--report") && i + 1 < argc) report = argv[++i];
        else return usage();
    }
    if (i + 1 >= argc) return usage();
    char **prog = argv + i + 1;
    if (prctl(PR_SET_CHILD_SUBREAPER, 1) != 0)
        fprintf(stderr, "scavenger rank-guard: PR_SET_CHILD_SUBREAPER: %s (a double-forked child may be missed)\n",
                strerror(errno));
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_signal;
    sigemptyset(&sa.sa_mask);
    for (size_t k = 0; k < sizeof GUARDED / sizeof GUARDED[0]; k++) sigaction(GUARDED[k], &sa, NULL);
    fflush(NULL);
    pid_t me = getpid(), child = fork();
    if (child < 0) {
        fprintf(stderr, "scavenger rank-guard: fork: %s\n", strerror(errno));
        return 1;
    }
    if (child == 0) {
        prctl(PR_SET_PDEATHSIG, SIGKILL); /* the guard killed (mpirun's SIGKILL): the trainer too */
        if (getppid() != me) _exit(128 + SIGKILL);
        execvp(prog[0], prog);
        fprintf(stderr, "scavenger rank-guard: cannot run %s: %s\n", prog[0], strerror(errno));
        _exit(127);
    }
    int st = 0, wst;
    /* when the job was seen being ended: the processes outside the group got SIGTERM (0: not yet) */
    double ending_at = 0;
    for (int killed = 0;;) { /* the trainer; orphans reparented here are reaped as they end */
        pid_t w = waitpid(-1, &wst, g_ending ? WNOHANG : 0);
        if (w == child) {
            st = wst;
            break;
        }
        if (w < 0 && errno != EINTR) {
            st = 1 << 8; /* (cannot happen: the trainer is a child) */
            break;
        }
        if (g_ending && !ending_at) signal_outside(SIGTERM), ending_at = scv_now();
        if (ending_at && !killed && scv_now() - ending_at > ENDING_TERM_S) signal_outside(SIGKILL), killed = 1;
        if (g_ending && w == 0) nap_ms(20);
    }
    scv_proc_policy pol = scv_proc_policy_default();
    pol.hurry = &g_ending, pol.hurry_s = ENDING_TERM_S; /* once mpirun ends the job, its SIGKILL is near */
    char named[3000];
    int left = scv_proc_end(find_descendants, NULL, &pol, named, sizeof named);
    if (left) {
        const char *rank = getenv("OMPI_COMM_WORLD_RANK");
        char line[3300];
        snprintf(line, sizeof line, "worker %s: %s outlived the trainer (pid %ld, %s %d); ended%s\n",
                 rank ? rank : "?", named, (long)child, WIFSIGNALED(st) ? "killed by signal" : "exit",
                 WIFSIGNALED(st) ? WTERMSIG(st) : WEXITSTATUS(st), left < 0 ? ", some still there after SIGKILL" : "");
        fprintf(stderr, "scavenger rank-guard: %s", line);
        report_line(report, line);
    }
    if (g_ending) { /* wait for mpirun's SIGKILL: this exit would bring it to the other ranks */
        if (!ending_at) ending_at = scv_now();
        while (scv_now() - ending_at < ENDING_HOLD_S) nap_ms(20);
    }
    if (WIFSIGNALED(st)) { /* as the trainer ended: the same signal */
        int sig = WTERMSIG(st);
        signal(sig, SIG_DFL);
        sigset_t one;
        sigemptyset(&one);
        sigaddset(&one, sig);
        sigprocmask(SIG_UNBLOCK, &one, NULL);
        raise(sig);
        return 128 + sig;
    }
    return WIFEXITED(st) ? WEXITSTATUS(st) : 1;
}
