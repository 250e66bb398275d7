/*
 * launch.c - spawns mpirun with this executable as the rank program (see launch.h).
 * The parent ignores SIGINT while it waits: mpirun passes the signal to the ranks,
 * which stop at the next iteration, checkpoint and exit.
 */
#define _POSIX_C_SOURCE 200809L
#include "launch.h"

#include <errno.h>
#include <signal.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

extern char **environ;

int scv_launch_mpirun(const scv_launch *l, scv_err *err)
{
    char exe[4096];
    ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
    if (n <= 0) {
        scv_err_set(err, SCV_EIO, "cannot resolve /proc/self/exe: %s", strerror(errno));
        return -1;
    }
    exe[n] = 0;
    char np[16], omp[48], blas[48];
    snprintf(np, sizeof np, "%d", l->workers);
    snprintf(omp, sizeof omp, "OMP_NUM_THREADS=%d", l->threads);
    snprintf(blas, sizeof blas, "OPENBLAS_NUM_THREADS=%d", l->threads);
    const char *fixed[] = {"mpirun", "-q", "--oversubscribe", "--bind-to", "none", "-np", np,
                           "-x", omp, "-x", blas, exe};
    int nf = (int)(sizeof fixed / sizeof fixed[0]);
    char **args = calloc((size_t)(nf + l->argc + 1), sizeof(char *));
    if (!args) {
        scv_err_set(err, SCV_ENOMEM, "out of memory");
        return -1;
    }
    for (int i = 0; i < nf; i++) args[i] = (char *)fixed[i];
    for (int i = 0; i < l->argc; i++) args[nf + i] = l->argv[i];
    setenv("OMPI_ALLOW_RUN_AS_ROOT", "1", 1);
    setenv("OMPI_ALLOW_RUN_AS_ROOT_CONFIRM", "1", 1);
    setenv("OMPI_MCA_rmaps_base_oversubscribe", "1", 1);
    struct sigaction ign, old;
    memset(&ign, 0, sizeof ign);
    ign.sa_handler = SIG_IGN;
    sigaction(SIGINT, &ign, &old);
    /* the child must not inherit the ignored SIGINT */
    posix_spawnattr_t attr;
    sigset_t dflt;
    posix_spawnattr_init(&attr);
    sigemptyset(&dflt);
    sigaddset(&dflt, SIGINT);
    posix_spawnattr_setsigdefault(&attr, &dflt);
    posix_spawnattr_setflags(&attr, POSIX_SPAWN_SETSIGDEF);
    pid_t pid;
    int rc = posix_spawnp(&pid, "mpirun", NULL, &attr, args, environ);
    posix_spawnattr_destroy(&attr);
    free(args);
    if (rc != 0) {
        sigaction(SIGINT, &old, NULL);
        scv_err_set(err, SCV_ENOTFOUND, "cannot start mpirun: %s (install Open MPI: "
                                        "scripts/install-deps.sh)", strerror(rc));
        return -1;
    }
    int status = 0;
    while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {}
    sigaction(SIGINT, &old, NULL);
    if (WIFEXITED(status)) return WEXITSTATUS(status);
    if (WIFSIGNALED(status)) return 128 + WTERMSIG(status);
    return 1;
}
