/*
 * comm_mpi.c - collectives over Open MPI (see comm.h). Errors are returned, not fatal:
 * the communicators get MPI_ERRORS_RETURN and failures become SCV_EMPI with MPI's text.
 *
 * Two communicators: `all` holds every process of the job (mpirun's world, grown by
 * MPI_Comm_spawn + MPI_Intercomm_merge, the newcomers ranked last), `act` the active ranks
 * that train (the first K of `all`; MPI_Comm_split). Without elasticity they are the same.
 * A process left out of `act` is parked: it waits for the next command (scv_comm_command)
 * and may be activated again. A parked process of mpirun's own world or spawned by it
 * cannot leave early: Open MPI's MPI_Finalize waits for every process of the job, and one
 * that exits without it aborts the job.
 *
 * Join mode (a job on an emulated cluster, SCV_JOIN_SCRIPT set by the launcher): the root is
 * mpirun's only process, every other process is its own `mpirun -np 1` job on its VM, started
 * by the root through that script and joining by MPI_Comm_connect to the port the root opened
 * (MPI_Open_port; the rendezvous goes through the launcher's ompi-server), accepted by every
 * process of `all` (MPI_Comm_accept over it) and merged in. Such a process can leave the job
 * (scv_comm_leave): `all` is split without it, every intercommunicator of a join it took part
 * in is disconnected on all sides, and it finalizes and exits; its VM's take-down then kills
 * nothing the job depends on. Processes are named by slot (the trainer's "all-rank"): slot i
 * is the i-th process the job ever had (host i of a host list), kept across leaves; a slot
 * left empty is filled again by a join (scv_comm_join). Without join mode slot = rank in all.
 */
#define _POSIX_C_SOURCE 200809L
#include "comm.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <mpi.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define MAX_SLOTS SCV_MAX_WORKERS
#define MAX_HELD 64 /* intercommunicators of joins kept (to disconnect at a leave) */

struct scv_comm {
    int mpi; /* 0 = single-process backend */
    int rank, size;         /* in act (rank -1: parked) */
    int all_rank, all_size; /* in all */
    int joined;             /* spawned into a running job */
    MPI_Comm all, act;
    long poll_sleep_ns; /* > 0: wait for collectives by polling with sleeps */
    /* join mode (see the top): 0 = off, 1 = on (root: SCV_JOIN_SCRIPT; joiners: SCV_JOIN_CONNECT) */
    int join;
    char port[MPI_MAX_PORT_NAME]; /* root: the port joiners connect to */
    int slot;                     /* this process's slot (= all_rank without join mode) */
    int n_slots;                  /* slots ever (= all_size without join mode) */
    int *rank_of;                 /* rank in all of each slot (-1: empty), n_slots of them */
    struct { MPI_Comm inter; char *in; } held[MAX_HELD]; /* in: the slots it connects */
    int n_held;
    int *pid_of;     /* root: the launcher (the joiner's mpirun) of each slot's process (0: none) */
    double check_t;  /* root: when the joiners' launchers were last checked */
};

/* Root of a join-mode job: the log of the launcher of slot's process (its join script and
 * mpirun, their output and the process's own), $SCV_JOIN_SCRIPT-SLOT.log, appended to by each
 * join into that slot. */
static void join_log(int slot, char *buf, size_t cap)
{
    const char *script = getenv("SCV_JOIN_SCRIPT");
    snprintf(buf, cap, "%s-%d.log", script ? script : "scavenger.join", slot);
}

#define JOIN_WHY_BYTES 1200

/* "its log: PATH, last line: ..." for slot's launcher, said when it ended. */
static void join_why(int slot, char *buf, size_t cap)
{
    char path[600], tail[512] = "";
    join_log(slot, path, sizeof path);
    FILE *f = fopen(path, "r");
    if (f) { /* the last line that says something */
        char line[512];
        if (fseek(f, -4096, SEEK_END) != 0) rewind(f);
        while (fgets(line, sizeof line, f)) {
            line[strcspn(line, "\r\n")] = 0;
            if (line[strspn(line, " \t")]) snprintf(tail, sizeof tail, "%s", line);
        }
        fclose(f);
    }
    snprintf(buf, cap, "its log: %s%s%s", path, tail[0] ? ", last line: " : "", tail);
}

/* Root of a join-mode job: a present process whose mpirun ended (a kill without notice, a VM
 * taken without one) would leave the others waiting in a collective for ever (no mpirun
 * ends this job for it): the job is ended at once, as mpirun ends a job that lost a process,
 * and the driver resumes it from the checkpoint. Launchers of processes that left are reaped.
 * Checked at most every 10 ms while waiting. */
