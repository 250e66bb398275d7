/*
 * comm_mpi.c - collectives over Open MPI (see comm.h). Errors are returned, not fatal:
 * the communicators get MPI_ERRORS_RETURN and failures become SCV_EMPI with MPI's text.
 *
 * Two communicators: `all` holds every process of the job (mpirun's world, grown by
 * MPI_Comm_spawn + MPI_Intercomm_merge, the newcomers ranked last), `act` the active ranks
 * that train (the first K of `all`; MPI_Comm_split). Without elasticity they are the same.
 * A process left out of `act` is parked: it waits for the next command (scv_comm_command)
 * and may be activated again. A parked process cannot leave early: Open MPI's MPI_Finalize
 * waits for every process of the job, and one that exits without it aborts the job.
 */
#define _POSIX_C_SOURCE 200809L
#include "comm.h"

#include <limits.h>
#include <mpi.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

struct scv_comm {
    int mpi; /* 0 = single-process backend */
    int rank, size;         /* in act (rank -1: parked) */
    int all_rank, all_size; /* in all */
    int joined;             /* spawned into a running job */
    MPI_Comm all, act;
    long poll_sleep_ns; /* > 0: wait for collectives by polling with sleeps */
};

/* Waits for a request. Open MPI busy-polls inside blocking calls; under a CPU quota (an
 * emulated VM) that spinning spends the VM's budget and the next computation is throttled,
 * which a real VM's idle cores would not do. With SCV_COMM_POLL_SLEEP_US set (the cluster
 * launcher sets it), a waiting rank tests the request and sleeps between tests instead. */
static int wait_req(const scv_comm *c, MPI_Request *req)
{
    struct timespec ts = {0, c->poll_sleep_ns};
    for (;;) {
        int done = 0, rc = MPI_Test(req, &done, MPI_STATUS_IGNORE);
        if (rc != MPI_SUCCESS || done) return rc;
        nanosleep(&ts, NULL);
    }
}

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
        if (parent != MPI_COMM_NULL) { /* spawned by a growing job: join it, ranked last */
            c->joined = 1;
            rc = MPI_Intercomm_merge(parent, 1, &c->all);
        } else {
            rc = MPI_Comm_dup(MPI_COMM_WORLD, &c->all);
        }
        if (rc != MPI_SUCCESS) {
            free(c);
            return mpi_fail(err, rc, parent != MPI_COMM_NULL ? "MPI_Intercomm_merge" : "MPI_Comm_dup");
        }
        MPI_Comm_set_errhandler(c->all, MPI_ERRORS_RETURN);
        MPI_Comm_rank(c->all, &c->all_rank);
        MPI_Comm_size(c->all, &c->all_size);
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
    }
    free(c);
}
int scv_comm_rank(const scv_comm *c) { return c->rank; }
int scv_comm_size(const scv_comm *c) { return c->size; }
int scv_comm_all_rank(const scv_comm *c) { return c->all_rank; }
int scv_comm_all_size(const scv_comm *c) { return c->all_size; }
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
            nanosleep(&ts, NULL);
        }
    }
    return rc == MPI_SUCCESS ? SCV_OK : mpi_fail(err, rc, "MPI_Ibcast (command)");
}

int scv_comm_grow(scv_comm *c, const char *exe, char **argv, int n_new, const char *const *hosts, scv_err *err)
{
    if (!c->mpi) return scv_err_set(err, SCV_EINVAL, "growing needs a job started by mpirun");
    if (n_new < 1) return SCV_OK;
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
    return SCV_OK;
}

int scv_comm_activate(scv_comm *c, const int *members, int k, scv_err *err)
{
    if (!c->mpi) return k == 1 ? SCV_OK : scv_err_set(err, SCV_EINVAL, "%d workers need a job started by mpirun", k);
    if (k < 1 || k > c->all_size)
        return scv_err_set(err, SCV_EINVAL, "%d workers: the job has %d processes", k, c->all_size);
    int mine = -1;
    for (int i = 0; i < k; i++) {
        if (members[i] < 0 || members[i] >= c->all_size)
            return scv_err_set(err, SCV_EINVAL, "process %d: the job has %d", members[i], c->all_size);
        if (members[i] == c->all_rank) mine = i;
    }
    /* only the members take part (MPI_Comm_create_group, not a split over every process):
     * the parked ones stay out of it */
    MPI_Comm act = MPI_COMM_NULL;
    int rc = MPI_SUCCESS;
    if (mine >= 0) {
        MPI_Group g, sub;
        rc = MPI_Comm_group(c->all, &g);
        if (rc == MPI_SUCCESS) rc = MPI_Group_incl(g, k, members, &sub);
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
    if (c->poll_sleep_ns > 0) {
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
    if (c->poll_sleep_ns > 0) { /* waiting without spinning, as allreduce() does */
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
    if (c->poll_sleep_ns > 0) { /* waiting without spinning, as allreduce() does */
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
