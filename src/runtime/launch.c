/*
 * launch.c - spawns mpirun with this executable as the rank program (see launch.h).
 * mpirun and its local ranks run in a process group of their own; SIGINT or SIGTERM to the
 * parent (a terminal's Ctrl-C reaches the parent only) is passed on as SIGUSR1, which mpirun
 * forwards to every rank: they stop at the next iteration, checkpoint and exit (SIGINT or
 * SIGTERM sent to mpirun itself would end them within a second). mpirun gets SIGTERM when the
 * parent dies (PR_SET_PDEATHSIG), so neither mpirun nor its ranks outlive a killed
 * `scavenger train` or `scavenger run`.
 *
 * On an emulated cluster, mpirun itself runs inside the first VM (VM 1, or the first of the
 * launch's place_type: its network namespace and CPU cgroup, so rank 0 is confined like the
 * others), the hostfile lists one slot per VM (that type's first), and
 * the rsh agent (`scavenger cluster agent`) starts each remote daemon inside its VM. Open
 * MPI's default allreduce choice is poor on shaped links, so the ring is set explicitly
 * (coll_tuned algorithm 4, libnbc algorithm 1 for the non-blocking form), and shared memory
 * is off (btl self,tcp) so traffic really crosses the shaped veths. Ranks wait for
 * collectives by polling with 50 us sleeps (SCV_COMM_POLL_SLEEP_US, see comm_mpi.c) so that
 * waiting does not spend the VM's CPU quota.
 *
 * Errors: SCV_OK means mpirun ran (its exit status is returned separately); a job that could
 * not be started is an SCV_E* code with a message, including failures in the forked child
 * (entering VM 1, exec), which travel back through a close-on-exec pipe.
 */
#define _POSIX_C_SOURCE 200809L
#include "launch.h"
#include "cluster.h"
#include "procs.h"
#include "../core/util.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define MAX_FIXED 40

/* mpirun's pid while this process waits for it: SIGTERM (sent to this process alone, or by
 * the kernel when the parent `scavenger run` dies) is passed on, and mpirun ends its ranks. */
static volatile sig_atomic_t g_mpirun, g_asked;
/* SIGINT or SIGTERM while mpirun runs: the first is passed on as SIGUSR1, which mpirun
 * forwards to every rank (the ranks stop at an iteration boundary and checkpoint); SIGINT or
 * SIGTERM sent to mpirun itself would end the ranks within a second, checkpoint or not. A
 * second one ends the job (SIGTERM to mpirun). */
static void on_term(int sig)
{
    (void)sig;
    if (g_mpirun > 0) kill((pid_t)g_mpirun, g_asked++ ? SIGTERM : SIGUSR1);
}

/* Writes text to path (created or truncated) with the given mode; SCV_EIO naming path. */
static int write_text(const char *path, const char *text, mode_t mode, scv_err *err)
{
    FILE *f = fopen(path, "w");
    if (!f) return scv_err_set(err, SCV_EIO, "%s: cannot write: %s", path, strerror(errno));
    int bad = fputs(text, f) == EOF;
    bad |= fclose(f) != 0;
    if (bad) return scv_err_set(err, SCV_EIO, "%s: write failed: %s", path, strerror(errno));
    if (chmod(path, mode) != 0)
        return scv_err_set(err, SCV_EIO, "%s: chmod: %s", path, strerror(errno));
    return SCV_OK;
}

/* The preempted VMs of c (order[up..n)) as " (VM I, VM J preempted: scavenger cluster restore NAME I)". */
static void preempted_note(const scv_cluster *c, const int *order, int up, char *buf, size_t cap)
{
    size_t len = 0;
    buf[0] = 0;
    for (int i = up; i < c->n && len < cap; i++)
        len += (size_t)snprintf(buf + len, cap - len, "%sVM %d", i > up ? ", " : " (", order[i]);
    if (up < c->n && len < cap)
        snprintf(buf + len, cap - len, " preempted: scavenger cluster restore %s %d)", c->name, order[up]);
}

