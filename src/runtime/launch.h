/*
 * launch.h - starting a job's ranks through Open MPI's mpirun from a plain process, on this
 * machine (local provider) or across an emulated cluster.
 */
#ifndef SCV_LAUNCH_H
#define SCV_LAUNCH_H
#include "scv.h"

typedef struct scv_launch {
    int workers;          /* -np */
    int threads;          /* OMP threads per rank */
    char *const *argv;    /* the rank's command line after the program name */
    int argc;
    const char *cluster;  /* emulated cluster name, or NULL for local processes */
    int elastic;          /* an elastic job: on a cluster the hostfile lists every VM (spawned
                             processes go to the ones after the first K) and the ranks get
                             SCV_ELASTIC_HOSTS (the VMs' addresses, in order) */
} scv_launch;

/* Runs `mpirun ... <this executable> argv...` and waits. Sets what Open MPI needs as root,
 * disables binding; locally it oversubscribes, on a cluster it places one rank per VM
 * (VMs 1..K) through the cluster's rsh agent, over TCP only, with the ring allreduce.
 * Returns SCV_OK when mpirun ran to its end, with its exit status in *exit_status (0 when
 * every rank succeeded, else the first failing rank's; 128 + N when signal N ended it).
 * Returns an SCV_E* code with err set when the job could not be started: the cluster's
 * own code (no such cluster, ...), SCV_EINVAL for more workers than the cluster has VMs,
 * SCV_EIO naming the hostfile or agent script that could not be written or for fork,
 * SCV_ENOTFOUND when mpirun is not installed, the cluster's code when the launcher could
 * not enter VM 1. *exit_status is then left unchanged. */
int scv_launch_mpirun(const scv_launch *l, int *exit_status, scv_err *err);
#endif
