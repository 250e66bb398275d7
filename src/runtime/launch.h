/*
 * launch.h - starting a job's ranks through Open MPI's mpirun from a plain process, on this
 * machine (local provider) or across an emulated cluster.
 */
#ifndef SCV_LAUNCH_H
#define SCV_LAUNCH_H
#include "scv.h"

#include <sys/types.h>

/* How long scv_launch_mpirun waits for a job it was told to stop (SIGINT or SIGTERM), so
 * that its caller's exit is bounded and leaves no process of the job, under load too. */
typedef struct scv_launch_policy {
    double stop_grace_s; /* 60: after the stop passed on (SIGUSR1: the ranks checkpoint at
                            their next iteration and exit), before SIGTERM to mpirun */
    double term_grace_s; /* 5: after SIGTERM to mpirun (it ends the ranks), before SIGKILL
                            to every process of the job */
} scv_launch_policy;
scv_launch_policy scv_launch_policy_default(void);

typedef struct scv_launch {
    int workers;          /* -np */
    int threads;          /* OMP threads per rank */
    const char *program;  /* the rank program (NULL: this executable) */
    char *const *argv;    /* the rank's command line after the program name */
    int argc;
    const char *const *env; /* "NAME=VALUE" for every rank (mpirun -x), NULL-terminated; may be NULL */
    const char *cluster;  /* emulated cluster name, or NULL for local processes */
    const char *hostfile; /* an Open MPI hostfile of real machines (ssh, or SCV_RSH_AGENT), NULL:
                             none; not with cluster */
    const char *log;      /* mpirun's and the ranks' stdout and stderr appended here (NULL:
                             inherited) */
    int own_group;        /* mpirun in a process group of its own: a terminal's Ctrl-C reaches
                             the caller only, which stops the job its own way */
    int elastic;          /* an elastic job: on a cluster the hostfile lists every VM (spawned
                             processes go to the ones after the first K) and the ranks get
                             SCV_ELASTIC_HOSTS (the VMs' addresses, in order) */
    const char *place_type; /* on a cluster: the VMs of this catalog type come first, in their
                             order, then the others (NULL, or a type the cluster does not
                             hold: VMs 1..n); rank 0 and mpirun run on the first */
    const scv_launch_policy *policy; /* scv_launch_mpirun's stop (NULL: the default) */
} scv_launch;

/* Runs `mpirun ... <this executable> argv...` and waits. SIGINT or SIGTERM to the caller
 * while it waits stops the job (SIGUSR1 to mpirun, passed on to every rank); a job not
 * gone after policy->stop_grace_s (or at a second signal) gets SIGTERM, and term_grace_s
 * later every process of it SIGKILL. Once mpirun has exited, what is left of the job (a
 * rank mpirun abandoned: in a process group of its own) is ended (procs.h: by the launch's
 * tag) and named on stderr, and waited for: when this returns, nothing of the job runs. Sets what Open MPI needs as root,
 * disables binding; locally it oversubscribes, on a cluster it places one rank per VM
 * through the cluster's rsh agent, over TCP only, with the ring allreduce (the VMs in
 * place_type's order, those up first: a preempted VM is left out; fewer VMs up than K is
 * SCV_EMPI naming the preempted ones, except for an elastic job, started on those up).
 * Returns SCV_OK when mpirun ran to its end, with its exit status in *exit_status (0 when
 * every rank succeeded, else the first failing rank's; 128 + N when signal N ended it).
 * Returns an SCV_E* code with err set when the job could not be started: the cluster's
 * own code (no such cluster, ...), SCV_EINVAL for more workers than the cluster has VMs,
 * SCV_EIO naming the hostfile or agent script that could not be written or for fork,
 * SCV_ENOTFOUND when mpirun is not installed, the cluster's code when the launcher could
 * not enter VM 1. *exit_status is then left unchanged. */
int scv_launch_mpirun(const scv_launch *l, int *exit_status, scv_err *err);
/* The same start without the wait: returns once mpirun runs (its pid in *pid), or the same
 * errors. The caller waits for it (waitpid) and passes signals on: Open MPI's mpirun
 * forwards SIGUSR1 and SIGUSR2 to every rank; SIGTERM and SIGINT end the job. */
int scv_launch_start(const scv_launch *l, pid_t *pid, scv_err *err);
/* The address rank 0 of such a launch runs at: 127.0.0.1 locally, the first VM's (in
 * place_type's order) on a cluster, the hostfile's first host. */
int scv_launch_rank0_addr(const scv_launch *l, char *buf, size_t cap, scv_err *err);
/* torchrun's rendezvous variables for a launch whose rank 0 is at addr, port (the same for
 * every process: an `env://` script's): MASTER_ADDR, MASTER_PORT and, on a cluster,
 * GLOO_SOCKET_IFNAME (a VM's one interface; the framework's, not the contract's). Appended
 * to v (room for SCV_LAUNCH_RDV_VARS more), their text in r; returns how many. */
#define SCV_LAUNCH_RDV_VARS 3
typedef struct scv_launch_rdv {
    char addr[300], port[32];
} scv_launch_rdv;
int scv_launch_rendezvous_env(const scv_launch *l, const char *addr, int port, scv_launch_rdv *r, const char **v);

/* 1 when a line of a job's output is Open MPI's (or PMIx's) word that the launch failed or
 * broke (ORTE_ERROR_LOG, "mpirun was unable to ...", a crash's "*** Process received
 * signal ***", ...): mpirun may hang after one (a descriptor limit: it printed two
 * ORTE_ERROR_LOG lines, crashed in its abort and waited forever); 0 otherwise. */
int scv_launch_error_line(const char *line);

/* What a hostfile may hold (src/runtime/hostfile.c), and how long a host may take to resolve. */
typedef struct scv_hostfile_policy {
    int max_line;           /* 1024 characters a line */
    int max_hosts;          /* 4096 distinct hosts */
    int max_slots;          /* 65536: the largest slots=N or max_slots=N */
    int resolve_timeout_ms; /* 5000: a host not resolved by then is refused (0: not resolved) */
    int parallel;           /* 16 hosts resolved at a time */
    int (*resolve)(const char *name); /* NULL: getaddrinfo; tests: another resolver (0 = found),
                                         called in a thread of its own */
} scv_hostfile_policy;
scv_hostfile_policy scv_hostfile_policy_default(void);
/* Checks the Open MPI hostfile at path under pol (NULL: the default policy): line length,
 * host name syntax (RFC 1123, an IP address, optional "user@"), the slots fields, and that
 * every host resolves within the bound (each in a thread of its own, waited for until the bound).
 * SCV_EINVAL naming "path:line" and the fault; SCV_ENOTFOUND for an unreadable file or a
 * host that does not resolve (in time), naming path:line and the host. */
int scv_hostfile_check(const char *path, const scv_hostfile_policy *pol, scv_err *err);
#endif
