/*
 * comm_mpi.c - collectives over Open MPI (see comm.h). Errors are returned, not fatal:
 * MPI_COMM_WORLD gets MPI_ERRORS_RETURN and failures become SCV_EMPI with MPI's text.
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
    int rank, size;
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
        MPI_Comm_rank(MPI_COMM_WORLD, &c->rank);
        MPI_Comm_size(MPI_COMM_WORLD, &c->size);
    }
    *out = c;
    return SCV_OK;
}

void scv_comm_free(scv_comm *c) { free(c); }
int scv_comm_rank(const scv_comm *c) { return c->rank; }
int scv_comm_size(const scv_comm *c) { return c->size; }

/* In-place sum of n elements of type t over all ranks. */
static int allreduce(scv_comm *c, void *buf, size_t n, MPI_Datatype t, scv_err *err)
{
    if (!c->mpi) return SCV_OK;
    if (n > INT_MAX) return scv_err_set(err, SCV_ERANGE, "allreduce of %zu elements", n);
    int rc;
    if (c->poll_sleep_ns > 0) {
        MPI_Request req;
        rc = MPI_Iallreduce(MPI_IN_PLACE, buf, (int)n, t, MPI_SUM, MPI_COMM_WORLD, &req);
        if (rc == MPI_SUCCESS) rc = wait_req(c, &req);
    } else {
        rc = MPI_Allreduce(MPI_IN_PLACE, buf, (int)n, t, MPI_SUM, MPI_COMM_WORLD);
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
    if (!c->mpi) return rc;
    int v[2] = {rc, rc ? -c->rank : -c->size}, all[2];
    if (MPI_Allreduce(v, all, 2, MPI_INT, MPI_MAX, MPI_COMM_WORLD) != MPI_SUCCESS)
        return scv_err_set(err, SCV_EMPI, "MPI_Allreduce failed while agreeing on a status");
    if (all[0] != SCV_OK && err) {
        int src = -all[1];
        MPI_Bcast(err->msg, (int)sizeof err->msg, MPI_CHAR, src, MPI_COMM_WORLD);
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
        int rc = MPI_Bcast(p, chunk, MPI_BYTE, root, MPI_COMM_WORLD);
        if (rc != MPI_SUCCESS) return mpi_fail(err, rc, "MPI_Bcast");
        p += chunk;
        bytes -= (size_t)chunk;
    }
    return SCV_OK;
}

void scv_comm_abort(scv_comm *c, int code)
{
    if (c && c->mpi) MPI_Abort(MPI_COMM_WORLD, code);
    exit(code);
}
