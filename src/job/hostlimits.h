/*
 * hostlimits.h - what one run may take from the host it runs on, checked with the job's
 * settings before anything starts (scv_job_setup_init calls scv_host_limits_check: the
 * command line, job files and the service's submissions alike). Two bounds: the run's
 * local ranks x their compute threads, and its local ranks x a rank's memory (the data set
 * every rank holds, the model with its optimiser state, the process itself). The rank count
 * is the space's largest K (a partial search profiles the space's corners, so the largest K
 * starts here); a rank that runs elsewhere does not count: on an emulated cluster's VMs, or
 * on a hostfile's other machines (its slots filled in order, this host's lines counted).
 * The policy is a named struct whose defaults come from the host (its cores and memory),
 * overridden by `host-limits threads=N,memory=SIZE` (`scavenger run --host-limits`, a job
 * file's key; the service's operator sets it with `serve --host-limits`).
 */
#ifndef SCV_JOB_HOSTLIMITS_H
#define SCV_JOB_HOSTLIMITS_H
#include "job/jobsetup.h"

typedef struct scv_host_limits {
    int cores;                  /* this host's CPUs (this process's affinity) */
    double mem_bytes;           /* its memory (physical, or its cgroup's limit when lower) */
    double threads_per_core;    /* 8: rank-threads one run may start per core (ranks oversubscribe) */
    double mem_share;           /* 0.75: the share of mem_bytes one run's ranks may take */
    double rank_overhead_bytes; /* 64 MiB: a rank's process, MPI and libraries (33 MB measured) */
    long max_threads;           /* max_local_threads: local ranks x threads (threads_per_core x cores) */
    double max_mem_bytes;       /* max_local_memory: local ranks x a rank's memory (mem_share x mem_bytes) */
} scv_host_limits;

/* The policy of this host: its cores and memory, the shares above. */
scv_host_limits scv_host_limits_default(void);
/* spec "threads=N,memory=SIZE" (either or both; SIZE in bytes or with K, M, G, T: binary
 * units) over *lim. SCV_EINVAL naming --host-limits and the part at fault. */
int scv_host_limits_parse(const char *spec, scv_host_limits *lim, scv_err *err);

/* What a job would take of this host (scv_host_use_of). */
typedef struct scv_host_use {
    int ranks;                  /* the space's largest K */
    int local_ranks;            /* of them on this host */
    int threads;                /* compute threads per rank */
    int batch;                  /* the space's largest B (its activations, over all ranks) */
    double data_bytes;          /* the data set one rank holds (training and test samples) */
    double shared_bytes;        /* held once on this host however many ranks (the decoded-dataset cache) */
    double model_bytes;         /* parameters, gradients, momentum, the exchange's copy: 16 bytes each */
    double act_bytes;           /* bytes per sample of a batch (activations, their gradients, the input) */
    double rank_bytes;          /* a rank: overhead + data + model */
    double total_bytes;         /* local_ranks x rank_bytes + shared + batch x act_bytes */
    char where[200];            /* where the ranks run, in words */
} scv_host_use;

/* The use of the job js was set up from (names/values: its settings, as scv_job_setup_init
 * got them). SCV_ENOMEM only; a data set whose size cannot be read counts 0. */
int scv_host_use_of(const scv_job_setup *js, char *const *names, char *const *values, int n,
                    const scv_host_limits *lim, scv_host_use *u, scv_err *err);
/* u against lim: SCV_EINVAL naming the setting to change first (--workers or --threads,
 * --workers with --dataset), the numbers and the limit (max_local_threads or
 * max_local_memory, in *limit when not NULL, "" when within). */
int scv_host_limits_eval(const scv_host_limits *lim, const scv_host_use *u, const char *workers, char *limit,
                         size_t lcap, scv_err *err);
/* The check scv_job_setup_init makes: the policy (the host's, over it the setting
 * host-limits), the job's use, the bounds; a refusal is a bad setting (js->bad_setting:
 * `scavenger run` exits 2, the service answers 422 naming the limit). */
int scv_host_limits_check(scv_job_setup *js, char *const *names, char *const *values, int n, scv_err *err);
#endif
