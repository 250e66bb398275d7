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
} scv_launch;

/* Runs `mpirun ... <this executable> argv...` and waits. Sets what Open MPI needs as root,
 * disables binding; locally it oversubscribes, on a cluster it places one rank per VM
 * (VMs 1..K) through the cluster's rsh agent, over TCP only, with the ring allreduce.
 * Returns mpirun's exit status (the first failing rank's), or -1 with err set. */
int scv_launch_mpirun(const scv_launch *l, scv_err *err);
#endif