static void check_joiners(scv_comm *c)
{
    if (!c->join || c->slot != 0 || !c->pid_of) return;
    struct timespec now;
    clock_gettime(CLOCK_MONOTONIC, &now);
    double t = (double)now.tv_sec + 1e-9 * (double)now.tv_nsec;
    if (t - c->check_t < 0.01) return;
    c->check_t = t;
    for (int s = 1; s < c->n_slots; s++) {
        if (c->pid_of[s] <= 0) continue;
        int st;
        pid_t w = waitpid(c->pid_of[s], &st, WNOHANG);
        if (w == 0) continue;
        c->pid_of[s] = 0;
        if (c->rank_of[s] < 0) continue; /* it left the job: its mpirun ended after it */
        char why[JOIN_WHY_BYTES];
        join_why(s, why, sizeof why);
        fprintf(stderr, "scavenger train: process %d's mpirun ended (%s %d) while it was in the job (a kill "
                        "without notice): the job ends (%s)\n", s, w > 0 && WIFSIGNALED(st) ? "signal" : "status",
                w > 0 && WIFSIGNALED(st) ? WTERMSIG(st) : w > 0 ? WEXITSTATUS(st) : -1, why);
        MPI_Abort(c->all, 1);
        _exit(1);
    }
}

int scv_comm_join_mode(const scv_comm *c) { return c->join; }

/* Waits for a request. Open MPI busy-polls inside blocking calls; under a CPU quota (an
 * emulated VM) that spinning spends the VM's budget and the next computation is throttled,
 * which a real VM's idle cores would not do. With SCV_COMM_POLL_SLEEP_US set (the cluster
 * launcher sets it), a waiting rank tests the request and sleeps between tests instead. */
static void check_joiners(scv_comm *c);
static int wait_req(scv_comm *c, MPI_Request *req)
{
    struct timespec ts = {0, c->poll_sleep_ns};
    for (;;) {
        int done = 0, rc = MPI_Test(req, &done, MPI_STATUS_IGNORE);
        if (rc != MPI_SUCCESS || done) return rc;
        check_joiners(c);
        if (ts.tv_nsec) nanosleep(&ts, NULL);
    }
}

/* Waits by polling (wait_req) when the sleep is set, or in join mode (the root checks its
 * joiners' launchers while it waits). Every process of a job alike: a blocking collective
 * does not match a non-blocking one. */
static int polls(const scv_comm *c) { return c->poll_sleep_ns > 0 || c->join; }

#if defined(__SANITIZE_ADDRESS__)
/* Open MPI's dynamically loaded components keep allocations for the life of the process
 * and are unloaded before LeakSanitizer runs, so their leaks cannot be suppressed by name.
 * Leak checking is turned off in processes that initialised MPI only; every other process
 * of the test suite (single-process runs, unit tests) keeps it. */
static int mpi_used;
int __lsan_is_turned_off(void);
int __lsan_is_turned_off(void) { return mpi_used; }
#define MARK_MPI_USED() (mpi_used = 1)
#else
#define MARK_MPI_USED() ((void)0)
#endif

int scv_comm_under_launcher(void) { return getenv("OMPI_COMM_WORLD_SIZE") != NULL; }

static void finalize(void)
{
    int inited = 0, done = 0;
    MPI_Initialized(&inited);
    MPI_Finalized(&done);
    if (inited && !done) MPI_Finalize();
}

static int mpi_fail(scv_err *err, int code, const char *what)
{
    char msg[MPI_MAX_ERROR_STRING];
    int len = 0;
    MPI_Error_string(code, msg, &len);
    return scv_err_set(err, SCV_EMPI, "%s: %s", what, msg);
}

/* The slot table, from the root (rank 0 of all) to every process of all: the newcomer's slot
 * (or -1), the number of slots and the rank of each. */
static int table_bcast(scv_comm *c, int newcomer, scv_err *err)
{
    int *t = malloc(sizeof(int) * (MAX_SLOTS + 2));
    if (!t) return scv_err_set(err, SCV_ENOMEM, "out of memory");
    t[0] = newcomer, t[1] = c->n_slots;
    memcpy(t + 2, c->rank_of, sizeof(int) * (size_t)c->n_slots);
    int rc = MPI_Bcast(t, MAX_SLOTS + 2, MPI_INT, 0, c->all);
    if (rc == MPI_SUCCESS) {
        c->n_slots = t[1];
        memcpy(c->rank_of, t + 2, sizeof(int) * (size_t)c->n_slots);
        if (c->slot < 0) c->slot = t[0]; /* the newcomer learns its slot */
    }
    free(t);
    return rc == MPI_SUCCESS ? SCV_OK : mpi_fail(err, rc, "MPI_Bcast (the join's slot table)");
}

/* Keeps a join's intercommunicator, to disconnect it when one of the processes it connects
 * (the slots present now) leaves; past MAX_HELD it is freed instead (the leave then relies on
 * the merged communicator's free alone). */
