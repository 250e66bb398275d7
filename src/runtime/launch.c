/*
 * launch.c - spawns mpirun with this executable as the rank program (see launch.h).
 * The parent ignores SIGINT while it waits: mpirun passes the signal to the ranks, which
 * stop at the next iteration, checkpoint and exit.
 *
 * On an emulated cluster, mpirun itself runs inside VM 1 (its network namespace and CPU
 * cgroup, so rank 0 is confined like the others), the hostfile lists one slot per VM, and
 * the rsh agent (`scavenger cluster agent`) starts each remote daemon inside its VM. Open
 * MPI's default allreduce choice is poor on shaped links, so the ring is set explicitly
 * (coll_tuned algorithm 4, libnbc algorithm 1 for the non-blocking form), and shared memory
 * is off (btl self,tcp) so traffic really crosses the shaped veths. Ranks wait for
 * collectives by polling with 50 us sleeps (SCV_COMM_POLL_SLEEP_US, see comm_mpi.c) so that
 * waiting does not spend the VM's CPU quota.
 */
#define _POSIX_C_SOURCE 200809L
#include "launch.h"
#include "cluster.h"

#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#define MAX_FIXED 40

/* Writes the hostfile and agent script of a cluster launch; fills args. */
static int cluster_args(const scv_launch *l, const char *exe, const char **args, int *n,
                        scv_cluster *c, char *hostfile, char *agent, char *net, scv_err *err)
{
    int rc = scv_cluster_load(l->cluster, c, err);
    if (rc) return rc;
    if (l->workers > c->n)
        return scv_err_set(err, SCV_EINVAL, "--workers %d but cluster %s has %d VMs", l->workers,
                           l->cluster, c->n);
    snprintf(hostfile, 256, "/run/scavenger/%s.hosts", c->name);
    snprintf(agent, 256, "/run/scavenger/%s.agent", c->name);
    snprintf(net, 64, "10.213.%d.0/24", c->subnet);
    FILE *f = fopen(hostfile, "w");
    if (!f) return scv_err_set(err, SCV_EIO, "%s: %s", hostfile, strerror(errno));
    for (int i = 1; i <= l->workers; i++) fprintf(f, "10.213.%d.%d slots=1\n", c->subnet, i);
    fclose(f);
    f = fopen(agent, "w");
    if (!f) return scv_err_set(err, SCV_EIO, "%s: %s", agent, strerror(errno));
    fprintf(f, "#!/bin/sh\nexec '%s' cluster agent \"$@\"\n", exe);
    fclose(f);
    chmod(agent, 0755);
    const char *extra[] = {"--hostfile", hostfile, "--mca", "plm_rsh_agent", agent, "--mca", "btl",
                           "self,tcp", "--mca", "btl_tcp_if_include", net, "--mca",
                           "oob_tcp_if_include", net, "--mca", "coll_tuned_use_dynamic_rules", "1",
                           "--mca", "coll_tuned_allreduce_algorithm", "4", "--mca",
                           "coll_libnbc_iallreduce_algorithm", "1", "-x", "SCV_COMM_POLL_SLEEP_US=50"};
    for (size_t i = 0; i < sizeof extra / sizeof extra[0]; i++) args[(*n)++] = extra[i];
    return SCV_OK;
}

int scv_launch_mpirun(const scv_launch *l, scv_err *err)
{
    char exe[4096];
    ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
    if (n <= 0) {
        scv_err_set(err, SCV_EIO, "cannot resolve /proc/self/exe: %s", strerror(errno));
        return -1;
    }
    exe[n] = 0;
    char np[16], omp[48], hostfile[256], agent[256], net[64];
    snprintf(np, sizeof np, "%d", l->workers);
    snprintf(omp, sizeof omp, "OMP_NUM_THREADS=%d", l->threads);
    const char *fixed[MAX_FIXED] = {"mpirun", "-q", "--bind-to", "none", "-np", np, "-x", omp};
    int nf = 8;
    scv_cluster c;
    if (l->cluster) {
        if (cluster_args(l, exe, fixed, &nf, &c, hostfile, agent, net, err)) return -1;
    } else {
        fixed[nf++] = "--oversubscribe";
    }
    fixed[nf++] = exe;
    char **args = calloc((size_t)(nf + l->argc + 1), sizeof(char *));
    if (!args) {
        scv_err_set(err, SCV_ENOMEM, "out of memory");
        return -1;
    }
    for (int i = 0; i < nf; i++) args[i] = (char *)fixed[i];
    for (int i = 0; i < l->argc; i++) args[nf + i] = l->argv[i];
    setenv("OMPI_ALLOW_RUN_AS_ROOT", "1", 1);
    setenv("OMPI_ALLOW_RUN_AS_ROOT_CONFIRM", "1", 1);
    if (!l->cluster) setenv("OMPI_MCA_rmaps_base_oversubscribe", "1", 1);
    fflush(NULL);
    pid_t pid = fork();
    if (pid < 0) {
        free(args);
        scv_err_set(err, SCV_EIO, "fork: %s", strerror(errno));
        return -1;
    }
    if (pid == 0) {
        scv_err e2 = {0};
        if (l->cluster && scv_cluster_enter(&c, 1, &e2)) {
            fprintf(stderr, "scavenger: %s\n", e2.msg);
            _exit(1);
        }
        execvp("mpirun", args);
        fprintf(stderr, "scavenger: cannot start mpirun: %s (install Open MPI: scripts/install-deps.sh)\n",
                strerror(errno));
        _exit(127);
    }
    free(args);
    /* the child keeps the default SIGINT; the parent waits through it */
    struct sigaction ign, old;
    memset(&ign, 0, sizeof ign);
    ign.sa_handler = SIG_IGN;
    sigaction(SIGINT, &ign, &old);
    int status = 0;
    while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {}
    sigaction(SIGINT, &old, NULL);
    if (WIFEXITED(status)) return WEXITSTATUS(status) == 127 ? -1 : WEXITSTATUS(status);
    if (WIFSIGNALED(status)) return 128 + WTERMSIG(status);
    return 1;
}