/* An elastic job on a cluster runs in join mode (comm_mpi.c) unless SCV_ELASTIC_JOIN=0: mpirun starts the root alone
 * on the first VM, with an ompi-server beside it (the rendezvous of MPI_Comm_connect), and
 * every other process joins from its VM as its own `mpirun -np 1`, started by the root
 * through the join script (SCRIPT HOST EXE ARGS...: `scavenger cluster exec` into HOST's VM,
 * then mpirun with the cluster's options; its output in SCRIPT-SLOT.log). A process under a
 * preemption notice leaves the job before its VM's take-down, which then kills nothing the
 * job depends on (Open MPI's daemon for a spawned process would be killed, and mpirun would
 * end the job). With SCV_ELASTIC_JOIN=0, the spawn route (one mpirun, processes spawned onto
 * the VMs). */
typedef struct {
    int on;
    char uri[256], script[256], port[256], env_script[300], env_port[300], server_arg[300];
} join_files;

/* Writes the hostfile and agent script of a cluster launch; fills args. The ranks go on the
 * VMs that are up (scv_cluster_place_up: a job restarted after a take-down is placed around
 * the preempted VM, which `enter` and so mpirun's daemon there would refuse). An elastic job
 * starts on as many as are up (np rewritten, at most --workers) and gets every VM in
 * SCV_ELASTIC_HOSTS, the preempted ones last: it grows onto one once it is restored. */
static int cluster_args(const scv_launch *l, const char *exe, const char **args, int *n, char *np,
                        scv_cluster *c, int *order, char *hostfile, char *agent, char *net, char *hosts,
                        size_t hosts_cap, join_files *jf, scv_err *err)
{
    int rc = scv_cluster_load(l->cluster, c, err);
    if (rc) return rc;
    if (l->workers > c->n)
        return scv_err_set(err, SCV_EINVAL, "--workers %d but cluster %s has %d VMs", l->workers,
                           l->cluster, c->n);
    int up = scv_cluster_place_up(c, l->place_type, order);
    char note[SCV_CLUSTER_MAX_VMS * 12 + 128];
    preempted_note(c, order, up, note, sizeof note);
    if (up < 1 || (!l->elastic && l->workers > up))
        return scv_err_set(err, SCV_EMPI, "--workers %d but cluster %s has %d of its %d VMs up%s", l->workers,
                           l->cluster, up, c->n, note);
    if (l->elastic && l->workers > up) snprintf(np, 16, "%d", up);
    const char *jo = getenv("SCV_ELASTIC_JOIN");
    jf->on = l->elastic && !(jo && !strcmp(jo, "0"));
    if (jf->on) snprintf(np, 16, "1"); /* the root alone: the others join */
    snprintf(hostfile, 256, "/run/scavenger/%s.hosts", c->name);
    snprintf(agent, 256, "/run/scavenger/%s.agent", c->name);
    snprintf(net, 64, "10.213.%d.0/24", c->subnet);
    char text[SCV_CLUSTER_MAX_VMS * 40 + 4200];
    size_t len = 0;
    int nh = jf->on ? 1 : l->elastic ? up : l->workers;
    for (int i = 0; i < nh && len < sizeof text; i++)
        len += (size_t)snprintf(text + len, sizeof text - len, "10.213.%d.%d slots=1\n", c->subnet, order[i]);
    if ((rc = write_text(hostfile, text, 0644, err))) return rc;
    snprintf(text, sizeof text, "#!/bin/sh\nexec '%s' cluster agent \"$@\"\n", exe);
    if ((rc = write_text(agent, text, 0755, err))) return rc;
    const char *extra[] = {"--hostfile", hostfile, "--mca", "plm_rsh_agent", agent, "--mca", "btl",
                           "self,tcp", "--mca", "btl_tcp_if_include", net, "--mca",
                           "oob_tcp_if_include", net, "--mca", "coll_tuned_use_dynamic_rules", "1",
                           "--mca", "coll_tuned_allreduce_algorithm", "4", "--mca",
                           "coll_libnbc_iallreduce_algorithm", "1", "-x", "SCV_COMM_POLL_SLEEP_US=50"};
    for (size_t i = 0; i < sizeof extra / sizeof extra[0]; i++) args[(*n)++] = extra[i];
    if (jf->on) {
        snprintf(jf->uri, sizeof jf->uri, "/run/scavenger/%s.ompi-server", c->name);
        snprintf(jf->script, sizeof jf->script, "/run/scavenger/%s.join", c->name);
        snprintf(jf->port, sizeof jf->port, "/run/scavenger/%s.port", c->name);
        snprintf(jf->env_script, sizeof jf->env_script, "SCV_JOIN_SCRIPT=%s", jf->script);
        snprintf(jf->env_port, sizeof jf->env_port, "SCV_JOIN_PORT_FILE=%s", jf->port);
        snprintf(jf->server_arg, sizeof jf->server_arg, "file:%s", jf->uri);
        snprintf(text, sizeof text,
                 "#!/bin/sh\n# SCRIPT HOST EXE ARGS...: a process of the elastic job joins from HOST's VM (10.213.S.I is VM I)\n"
                 "vm=${1##*.}; shift\n"
                 "exec '%s' cluster exec '%s' \"$vm\" -- mpirun -q --bind-to none --ompi-server %s --mca btl self,tcp "
                 "--mca btl_tcp_if_include %s --mca oob_tcp_if_include %s --mca coll_tuned_use_dynamic_rules 1 "
                 "--mca coll_tuned_allreduce_algorithm 4 --mca coll_libnbc_iallreduce_algorithm 1 "
                 "-x SCV_COMM_POLL_SLEEP_US=50 -x OMP_NUM_THREADS -x SCV_ELASTIC_HOSTS -x SCV_JOIN_CONNECT=1 "
                 "-x SCV_JOIN_PORT_FILE -np 1 \"$@\"\n",
                 exe, c->name, jf->server_arg, net, net);
        if ((rc = write_text(jf->script, text, 0755, err))) return rc;
        args[(*n)++] = "--ompi-server";
        args[(*n)++] = jf->server_arg;
        args[(*n)++] = "-x";
        args[(*n)++] = jf->env_script;
        args[(*n)++] = "-x";
        args[(*n)++] = jf->env_port;
    }
    if (l->elastic) {
        size_t hl = (size_t)snprintf(hosts, hosts_cap, "SCV_ELASTIC_HOSTS=");
        for (int i = 0; i < c->n && hl < hosts_cap; i++)
            hl += (size_t)snprintf(hosts + hl, hosts_cap - hl, "%s10.213.%d.%d", i ? "," : "", c->subnet, order[i]);
        args[(*n)++] = "-x";
        args[(*n)++] = hosts;
    }
    return SCV_OK;
}