static void hold(scv_comm *c, MPI_Comm *inter)
{
    char *in = c->n_held < MAX_HELD ? calloc(MAX_SLOTS, 1) : NULL;
    if (!in) {
        MPI_Comm_free(inter);
        return;
    }
    for (int s = 0; s < c->n_slots; s++) in[s] = c->rank_of[s] >= 0;
    c->held[c->n_held].inter = *inter, c->held[c->n_held++].in = in;
    *inter = MPI_COMM_NULL;
}

/* A process started by a join-mode root: connects to its port (SCV_JOIN_PORT_FILE), merges
 * (ranked last) and learns its slot. */
static int join_connect(scv_comm *c, scv_err *err)
{
    const char *pf = getenv("SCV_JOIN_PORT_FILE");
    char port[MPI_MAX_PORT_NAME] = "";
    FILE *f = pf ? fopen(pf, "r") : NULL;
    if (!f || !fgets(port, sizeof port, f)) {
        if (f) fclose(f);
        return scv_err_set(err, SCV_EIO, "%s: cannot read the join port", pf ? pf : "SCV_JOIN_PORT_FILE (unset)");
    }
    fclose(f);
    port[strcspn(port, "\n")] = 0;
    MPI_Comm inter = MPI_COMM_NULL;
    int rc = MPI_Comm_connect(port, MPI_INFO_NULL, 0, MPI_COMM_WORLD, &inter);
    if (rc != MPI_SUCCESS) return mpi_fail(err, rc, "MPI_Comm_connect");
    if ((rc = MPI_Intercomm_merge(inter, 1, &c->all)) != MPI_SUCCESS) return mpi_fail(err, rc, "MPI_Intercomm_merge");
    MPI_Comm_set_errhandler(c->all, MPI_ERRORS_RETURN);
    c->slot = -1;
    if ((rc = table_bcast(c, -1, err))) return rc;
    hold(c, &inter);
    return SCV_OK;
}

int scv_comm_new(scv_comm **out, scv_err *err)
{
    *out = NULL;
    scv_comm *c = calloc(1, sizeof *c);
    if (!c) return scv_err_set(err, SCV_ENOMEM, "out of memory");
    c->size = 1;
    if (scv_comm_under_launcher()) {
        int inited = 0;
        MPI_Initialized(&inited);
        if (!inited) {
            int provided, rc = MPI_Init_thread(NULL, NULL, MPI_THREAD_FUNNELED, &provided);
            if (rc != MPI_SUCCESS) {
                free(c);
                return scv_err_set(err, SCV_EMPI, "MPI_Init failed (code %d)", rc);
            }
            atexit(finalize);
            MARK_MPI_USED();
            MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
        }
        c->mpi = 1;
        const char *ps = getenv("SCV_COMM_POLL_SLEEP_US");
        if (ps) c->poll_sleep_ns = 1000L * strtol(ps, NULL, 10);
        MPI_Comm parent = MPI_COMM_NULL;
        MPI_Comm_get_parent(&parent);
        int rc;
        const char *what = "MPI_Comm_dup";
        if (!(c->rank_of = malloc(sizeof(int) * MAX_SLOTS))) {
            free(c);
            return scv_err_set(err, SCV_ENOMEM, "out of memory");
        }
        if (getenv("SCV_JOIN_CONNECT")) { /* started by a join-mode job's root: connect to it */
            c->joined = 1, c->join = 1;
            rc = join_connect(c, err);
            if (rc) {
                free(c->rank_of), free(c);
                return rc;
            }
            rc = MPI_SUCCESS;
        } else if (parent != MPI_COMM_NULL) { /* spawned by a growing job: join it, ranked last */
            c->joined = 1;
            rc = MPI_Intercomm_merge(parent, 1, &c->all), what = "MPI_Intercomm_merge";
        } else {
            rc = MPI_Comm_dup(MPI_COMM_WORLD, &c->all);
        }
        if (rc != MPI_SUCCESS) {
            free(c->rank_of), free(c);
            return mpi_fail(err, rc, what);
        }
        MPI_Comm_set_errhandler(c->all, MPI_ERRORS_RETURN);
        MPI_Comm_rank(c->all, &c->all_rank);
        MPI_Comm_size(c->all, &c->all_size);
        if (!c->join) {
            c->slot = c->all_rank, c->n_slots = c->all_size;
            for (int i = 0; i < c->all_size && i < MAX_SLOTS; i++) c->rank_of[i] = i;
        }
        if (!c->joined && getenv("SCV_JOIN_SCRIPT")) { /* the root of a join-mode job: its port */
            const char *pf = getenv("SCV_JOIN_PORT_FILE");
            FILE *f = NULL;
            c->join = 1;
            if (c->all_size != 1 || !pf) rc = scv_err_set(err, SCV_EINVAL, "join mode: the root must be mpirun's "
                                                             "only process, with SCV_JOIN_PORT_FILE set");
            else if ((rc = MPI_Open_port(MPI_INFO_NULL, c->port)) != MPI_SUCCESS) rc = mpi_fail(err, rc, "MPI_Open_port");
            else if (!(f = fopen(pf, "w")) || fprintf(f, "%s\n", c->port) < 0 || fclose(f) != 0)
                rc = scv_err_set(err, SCV_EIO, "%s: cannot write the join port: %s", pf, strerror(errno));
            if (rc) {
                MPI_Comm_free(&c->all);
                free(c->rank_of), free(c);
                return rc;
            }
        }
        if (c->joined) { /* parked until a command activates it */
            c->act = MPI_COMM_NULL, c->rank = -1, c->size = 0;
        } else if ((rc = MPI_Comm_dup(c->all, &c->act)) != MPI_SUCCESS) {
            free(c);
            return mpi_fail(err, rc, "MPI_Comm_dup");
        } else {
            MPI_Comm_set_errhandler(c->act, MPI_ERRORS_RETURN);
            c->rank = c->all_rank, c->size = c->all_size;
        }
    } else {
        c->all_size = 1;
    }
    *out = c;
    return SCV_OK;
}

