/*
 * comm.h - the collective operations the trainer needs, over MPI when the process was
 * started by mpirun (Open MPI sets OMPI_COMM_WORLD_SIZE) and a trivial single-process
 * backend otherwise. comm_mpi.c is the only file in the project that includes <mpi.h>.
 */
#ifndef SCV_COMM_H
#define SCV_COMM_H
#include <stddef.h>
#include "scv.h"

typedef struct scv_comm scv_comm;

/* 1 when this process was launched by mpirun. */
int scv_comm_under_launcher(void);
/* Initialises MPI once per process when under mpirun (finalised at exit). */
int scv_comm_new(scv_comm **out, scv_err *err);
void scv_comm_free(scv_comm *c);
/* This process's rank among the active ranks and their number (rank -1: parked). */
int scv_comm_rank(const scv_comm *c);
int scv_comm_size(const scv_comm *c);
/* ... and among all the processes of the job. */
int scv_comm_all_rank(const scv_comm *c);
int scv_comm_all_size(const scv_comm *c);
/* 1 when this process was spawned into a running job (it starts parked). */
int scv_comm_joined(const scv_comm *c);
/* Elasticity (comm_mpi.c explains the two communicators): scv_comm_command broadcasts
 * `bytes` from all-rank 0 to every process, waiting by polling with sleeps (a parked
 * process waits there for minutes); scv_comm_grow (collective over all processes) spawns
 * n_new processes running exe argv (one on each of hosts[i] when hosts is given) and merges
 * them in, ranked last and parked; scv_comm_activate (called by every process with the same
 * list, collective over the k members only) makes the processes members[0..k) (ranks in
 * all) the active ranks 0..k-1, in that order, and parks the others. */
int scv_comm_command(scv_comm *c, void *buf, size_t bytes, scv_err *err);
int scv_comm_grow(scv_comm *c, const char *exe, char **argv, int n_new, const char *const *hosts, scv_err *err);
int scv_comm_activate(scv_comm *c, const int *members, int k, scv_err *err);
/* Join mode (comm_mpi.c; a job on an emulated cluster): processes join by connecting to the
 * root's port and may leave the job. "All-ranks" above are then slots: slot i is the i-th
 * process the job ever had, kept when others leave. scv_comm_join_mode: 1 in such a job;
 * scv_comm_present: 1 when a process holds slot; scv_comm_join (collective over all
 * processes present): the root starts exe argv on host through $SCV_JOIN_SCRIPT, every
 * process accepts it into slot (a free one, or the next new one: scv_comm_grow uses these,
 * one process at a time in join mode: the process that joined is in the next join's accept,
 * so it must reach it, from its command, first), parked; scv_comm_leave (collective over
 * all present): the processes of the slots marked in gone leave the job (*left = 1 in
 * them: they only finalize and exit after it), the others go on without them (every
 * process is parked after it: activate again). */
int scv_comm_join_mode(const scv_comm *c);
int scv_comm_present(const scv_comm *c, int slot);
int scv_comm_join(scv_comm *c, const char *exe, char **argv, int slot, const char *host, scv_err *err);
int scv_comm_leave(scv_comm *c, const char *gone, int *left, scv_err *err);
/* In-place sums over the active ranks (these and the next two: collective over them). */
int scv_comm_allreduce_f32(scv_comm *c, float *buf, size_t n, scv_err *err);
int scv_comm_allreduce_f64(scv_comm *c, double *buf, size_t n, scv_err *err);
/* Returns the largest rc over all ranks, so every rank takes the same branch after it.
 * When some rank failed, err (if not NULL) receives the message of the lowest failing rank
 * on every rank, so rank 0 can report it. */
int scv_comm_agree(scv_comm *c, int rc, scv_err *err);
int scv_comm_bcast(scv_comm *c, void *buf, size_t bytes, int root, scv_err *err);
/* Every active rank's `bytes` of send, in rank order, into recv (size x bytes on every rank). */
int scv_comm_allgather(scv_comm *c, const void *send, size_t bytes, void *recv, scv_err *err);
/* Ends every rank of the job (used only where ranks cannot agree). */
void scv_comm_abort(scv_comm *c, int code);
#endif