/* In the forked child: reports why it could not become mpirun through the error pipe (the
 * parent reads it; a successful exec closes the pipe unread) and exits. */
static void child_fail(int fd, const scv_err *e)
{
    ssize_t w = write(fd, e, sizeof *e);
    (void)w;
    _exit(127);
}

/* Starts mpirun (see scv_launch_start); fills *pid. */
static int start(const scv_launch *l, pid_t *out_pid, scv_err *err)
{
    char exe[4096];
    ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
    if (n <= 0) return scv_err_set(err, SCV_EIO, "cannot resolve /proc/self/exe: %s", strerror(errno));
    exe[n] = 0;
    if (l->cluster && l->hostfile) return scv_err_set(err, SCV_EINVAL, "a cluster or a hostfile, not both");
    char np[16], omp[48], hostfile[256], agent[256], net[64], hosts[SCV_CLUSTER_MAX_VMS * 20 + 32];
    int first[SCV_CLUSTER_MAX_VMS]; /* a cluster's VMs in placement order, those up first */
    join_files jf = {0};
    snprintf(np, sizeof np, "%d", l->workers);
    snprintf(omp, sizeof omp, "OMP_NUM_THREADS=%d", l->threads);
    const char *fixed[MAX_FIXED] = {"mpirun", "--bind-to", "none", "-np", np, "-x", omp};
    int nf = 7, rc, n_env = 0;
    scv_cluster c;
    if (l->cluster) {
        if ((rc = cluster_args(l, exe, fixed, &nf, np, &c, first, hostfile, agent, net, hosts, sizeof hosts, &jf, err)))
            return rc;
    } else if (l->hostfile) {
        if ((rc = scv_hostfile_check(l->hostfile, NULL, err))) return rc; /* before mpirun reads it */
        fixed[nf++] = "--hostfile", fixed[nf++] = l->hostfile;
        if (getenv("SCV_RSH_AGENT"))
            fixed[nf++] = "--mca", fixed[nf++] = "plm_rsh_agent", fixed[nf++] = getenv("SCV_RSH_AGENT");
    } else if (!getenv("SLURM_JOB_ID")) { /* inside a Slurm allocation its slots bound the job */
        fixed[nf++] = "--oversubscribe";
    }
    if (!l->hostfile && (l->cluster || !getenv("SLURM_JOB_ID")))
        fixed[nf++] = "-q"; /* quiet, but not where mpirun must say why a job does not fit its slots */
    while (l->env && l->env[n_env]) n_env++;
    char **args = calloc((size_t)(nf + 2 * n_env + 1 + l->argc + 1), sizeof(char *));
    if (!args) return scv_err_set(err, SCV_ENOMEM, "out of memory");
    int na = 0;
    for (int i = 0; i < nf; i++) args[na++] = (char *)fixed[i];
    for (int i = 0; i < n_env; i++) args[na++] = "-x", args[na++] = (char *)l->env[i];
    args[na++] = (char *)(l->program ? l->program : exe);
    for (int i = 0; i < l->argc; i++) args[na++] = l->argv[i];
    /* The child reports a failure before or at exec through this pipe; exec closes it. */
    int pfd[2];
    if (pipe(pfd) != 0) {
        free(args);
        return scv_err_set(err, SCV_EIO, "pipe: %s", strerror(errno));
    }
    fcntl(pfd[1], F_SETFD, FD_CLOEXEC);
    fflush(NULL);
    pid_t parent = getpid();
    pid_t pid = fork();
    if (pid < 0) {
        int e = errno;
        free(args);
        close(pfd[0]);
        close(pfd[1]);
        return scv_err_set(err, SCV_EIO, "fork: %s", strerror(e));
    }
    if (pid == 0) {
        close(pfd[0]);
        /* mpirun (and through it the ranks) dies with this process, even after SIGKILL;
         * the setting survives exec (mpirun is not set-user-ID) */
        prctl(PR_SET_PDEATHSIG, SIGTERM);
        if (getppid() != parent) _exit(128 + SIGTERM);
        scv_proc_tag_set(); /* every process of the job carries SCV_JOB_<parent>=<mpirun> */
        if (l->own_group) setpgid(0, 0);
        if (l->log) {
            int fd = open(l->log, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
            scv_err e3 = {0};
            if (fd < 0) {
                scv_err_set(&e3, SCV_EIO, "%s: cannot open the job's log: %s", l->log, strerror(errno));
                child_fail(pfd[1], &e3);
            }
            dup2(fd, 1), dup2(fd, 2);
        }
        /* what Open MPI needs, in mpirun's environment only (not this process's) */
        setenv("OMPI_ALLOW_RUN_AS_ROOT", "1", 1);
        setenv("OMPI_ALLOW_RUN_AS_ROOT_CONFIRM", "1", 1);
        if (!l->cluster && !l->hostfile && !getenv("SLURM_JOB_ID")) setenv("OMPI_MCA_rmaps_base_oversubscribe", "1", 1);
        struct sigaction dfl; /* a caller that ignores SIGINT while it waits: not mpirun */
        memset(&dfl, 0, sizeof dfl);
        dfl.sa_handler = SIG_DFL;
        sigaction(SIGINT, &dfl, NULL);
        scv_err e2 = {0};
        if (l->cluster && scv_cluster_enter(&c, first[0], &e2)) child_fail(pfd[1], &e2);
        if (jf.on) { /* the ompi-server, in VM 1 beside mpirun (it ends with it: PDEATHSIG, and the group) */
            unlink(jf.uri);
            pid_t me = getpid(), srv = fork();
            if (srv == 0) {
                prctl(PR_SET_PDEATHSIG, SIGTERM);
                if (getppid() != me) _exit(128 + SIGTERM);
                execlp("ompi-server", "ompi-server", "--no-daemonize", "-r", jf.uri, (char *)NULL);
                _exit(127);
            }
            struct stat sb;
            for (int i = 0; i < 1000 && !(stat(jf.uri, &sb) == 0 && sb.st_size > 0); i++) {
                struct timespec ts = {0, 10000000L};
                nanosleep(&ts, NULL);
            }
            if (srv < 0 || stat(jf.uri, &sb) != 0 || sb.st_size == 0) {
                scv_err_set(&e2, SCV_EMPI, "the elastic job's ompi-server did not start (%s)", jf.uri);
                child_fail(pfd[1], &e2);
            }
        }
        execvp("mpirun", args);
        scv_err_set(&e2, errno == ENOENT ? SCV_ENOTFOUND : SCV_EIO,
                    "cannot start mpirun: %s (install Open MPI: scripts/install-deps.sh)",
                    strerror(errno));
        child_fail(pfd[1], &e2);
    }
    free(args);
    close(pfd[1]);
    scv_err child_err = {0};
    size_t got = 0;
    while (got < sizeof child_err) {
        ssize_t r = read(pfd[0], (char *)&child_err + got, sizeof child_err - got);
        if (r < 0 && errno == EINTR) continue;
        if (r <= 0) break;
        got += (size_t)r;
    }
    close(pfd[0]);
    if (got == sizeof child_err) {
        int st;
        while (waitpid(pid, &st, 0) < 0 && errno == EINTR) {}
        child_err.msg[sizeof child_err.msg - 1] = 0;
        return scv_err_set(err, child_err.code ? child_err.code : SCV_EIO, "%s", child_err.msg);
    }
    *out_pid = pid;
    return SCV_OK;
}

int scv_launch_start(const scv_launch *l, pid_t *pid, scv_err *err) { return start(l, pid, err); }

int scv_launch_rendezvous_env(const scv_launch *l, const char *addr, int port, scv_launch_rdv *r, const char **v)
{
    int n = 0;
    snprintf(r->addr, sizeof r->addr, "MASTER_ADDR=%s", addr);
    snprintf(r->port, sizeof r->port, "MASTER_PORT=%d", port);
    v[n++] = r->addr, v[n++] = r->port;
    if (l->cluster) v[n++] = "GLOO_SOCKET_IFNAME=eth0";
    return n;
}

int scv_launch_rank0_addr(const scv_launch *l, char *buf, size_t cap, scv_err *err)
{
    if (l->cluster) {
        scv_cluster c;
        int rc = scv_cluster_load(l->cluster, &c, err);
        if (rc) return rc;
        int order[SCV_CLUSTER_MAX_VMS];
        scv_cluster_place_up(&c, l->place_type, order);
        snprintf(buf, cap, "10.213.%d.%d", c.subnet, order[0]);
        return SCV_OK;
    }
    if (!l->hostfile) {
        snprintf(buf, cap, "127.0.0.1");
        return SCV_OK;
    }
    FILE *f = fopen(l->hostfile, "r");
    if (!f) return scv_err_set(err, SCV_ENOTFOUND, "%s: cannot read the hostfile: %s", l->hostfile, strerror(errno));
    char line[512];
    int found = 0;
    while (!found && fgets(line, sizeof line, f)) {
        char *h = line + strspn(line, " \t");
        size_t len = strcspn(h, " \t\r\n#");
        if (len && h[0] != '#' && len < cap) {
            memcpy(buf, h, len), buf[len] = 0;
            found = 1;
        }
    }
    fclose(f);
    return found ? SCV_OK : scv_err_set(err, SCV_EPARSE, "%s: no host in the hostfile", l->hostfile);
}

/* Open MPI 4's (ORTE, PMIx) words for a launch that failed or broke, as they appear in its
 * output; each one of them has been seen before a hang or an exit of mpirun. */
static const char *const MPI_FAILURE[] = {
    "ORTE_ERROR_LOG", "PMIX_ERROR", "PMIX ERROR", "*** Process received signal ***", "mpirun was unable to",
    "mpirun noticed that", "mpirun has exited due to", "mpirun: abort is already in progress",
    "ORTE was unable to", "An ORTE daemon has unexpectedly failed", "ORTE has lost communication",
    "An internal error has occurred in ORTE", "There are not enough slots available", "It looks like orte_init failed",
    "It looks like opal_init failed", "It looks like MPI_INIT failed", "MPI_ABORT was invoked",
    "All nodes which are allocated for this job are already filled",
};

int scv_launch_error_line(const char *line)
{
    for (size_t i = 0; line && i < sizeof MPI_FAILURE / sizeof MPI_FAILURE[0]; i++)
        if (strstr(line, MPI_FAILURE[i])) return 1;
    return 0;
}

scv_launch_policy scv_launch_policy_default(void)
{
    return (scv_launch_policy){.stop_grace_s = 60.0, .term_grace_s = 5.0};
}

static void nap_ms(long ms)
{
    struct timespec ts = {ms / 1000, (ms % 1000) * 1000000L};
    nanosleep(&ts, NULL);
}

/* SIGKILL to mpirun and every process of its job: its descendants, and those reparented
 * elsewhere (found by the launch's tag). */
static void kill_job(pid_t pid)
{
    pid_t d[512];
    kill(pid, SIGKILL);
    int n = scv_proc_descendants(pid, d, 512);
    for (int i = 0; i < n; i++) kill(d[i], SIGKILL);
    n = scv_proc_tagged(getpid(), pid, d, 512);
    for (int i = 0; i < n; i++) kill(d[i], SIGKILL);
}

/* Waits for mpirun (pid); a stop asked (g_asked, by on_term) is bounded by pol: SIGTERM to
 * mpirun stop_grace_s after it, SIGKILL to the whole job term_grace_s after that. */
static pid_t wait_bounded(pid_t pid, const scv_launch_policy *pol, int *status)
{
    double asked = 0, termed = 0;
    int killed = 0;
    for (;;) {
        pid_t w = waitpid(pid, status, WNOHANG);
        if (w == pid || (w < 0 && errno != EINTR)) return w;
        double now = scv_now();
        if (g_asked && !asked) asked = now;
        if (asked && !termed && (g_asked > 1 || now - asked > pol->stop_grace_s)) {
            kill(pid, SIGTERM); /* (a second signal sent it already) */
            termed = now;
        }
        if (termed && !killed && now - termed > pol->term_grace_s) kill_job(pid), killed = 1;
        nap_ms(g_asked ? 10 : 50);
    }
}

int scv_launch_mpirun(const scv_launch *l, int *exit_status, scv_err *err)
{
    /* mpirun and the local ranks in a process group of their own, so that a terminal's
     * Ctrl-C reaches this process only, which passes it on as SIGUSR1 (on_term) */
    scv_launch own = *l;
    own.own_group = 1;
    const scv_launch_policy def = scv_launch_policy_default(), *pol = l->policy ? l->policy : &def;
    struct sigaction ign, old, term, old_term;
    memset(&ign, 0, sizeof ign);
    ign.sa_handler = SIG_IGN;
    sigaction(SIGINT, &ign, &old); /* until mpirun's pid is known */
    pid_t pid = 0;
    int rc = start(&own, &pid, err);
    if (rc) {
        sigaction(SIGINT, &old, NULL);
        return rc;
    }
    memset(&term, 0, sizeof term);
    term.sa_handler = on_term;
    g_asked = 0;
    g_mpirun = (sig_atomic_t)pid;
    sigaction(SIGINT, &term, NULL);
    sigaction(SIGTERM, &term, &old_term);
    int status = 0;
    pid_t w = wait_bounded(pid, pol, &status);
    int wait_errno = errno;
    g_mpirun = 0;
    sigaction(SIGINT, &old, NULL);
    sigaction(SIGTERM, &old_term, NULL);
    kill(-pid, SIGKILL); /* a rank left behind goes with its mpirun's group */
    /* and one in a group of its own (mpirun puts each rank in one), wherever it went */
    scv_proc_end_launch_said(pid, "the job's", "its mpirun");
    if (w < 0) return scv_err_set(err, SCV_EIO, "waiting for mpirun: %s", strerror(wait_errno));
    if (WIFEXITED(status)) *exit_status = WEXITSTATUS(status);
    else if (WIFSIGNALED(status)) *exit_status = 128 + WTERMSIG(status);
    else *exit_status = 1;
    /* asked to stop: the ranks exit 130 after their checkpoint; mpirun reports that, or 138
     * (128 + SIGUSR1, Open MPI's way after forwarding it) */
    if (g_asked && (*exit_status == 128 + SIGUSR1 || *exit_status == 0)) *exit_status = 130;
    return SCV_OK;
}