void scv_comm_free(scv_comm *c)
{
    if (!c) return;
    if (c->mpi) {
        int done = 0;
        MPI_Finalized(&done);
        if (!done && c->act != MPI_COMM_NULL) MPI_Comm_free(&c->act);
        if (!done && c->all != MPI_COMM_NULL) MPI_Comm_free(&c->all);
        for (int i = 0; !done && i < c->n_held; i++) /* freed, not disconnected: a disconnect (collective)
                                                           would wait for ever for a process that died */
            if (c->held[i].inter != MPI_COMM_NULL) MPI_Comm_free(&c->held[i].inter);
        for (int i = 0; i < c->n_held; i++) free(c->held[i].in);
        if (!done && c->port[0]) MPI_Close_port(c->port);
    }
    free(c->rank_of);
    free(c->pid_of);
    free(c);
}
int scv_comm_rank(const scv_comm *c) { return c->rank; }
int scv_comm_size(const scv_comm *c) { return c->size; }
int scv_comm_all_rank(const scv_comm *c) { return c->mpi ? c->slot : c->all_rank; }
int scv_comm_all_size(const scv_comm *c) { return c->mpi ? c->n_slots : c->all_size; }
int scv_comm_present(const scv_comm *c, int slot)
{
    return !c->mpi ? slot == 0 : slot >= 0 && slot < c->n_slots && c->rank_of[slot] >= 0;
}
int scv_comm_joined(const scv_comm *c) { return c->joined; }

/* The sleep between tests while a process waits for a command: an active rank between two
 * segments (1 ms: the latency of a configuration change), a parked process (10 ms: it may
 * wait for the whole run, and each test runs MPI's progress engine; 1 ms cost 2% of a core
 * per parked process on the emulated cluster). */
#define COMMAND_POLL_NS 1000000L
#define PARKED_POLL_NS 10000000L

int scv_comm_command(scv_comm *c, void *buf, size_t bytes, scv_err *err)
{
    if (!c->mpi) return SCV_OK;
    if (bytes > INT_MAX) return scv_err_set(err, SCV_ERANGE, "command of %zu bytes", bytes);
    MPI_Request req;
    int rc = MPI_Ibcast(buf, (int)bytes, MPI_BYTE, 0, c->all, &req);
    if (rc == MPI_SUCCESS) {
        long ns = c->act == MPI_COMM_NULL ? PARKED_POLL_NS : COMMAND_POLL_NS;
        struct timespec ts = {0, c->poll_sleep_ns > ns ? c->poll_sleep_ns : ns};
        for (;;) {
            int done = 0;
            rc = MPI_Test(&req, &done, MPI_STATUS_IGNORE);
            if (rc != MPI_SUCCESS || done) break;
            check_joiners(c);
            nanosleep(&ts, NULL);
        }
    }
    return rc == MPI_SUCCESS ? SCV_OK : mpi_fail(err, rc, "MPI_Ibcast (command)");
}

/* Root: starts the process for slot on host (NULL or "": this machine) through the join script:
 * `SCRIPT HOST EXE ARGS...` (its own mpirun -np 1, connecting to the port). */
