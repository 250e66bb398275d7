/*
 * launch.h - starting a job's ranks through Open MPI's mpirun from a plain process.
 */
#ifndef SCV_LAUNCH_H
#define SCV_LAUNCH_H
#include "scv.h"

typedef struct scv_launch {
    int workers;          /* -np */
    int threads;          /* OMP/OpenBLAS threads per rank */
    char *const *argv;    /* the rank's command line after the program name */
    int argc;
} scv_launch;

/* Runs `mpirun ... <this executable> argv...` and waits. Sets what Open MPI needs as root,
 * oversubscribes (more ranks than cores is allowed) and disables binding. Returns the exit
 * status of mpirun (the first failing rank's), or -1 with err set when it cannot start. */
int scv_launch_mpirun(const scv_launch *l, scv_err *err);
#endif