static int start_joiner(const char *exe, char **argv, int slot, const char *host, pid_t *out, scv_err *err)
{
    const char *script = getenv("SCV_JOIN_SCRIPT");
    char log[600];
    join_log(slot, log, sizeof log);
    int lfd = open(log, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
    if (lfd < 0) return scv_err_set(err, SCV_EIO, "%s: cannot open process %d's join log: %s", log, slot, strerror(errno));
    char head[300];
    time_t now = time(NULL);
    struct tm tm;
    gmtime_r(&now, &tm);
    int hl = snprintf(head, sizeof head, "--- %04d-%02d-%02dT%02d:%02d:%02dZ process %d joins from %s\n", tm.tm_year + 1900,
                      tm.tm_mon + 1, tm.tm_mday, tm.tm_hour, tm.tm_min, tm.tm_sec, slot, host && host[0] ? host : "this machine");
    if (hl > 0 && write(lfd, head, (size_t)hl) != hl) {
        int e = errno;
        close(lfd);
        return scv_err_set(err, SCV_EIO, "%s: cannot write process %d's join log: %s", log, slot, strerror(e));
    }
    int n = 0;
    while (argv && argv[n]) n++;
    char **v = calloc((size_t)n + 5, sizeof *v);
    if (!v) {
        close(lfd);
        return scv_err_set(err, SCV_ENOMEM, "out of memory");
    }
    v[0] = "/bin/sh", v[1] = (char *)script, v[2] = (char *)(host && host[0] ? host : "-"), v[3] = (char *)exe;
    for (int i = 0; i < n; i++) v[4 + i] = argv[i];
    fflush(NULL);
    pid_t parent = getpid(), pid = fork();
    if (pid == 0) { /* without this rank's Open MPI environment: the joiner's mpirun is a job of its own */
        prctl(PR_SET_PDEATHSIG, SIGTERM); /* it ends with the root (mpirun ends its process) */
        if (getppid() != parent) _exit(128 + SIGTERM);
        /* the trainer blocks its stop signals (SIGTERM among them) in every thread; the mask
         * survives fork and exec, and mpirun leaves it: blocked, the SIGTERM above stayed
         * pending for ever and the joiner's mpirun outlived the job */
        sigset_t none;
        sigemptyset(&none);
        sigprocmask(SIG_SETMASK, &none, NULL);
        if (lfd == 1 || lfd == 2) fcntl(lfd, F_SETFD, 0); /* (it is the stream itself: kept across exec) */
        if (lfd != 1) dup2(lfd, 1); /* its output, and its process's, in its own log (named when it ends) */
        if (lfd != 2) dup2(lfd, 2);
        extern char **environ;
        for (int again = 1; again;) {
            again = 0;
            for (char **e = environ; *e && !again; e++) {
                char name[256];
                size_t len = strcspn(*e, "=");
                if (len >= sizeof name) continue;
                memcpy(name, *e, len), name[len] = 0;
                if ((!strncmp(name, "OMPI_", 5) || !strncmp(name, "PMIX_", 5) || !strncmp(name, "OPAL_", 5) ||
                     !strncmp(name, "ORTE_", 5)) && strncmp(name, "OMPI_ALLOW_RUN_AS_ROOT", 22))
                    unsetenv(name), again = 1;
            }
        }
        execv("/bin/sh", v);
        _exit(127);
    }
    free(v);
    close(lfd);
    *out = pid;
    return pid < 0 ? scv_err_set(err, SCV_EIO, "join: fork: %s", strerror(errno)) : SCV_OK;
}

/* Root: while every process waits in the accept (MPI_Comm_accept cannot be left), a launcher
 * that ends would leave the job waiting for ever: the joiner's (its VM refused it, its mpirun
 * failed) before it connected, or the mpirun of a process already in the job, which takes part
 * in the accept (check_joiners does not run meanwhile). A watcher thread ends this process then
 * (the job ends with it, and the driver resumes it from the checkpoint), naming the launcher's
 * log. waitid with WNOWAIT: the launchers are left for check_joiners to reap. The slot tables
 * do not change while the accept runs. */
typedef struct {
    const scv_comm *c;
    pid_t pid; /* the joiner's launcher */
    int slot;  /* the slot it joins */
    _Atomic int done; /* set once the accept returned */
} join_watch;

/* 1 when launcher pid has ended (left unreaped), with how in *si. */
static int launcher_ended(pid_t pid, siginfo_t *si)
{
    memset(si, 0, sizeof *si);
    return pid > 0 && waitid(P_PID, (id_t)pid, si, WEXITED | WNOHANG | WNOWAIT) == 0 && si->si_pid == pid;
}

static void *watch_joiner(void *arg)
{
    join_watch *w = arg;
    const scv_comm *c = w->c;
    struct timespec ts = {0, 10000000L};
    while (!w->done) {
        siginfo_t si;
        int s = -1; /* the slot whose launcher ended */
        if (launcher_ended(w->pid, &si)) s = w->slot;
        for (int i = 1; s < 0 && c->pid_of && i < c->n_slots; i++)
            if (i != w->slot && c->rank_of[i] >= 0 && launcher_ended(c->pid_of[i], &si)) s = i;
        if (s >= 0 && !w->done) {
            char why[JOIN_WHY_BYTES];
            join_why(s, why, sizeof why);
            if (s == w->slot)
                fprintf(stderr, "scavenger train: process %d's launcher ended (%s %d) before it joined: the job ends (%s)\n",
                        s, si.si_code == CLD_EXITED ? "status" : "signal", si.si_status, why);
            else
                fprintf(stderr, "scavenger train: process %d's mpirun ended (%s %d) while the job waited for process %d "
                                "to join: the job ends (%s)\n",
                        s, si.si_code == CLD_EXITED ? "status" : "signal", si.si_status, w->slot, why);
            _exit(1);
        }
        nanosleep(&ts, NULL);
    }
    return NULL;
}

int scv_comm_join(scv_comm *c, const char *exe, char **argv, int slot, const char *host, scv_err *err)
{
    if (!c->join) return scv_err_set(err, SCV_EINVAL, "joining needs a job in join mode");
    if (slot < 0 || slot > c->n_slots || slot >= MAX_SLOTS || (slot < c->n_slots && c->rank_of[slot] >= 0))
        return scv_err_set(err, SCV_EINVAL, "join: slot %d is not free", slot);
    pid_t pid = 0;
    if (c->slot == 0 && !c->pid_of && !(c->pid_of = calloc(MAX_SLOTS, sizeof(int))))
        return scv_err_set(err, SCV_ENOMEM, "out of memory");
    int rc = c->slot == 0 ? start_joiner(exe, argv, slot, host, &pid, err) : SCV_OK;
    /* the root's failure to start one leaves the others in the accept: the job ends (the driver retries) */
    if (rc) return rc;
    MPI_Comm inter = MPI_COMM_NULL, merged = MPI_COMM_NULL;
    join_watch w = {.c = c, .pid = pid, .slot = slot};
    pthread_t th;
    int watching = c->slot == 0 && pthread_create(&th, NULL, watch_joiner, &w) == 0;
    int mrc = MPI_Comm_accept(c->port, MPI_INFO_NULL, 0, c->all, &inter);
    if (watching) {
        w.done = 1;
        pthread_join(th, NULL);
    }
    if (mrc == MPI_SUCCESS) mrc = MPI_Intercomm_merge(inter, 0, &merged);
    if (mrc != MPI_SUCCESS) return mpi_fail(err, mrc, "MPI_Comm_accept (a join)");
    MPI_Comm_set_errhandler(merged, MPI_ERRORS_RETURN);
    MPI_Comm_free(&c->all);
    c->all = merged;
    MPI_Comm_rank(c->all, &c->all_rank);
    MPI_Comm_size(c->all, &c->all_size);
    if (slot == c->n_slots) c->n_slots++;
    c->rank_of[slot] = c->all_size - 1; /* ranked last */
    if (c->pid_of) {
        if (c->pid_of[slot] > 0) waitpid(c->pid_of[slot], NULL, 0); /* the one that left from this slot: ended */
        c->pid_of[slot] = (int)pid;
    }
    if ((rc = table_bcast(c, slot, err))) return rc;
    hold(c, &inter);
    return SCV_OK;
}

int scv_comm_leave(scv_comm *c, const char *gone, int *left, scv_err *err)
{
    *left = 0;
    if (!c->join) return scv_err_set(err, SCV_EINVAL, "leaving needs a job in join mode");
    const int leaving = gone[c->slot] != 0;
    MPI_Comm nw = MPI_COMM_NULL;
    int rc = MPI_Comm_split(c->all, leaving ? MPI_UNDEFINED : 0, c->all_rank, &nw);
    if (rc != MPI_SUCCESS) return mpi_fail(err, rc, "MPI_Comm_split (a leave)");
    if (c->act != MPI_COMM_NULL) MPI_Comm_free(&c->act);
    c->rank = -1, c->size = 0;
    MPI_Comm_free(&c->all);
    int k = 0;
    for (int i = 0; i < c->n_held; i++) { /* every process in the same order: the joins' */
        int hit = 0;
        for (int s = 0; s < c->n_slots && !hit; s++) hit = c->held[i].in[s] && gone[s] && c->rank_of[s] >= 0;
        if (hit) {
            if ((rc = MPI_Comm_disconnect(&c->held[i].inter)) != MPI_SUCCESS)
                return mpi_fail(err, rc, "MPI_Comm_disconnect (a leave)");
            free(c->held[i].in);
        } else {
            c->held[k++] = c->held[i];
        }
    }
    c->n_held = k;
    /* the ranks in the new all: the processes that stay, in their old order */
    int by_rank[MAX_SLOTS];
    for (int r = 0; r < c->all_size; r++) by_rank[r] = -1;
    for (int s = 0; s < c->n_slots; s++)
        if (c->rank_of[s] >= 0) by_rank[c->rank_of[s]] = s;
    int r2 = 0;
    for (int r = 0; r < c->all_size; r++) {
        int s = by_rank[r];
        if (s < 0) continue;
        c->rank_of[s] = gone[s] ? -1 : r2++;
    }
    if (leaving) {
        c->all = MPI_COMM_NULL;
        *left = 1;
        return SCV_OK;
    }
    c->all = nw;
    MPI_Comm_set_errhandler(c->all, MPI_ERRORS_RETURN);
    MPI_Comm_rank(c->all, &c->all_rank);
    MPI_Comm_size(c->all, &c->all_size);
    return SCV_OK;
}

int scv_comm_grow(scv_comm *c, const char *exe, char **argv, int n_new, const char *const *hosts, scv_err *err)
{
    if (!c->mpi) return scv_err_set(err, SCV_EINVAL, "growing needs a job started by mpirun");
    if (n_new < 1) return SCV_OK;
    if (c->join) { /* one process: the next join's accept needs it, and it waits for the caller's command */
        if (n_new > 1)
            return scv_err_set(err, SCV_EINVAL, "join mode grows by one process at a time (%d asked): the one that "
                                                "joined takes part in the next join", n_new);
        return scv_comm_join(c, exe, argv, c->n_slots, hosts ? hosts[0] : NULL, err);
    }
    int *codes = malloc(sizeof(int) * (size_t)n_new);
    char **cmds = malloc(sizeof(char *) * (size_t)n_new);
    char ***argvs = malloc(sizeof(char **) * (size_t)n_new);
    int *maxprocs = malloc(sizeof(int) * (size_t)n_new);
    MPI_Info *infos = malloc(sizeof(MPI_Info) * (size_t)n_new);
    if (!codes || !cmds || !argvs || !maxprocs || !infos) {
        free(codes), free(cmds), free(argvs), free(maxprocs), free(infos);
        return scv_err_set(err, SCV_ENOMEM, "out of memory");
    }
    for (int i = 0; i < n_new; i++) { /* one process per host (MPI_Comm_spawn_multiple) */
        cmds[i] = (char *)exe, argvs[i] = argv, maxprocs[i] = 1;
        MPI_Info_create(&infos[i]);
        if (hosts && hosts[i]) /* a host left out of the job's hostfile (a VM preempted at its start,
                                  restored since) gets a daemon: Open MPI's "add-host" */
            MPI_Info_set(infos[i], "host", hosts[i]), MPI_Info_set(infos[i], "add-host", hosts[i]);
    }
    MPI_Comm inter = MPI_COMM_NULL, merged = MPI_COMM_NULL;
    int rc = MPI_Comm_spawn_multiple(n_new, cmds, argvs, maxprocs, infos, 0, c->all, &inter, codes);
    for (int i = 0; i < n_new; i++) MPI_Info_free(&infos[i]);
    if (rc == MPI_SUCCESS) rc = MPI_Intercomm_merge(inter, 0, &merged);
    if (inter != MPI_COMM_NULL) MPI_Comm_free(&inter);
    free(codes), free(cmds), free(argvs), free(maxprocs), free(infos);
    if (rc != MPI_SUCCESS) return mpi_fail(err, rc, "MPI_Comm_spawn");
    MPI_Comm_set_errhandler(merged, MPI_ERRORS_RETURN);
    MPI_Comm_free(&c->all);
    c->all = merged;
    MPI_Comm_rank(c->all, &c->all_rank);
    MPI_Comm_size(c->all, &c->all_size);
    for (int i = c->n_slots; i < c->all_size && i < MAX_SLOTS; i++) c->rank_of[i] = i;
    c->n_slots = c->all_size, c->slot = c->all_rank;
    return SCV_OK;
}

int scv_comm_activate(scv_comm *c, const int *members, int k, scv_err *err)
{
    if (!c->mpi) return k == 1 ? SCV_OK : scv_err_set(err, SCV_EINVAL, "%d workers need a job started by mpirun", k);
    if (k < 1 || k > c->all_size)
        return scv_err_set(err, SCV_EINVAL, "%d workers: the job has %d processes", k, c->all_size);
    int mine = -1, ranks[MAX_SLOTS];
    for (int i = 0; i < k; i++) { /* members are slots: their ranks in all */
        if (members[i] < 0 || members[i] >= c->n_slots || c->rank_of[members[i]] < 0)
            return scv_err_set(err, SCV_EINVAL, "process %d: the job has no such process", members[i]);
        ranks[i] = c->rank_of[members[i]];
        if (members[i] == c->slot) mine = i;
    }
    /* only the members take part (MPI_Comm_create_group, not a split over every process):
     * the parked ones stay out of it */
    MPI_Comm act = MPI_COMM_NULL;
    int rc = MPI_SUCCESS;
    if (mine >= 0) {
        MPI_Group g, sub;
        rc = MPI_Comm_group(c->all, &g);
        if (rc == MPI_SUCCESS) rc = MPI_Group_incl(g, k, ranks, &sub);
        if (rc == MPI_SUCCESS) rc = MPI_Comm_create_group(c->all, sub, 0, &act), MPI_Group_free(&sub);
        MPI_Group_free(&g);
        if (rc != MPI_SUCCESS) return mpi_fail(err, rc, "MPI_Comm_create_group");
    }
    if (c->act != MPI_COMM_NULL) MPI_Comm_free(&c->act);
    c->act = act;
    if (act != MPI_COMM_NULL) {
        MPI_Comm_set_errhandler(act, MPI_ERRORS_RETURN);
        MPI_Comm_rank(act, &c->rank);
        MPI_Comm_size(act, &c->size);
    } else {
        c->rank = -1, c->size = 0;
    }
    return SCV_OK;
}

/* In-place sum of n elements of type t over all ranks. */
static int allreduce(scv_comm *c, void *buf, size_t n, MPI_Datatype t, scv_err *err)
{
    if (!c->mpi) return SCV_OK;
    if (n > INT_MAX) return scv_err_set(err, SCV_ERANGE, "allreduce of %zu elements", n);
    int rc;
    if (polls(c)) {
        MPI_Request req;
        rc = MPI_Iallreduce(MPI_IN_PLACE, buf, (int)n, t, MPI_SUM, c->act, &req);
        if (rc == MPI_SUCCESS) rc = wait_req(c, &req);
    } else {
        rc = MPI_Allreduce(MPI_IN_PLACE, buf, (int)n, t, MPI_SUM, c->act);
    }
    return rc == MPI_SUCCESS ? SCV_OK : mpi_fail(err, rc, "MPI_Allreduce");
}

int scv_comm_allreduce_f32(scv_comm *c, float *buf, size_t n, scv_err *err)
{
    return allreduce(c, buf, n, MPI_FLOAT, err);
}

int scv_comm_allreduce_f64(scv_comm *c, double *buf, size_t n, scv_err *err)
{
    return allreduce(c, buf, n, MPI_DOUBLE, err);
}

int scv_comm_agree(scv_comm *c, int rc, scv_err *err)
{
    if (!c->mpi || c->act == MPI_COMM_NULL) return rc; /* alone, or parked: nobody to agree with */
    int v[2] = {rc, rc ? -c->rank : -c->size}, all[2], mrc;
    if (polls(c)) { /* waiting without spinning, as allreduce() does */
        MPI_Request req;
        mrc = MPI_Iallreduce(v, all, 2, MPI_INT, MPI_MAX, c->act, &req);
        if (mrc == MPI_SUCCESS) mrc = wait_req(c, &req);
    } else {
        mrc = MPI_Allreduce(v, all, 2, MPI_INT, MPI_MAX, c->act);
    }
    if (mrc != MPI_SUCCESS) return scv_err_set(err, SCV_EMPI, "MPI_Allreduce failed while agreeing on a status");
    if (all[0] != SCV_OK && err) {
        int src = -all[1];
        MPI_Bcast(err->msg, (int)sizeof err->msg, MPI_CHAR, src, c->act);
        err->code = all[0];
    }
    return all[0];
}

int scv_comm_bcast(scv_comm *c, void *buf, size_t bytes, int root, scv_err *err)
{
    if (!c->mpi) return SCV_OK;
    char *p = buf;
    while (bytes > 0) { /* MPI counts are int: send in chunks */
        int chunk = bytes > (size_t)1 << 30 ? 1 << 30 : (int)bytes;
        int rc = MPI_Bcast(p, chunk, MPI_BYTE, root, c->act);
        if (rc != MPI_SUCCESS) return mpi_fail(err, rc, "MPI_Bcast");
        p += chunk;
        bytes -= (size_t)chunk;
    }
    return SCV_OK;
}

int scv_comm_allgather(scv_comm *c, const void *send, size_t bytes, void *recv, scv_err *err)
{
    if (!c->mpi || c->act == MPI_COMM_NULL) {
        memcpy(recv, send, bytes);
        return SCV_OK;
    }
    if (bytes > INT_MAX) return scv_err_set(err, SCV_ERANGE, "allgather of %zu bytes per rank", bytes);
    int rc;
    if (polls(c)) { /* waiting without spinning, as allreduce() does */
        MPI_Request req;
        rc = MPI_Iallgather(send, (int)bytes, MPI_BYTE, recv, (int)bytes, MPI_BYTE, c->act, &req);
        if (rc == MPI_SUCCESS) rc = wait_req(c, &req);
    } else {
        rc = MPI_Allgather(send, (int)bytes, MPI_BYTE, recv, (int)bytes, MPI_BYTE, c->act);
    }
    return rc == MPI_SUCCESS ? SCV_OK : mpi_fail(err, rc, "MPI_Allgather");
}

void scv_comm_abort(scv_comm *c, int code)
{
    if (c && c->mpi) MPI_Abort(c->all != MPI_COMM_NULL ? c->all : MPI_COMM_WORLD, code);
    exit(code);
}
