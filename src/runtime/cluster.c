/*
 * cluster.c - the emulated cluster provider (see cluster.h).
 *
 * Layout for cluster NAME with subnet S (state in /run/scavenger/clusters/NAME):
 *   netns scv-NAME-sw      bridge br0, one port p<i> per VM (tbf: the VM's ingress)
 *   netns scv-NAME-<i>     eth0 = 10.213.S.<i>/24 (tbf: the VM's egress), lo
 *   cgroup <cpu>/scavenger/NAME-<i>  cpu.cfs_quota_us = cores * cpu.cfs_period_us
 * The namespaces are reachable only from each other: no route leaves them. Everything is
 * made with iproute2 and tc, run as child processes. `down` kills what still runs in the VMs,
 * removes the namespaces (which removes their links and qdiscs), the cgroups and the state;
 * `up` first does the same for
 * the name, so a crash leaves nothing that the next `up` or `down` does not clean.
 * Each VM's own files (a preemption's notice and mark, preempt.c) live in
 * /run/scavenger/clusters/NAME.d/<i>; `enter` refuses a preempted VM and tells the process
 * where its notice would appear (SCV_PREEMPT_NOTICE_FILE).
 */
#define _GNU_SOURCE
#include "cluster.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <sched.h>
#include <signal.h>
#include <spawn.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

extern char **environ;

#define STATE_DIR "/run/scavenger/clusters"
#define CG_V1 "/sys/fs/cgroup/cpu"
#define CG_OWN "/run/scavenger/cgroup-cpu"
#define PERIOD_US 10000 /* 10 ms: fine-grained throttling, closer to a VM of fewer cores */

/* ---- helpers ---- */

/* Runs a command (argv from a format split on spaces); quiet unless it fails. */
static int sh(scv_err *err, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static int sh(scv_err *err, const char *fmt, ...)
{
    char cmd[1024], *argv[48];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(cmd, sizeof cmd, fmt, ap);
    va_end(ap);
    char copy[1024];
    snprintf(copy, sizeof copy, "%s", cmd);
    int n = 0;
    for (char *t = strtok(copy, " "); t && n < 47; t = strtok(NULL, " ")) argv[n++] = t;
    argv[n] = NULL;
    /* the command's stderr goes to a private, already unlinked file (mkstemp: no fixed
     * name in /tmp that another user could plant or read) */
    char errpath[] = "/tmp/scavenger-cluster-XXXXXX";
    int efd = mkstemp(errpath);
    if (efd < 0) return scv_err_set(err, SCV_EIO, "cannot create a temporary file in /tmp: %s", strerror(errno));
    unlink(errpath);
    posix_spawn_file_actions_t fa;
    posix_spawn_file_actions_init(&fa);
    posix_spawn_file_actions_addopen(&fa, 1, "/dev/null", O_WRONLY, 0);
    posix_spawn_file_actions_adddup2(&fa, efd, 2);
    pid_t pid;
    int rc = posix_spawnp(&pid, argv[0], &fa, NULL, argv, environ);
    posix_spawn_file_actions_destroy(&fa);
    if (rc) {
        close(efd);
        return scv_err_set(err, SCV_ENOTFOUND, "cannot run %s: %s", argv[0], strerror(rc));
    }
    int st;
    while (waitpid(pid, &st, 0) < 0 && errno == EINTR) {}
    if (WIFEXITED(st) && WEXITSTATUS(st) == 0) {
        close(efd);
        return SCV_OK;
    }
    char msg[200] = "";
    ssize_t got = pread(efd, msg, sizeof msg - 1, 0);
    msg[got > 0 ? got : 0] = 0;
    close(efd);
    msg[strcspn(msg, "\n")] = 0;
    return scv_err_set(err, SCV_EIO, "'%s' failed: %s", cmd, msg[0] ? msg : "(no message)");
}

static int write_file(const char *path, const char *text)
{
    int fd = open(path, O_WRONLY);
    if (fd < 0) return -1;
    ssize_t w = write(fd, text, strlen(text));
    close(fd);
    return w == (ssize_t)strlen(text) ? 0 : -1;
}

/* The cgroup v1 cpu hierarchy: the system's, or one we mount. */
static const char *cg_root(void)
{
    static char root[64];
    if (root[0]) return root;
    struct stat st;
    if (stat(CG_V1 "/cpu.cfs_quota_us", &st) == 0) snprintf(root, sizeof root, "%s", CG_V1);
    else if (stat(CG_OWN "/cpu.cfs_quota_us", &st) == 0) snprintf(root, sizeof root, "%s", CG_OWN);
    else {
        mkdir("/run/scavenger", 0755);
        mkdir(CG_OWN, 0755);
        if (mount("scv_cpu", CG_OWN, "cgroup", 0, "cpu") == 0) snprintf(root, sizeof root, "%s", CG_OWN);
    }
    return root;
}

/* ---- emulated VM types ---- */

int scv_emu_types_load(const char *path, scv_emu_type **types, size_t *n, scv_err *err)
{
    *types = NULL;
    *n = 0;
    FILE *f = fopen(path, "r");
    if (!f) return scv_err_set(err, SCV_ENOTFOUND, "%s: cannot open: %s", path, strerror(errno));
    char line[512];
    int lineno = 0, header = 0, rc = SCV_OK;
    size_t cap = 0;
    while (fgets(line, sizeof line, f)) {
        lineno++;
        line[strcspn(line, "\r\n")] = 0;
        if (!line[0] || line[0] == '#') continue;
        if (!header) {
            if (strcmp(line, "name,catalog_type,cores,bandwidth_mbit,memory_gib") != 0) {
                rc = scv_err_set(err, SCV_EPARSE, "%s:%d: expected the header "
                                 "name,catalog_type,cores,bandwidth_mbit,memory_gib", path, lineno);
                break;
            }
            header = 1;
            continue;
        }
        scv_emu_type t;
        memset(&t, 0, sizeof t);
        char extra;
        if (sscanf(line, "%63[^,],%63[^,],%lf,%lf,%lf%c", t.name, t.catalog_type, &t.cores,
                   &t.bandwidth_mbit, &t.memory_gib, &extra) != 5 ||
            !(t.cores > 0 && t.cores <= 64) || !(t.bandwidth_mbit > 0) || !(t.memory_gib > 0)) {
            rc = scv_err_set(err, SCV_EPARSE, "%s:%d: expected name,catalog_type,cores (0..64],"
                             "bandwidth_mbit > 0,memory_gib > 0", path, lineno);
            break;
        }
        if (*n == cap) {
            cap = cap ? 2 * cap : 16;
            scv_emu_type *nt = realloc(*types, cap * sizeof *nt);
            if (!nt) {
                rc = scv_err_set(err, SCV_ENOMEM, "out of memory");
                break;
            }
            *types = nt;
        }
        (*types)[(*n)++] = t;
    }
    fclose(f);
    if (!rc && !*n) rc = scv_err_set(err, SCV_EPARSE, "%s: no VM type", path);
    if (rc) {
        free(*types);
        *types = NULL;
        *n = 0;
    }
    return rc;
}

/* ---- state ---- */

static int valid_name(const char *name)
{
    size_t len = strlen(name);
    if (len < 1 || len > 8) return 0; /* interface and namespace names stay short */
    for (size_t i = 0; i < len; i++)
        if (!((name[i] >= 'a' && name[i] <= 'z') || (name[i] >= '0' && name[i] <= '9'))) return 0;
    return 1;
}

static int save_state(const scv_cluster *c, scv_err *err)
{
    char path[256], buf[8192];
    int len = snprintf(buf, sizeof buf, "subnet %d\n", c->subnet);
    for (int i = 0; i < c->n && len < (int)sizeof buf - 200; i++)
        len += snprintf(buf + len, sizeof buf - (size_t)len, "vm %s %s %g %g %g %g\n", c->vm[i].name,
                        c->vm[i].catalog_type, c->vm[i].cores, c->vm[i].bandwidth_mbit,
                        c->vm[i].memory_gib, c->quota[i]);
    snprintf(path, sizeof path, STATE_DIR "/%s", c->name);
    FILE *f = fopen(path, "w");
    if (!f) return scv_err_set(err, SCV_EIO, "%s: cannot write: %s", path, strerror(errno));
    fputs(buf, f);
    return fclose(f) == 0 ? SCV_OK : scv_err_set(err, SCV_EIO, "%s: write failed", path);
}

int scv_cluster_load(const char *name, scv_cluster *c, scv_err *err)
{
    memset(c, 0, sizeof *c);
    if (!valid_name(name))
        return scv_err_set(err, SCV_EINVAL, "cluster name '%s': use 1-8 lower-case letters or digits", name);
    snprintf(c->name, sizeof c->name, "%s", name);
    char path[256], line[512];
    snprintf(path, sizeof path, STATE_DIR "/%s", name);
    FILE *f = fopen(path, "r");
    if (!f) return scv_err_set(err, SCV_ENOTFOUND, "no cluster '%s' (scavenger cluster up --name %s ...)", name, name);
    while (fgets(line, sizeof line, f)) {
        scv_emu_type t;
        double q;
        if (sscanf(line, "subnet %d", &c->subnet) == 1) continue;
        if (c->n < SCV_CLUSTER_MAX_VMS &&
            sscanf(line, "vm %63s %63s %lf %lf %lf %lf", t.name, t.catalog_type, &t.cores,
                   &t.bandwidth_mbit, &t.memory_gib, &q) == 6) {
            c->vm[c->n] = t;
            c->quota[c->n++] = q;
        }
    }
    fclose(f);
    if (c->subnet < 1 || c->n < 1) return scv_err_set(err, SCV_ECORRUPT, "%s: damaged cluster state", path);
    return SCV_OK;
}

int scv_cluster_list(char *buf, size_t cap)
{
    buf[0] = 0;
    DIR *d = opendir(STATE_DIR);
    if (!d) return 0;
    int n = 0;
    size_t len = 0;
    for (struct dirent *e; (e = readdir(d));) {
        if (e->d_name[0] == '.' || !valid_name(e->d_name)) continue;
        len += (size_t)snprintf(buf + len, len < cap ? cap - len : 0, "%s\n", e->d_name);
        n++;
    }
    closedir(d);
    return n;
}

void scv_cluster_addr(const scv_cluster *c, int vm, char *buf, size_t cap)
{
    snprintf(buf, cap, "10.213.%d.%d", c->subnet, vm);
}

int scv_cluster_count_type(const scv_cluster *c, const char *type)
{
    int n = 0;
    for (int i = 0; type && i < c->n; i++) n += !strcmp(c->vm[i].catalog_type, type);
    return n;
}

int scv_cluster_place_order(const scv_cluster *c, const char *type, int *order)
{
    int n = 0, held = scv_cluster_count_type(c, type);
    for (int pass = held ? 0 : 1; pass < 2; pass++) /* the type's VMs, then the others */
        for (int i = 0; i < c->n; i++)
            if (!held || (pass == 0) == !strcmp(c->vm[i].catalog_type, type)) order[n++] = i + 1;
    return held;
}

/* ---- up / down ---- */

int scv_cluster_check(scv_err *err)
{
    if (geteuid() != 0)
        return scv_err_set(err, SCV_EINVAL, "the emulated cluster needs root (network namespaces, tc, cgroups)");
    if (access("/usr/sbin/ip", X_OK) && access("/sbin/ip", X_OK) && access("/usr/bin/ip", X_OK))
        return scv_err_set(err, SCV_ENOTFOUND, "iproute2's 'ip' is missing (apt-get install iproute2)");
    if (access("/usr/sbin/tc", X_OK) && access("/sbin/tc", X_OK))
        return scv_err_set(err, SCV_ENOTFOUND, "'tc' is missing (apt-get install iproute2)");
    if (!cg_root()[0])
        return scv_err_set(err, SCV_ENOTFOUND,
                           "no cgroup v1 'cpu' controller (cgroup v2 here has none): CPU quotas unavailable");
    if (access("/proc/self/ns/net", R_OK))
        return scv_err_set(err, SCV_ENOTFOUND, "the kernel has no network namespaces");
    return SCV_OK;
}

/* SIGKILLs every process left in a VM's cgroup (a crashed job's mpirun or ranks) and
 * waits up to a second for the group to empty. */
static void kill_members(const char *procs)
{
    for (int round = 0; round < 20; round++) {
        FILE *f = fopen(procs, "r");
        if (!f) return;
        int any = 0;
        long pid;
        while (fscanf(f, "%ld", &pid) == 1) {
            kill((pid_t)pid, SIGKILL);
            any = 1;
        }
        fclose(f);
        if (!any) return;
        struct timespec ts = {0, 50000000};
        nanosleep(&ts, NULL);
    }
}

int scv_cluster_down(const char *name, scv_err *err)
{
    if (!valid_name(name))
        return scv_err_set(err, SCV_EINVAL, "cluster name '%s': use 1-8 lower-case letters or digits", name);
    char path[256];
    /* first the processes still inside the VMs, then what holds them */
    const char *cgr = cg_root();
    if (cgr[0]) {
        char dpath[300];
        snprintf(dpath, sizeof dpath, "%s/scavenger", cgr);
        DIR *cd = opendir(dpath);
        char pre[64];
        snprintf(pre, sizeof pre, "%s-", name);
        for (struct dirent *e; cd && (e = readdir(cd));)
            if (!strncmp(e->d_name, pre, strlen(pre))) {
                char procs[600];
                snprintf(procs, sizeof procs, "%s/%s/cgroup.procs", dpath, e->d_name);
                kill_members(procs);
            }
        if (cd) closedir(cd);
    }
    /* whatever exists: namespaces by name pattern, cgroups, state */
    DIR *d = opendir("/var/run/netns");
    char prefix[64];
    snprintf(prefix, sizeof prefix, "scv-%s-", name);
    for (struct dirent *e; d && (e = readdir(d));)
        if (!strncmp(e->d_name, prefix, strlen(prefix))) sh(NULL, "ip netns del %s", e->d_name);
    if (d) closedir(d);
    const char *cg = cg_root();
    if (cg[0]) {
        snprintf(path, sizeof path, "%s/scavenger", cg);
        d = opendir(path);
        snprintf(prefix, sizeof prefix, "%s-", name);
        for (struct dirent *e; d && (e = readdir(d));)
            if (!strncmp(e->d_name, prefix, strlen(prefix))) {
                char p2[512];
                snprintf(p2, sizeof p2, "%s/scavenger/%s", cg, e->d_name);
                if (rmdir(p2) != 0 && errno == EBUSY)
                    scv_err_set(err, SCV_EIO, "%s: processes would not exit", p2);
            }
        if (d) closedir(d);
    }
    snprintf(path, sizeof path, STATE_DIR "/%s", name);
    unlink(path);
    /* the VMs' own files: NAME.d/<i>/<file> */
    snprintf(path, sizeof path, STATE_DIR "/%s.d", name);
    d = opendir(path);
    for (struct dirent *e; d && (e = readdir(d));) {
        if (e->d_name[0] == '.') continue;
        char sub[600];
        snprintf(sub, sizeof sub, "%s/%s", path, e->d_name);
        DIR *s2 = opendir(sub);
        for (struct dirent *f; s2 && (f = readdir(s2));) {
            char file[900];
            snprintf(file, sizeof file, "%s/%s", sub, f->d_name);
            if (strcmp(f->d_name, ".") && strcmp(f->d_name, "..")) unlink(file);
        }
        if (s2) closedir(s2);
        rmdir(sub);
    }
    if (d) closedir(d);
    rmdir(path);
    return SCV_OK;
}

int scv_cluster_vm_dir(const char *name, int vm, int make, char *buf, size_t cap, scv_err *err)
{
    if (!valid_name(name))
        return scv_err_set(err, SCV_EINVAL, "cluster name '%s': use 1-8 lower-case letters or digits", name);
    snprintf(buf, cap, STATE_DIR "/%s.d", name);
    if (make && mkdir(buf, 0755) != 0 && errno != EEXIST)
        return scv_err_set(err, SCV_EIO, "%s: cannot create: %s", buf, strerror(errno));
    snprintf(buf, cap, STATE_DIR "/%s.d/%d", name, vm);
    if (make && mkdir(buf, 0755) != 0 && errno != EEXIST)
        return scv_err_set(err, SCV_EIO, "%s: cannot create: %s", buf, strerror(errno));
    return SCV_OK;
}

void scv_cluster_vm_kill(const char *name, int vm)
{
    char procs[512];
    snprintf(procs, sizeof procs, "%s/scavenger/%s-%d/cgroup.procs", cg_root(), name, vm);
    kill_members(procs);
}

int scv_cluster_vm_link(const char *name, int vm, int up, scv_err *err)
{
    const char *how = up ? "up" : "down";
    int rc = sh(err, "ip -n scv-%s-%d link set eth0 %s", name, vm, how);
    return rc ? rc : sh(err, "ip -n scv-%s-sw link set p%d %s", name, vm, how);
}

static int mbit_burst(double mbit)
{
    double per_tick = mbit * 125000.0 / 250.0; /* bytes per 4 ms timer tick (HZ=250) */
    int b = (int)(2 * per_tick);
    return b < 16384 ? 16384 : b;
}

int scv_cluster_up(const char *name, const char *spec, const char *types_path, scv_cluster *c,
                   scv_err *err)
{
    memset(c, 0, sizeof *c);
    if (!valid_name(name))
        return scv_err_set(err, SCV_EINVAL, "cluster name '%s': use 1-8 lower-case letters or digits", name);
    int rc = scv_cluster_check(err);
    if (rc) return rc;
    scv_emu_type *types;
    size_t nt;
    if ((rc = scv_emu_types_load(types_path, &types, &nt, err))) return rc;
    snprintf(c->name, sizeof c->name, "%s", name);
    char *list = strdup(spec), *save = NULL;
    for (char *tok = strtok_r(list, ",", &save); tok && !rc; tok = strtok_r(NULL, ",", &save)) {
        char *colon = strrchr(tok, ':');
        long count = colon ? strtol(colon + 1, NULL, 10) : 1;
        if (colon) *colon = 0;
        size_t t = 0;
        while (t < nt && strcmp(types[t].name, tok)) t++;
        if (t == nt) rc = scv_err_set(err, SCV_EINVAL, "--vm %s: not an emulated VM type of %s", tok, types_path);
        else if (count < 1 || c->n + count > SCV_CLUSTER_MAX_VMS)
            rc = scv_err_set(err, SCV_EINVAL, "--vm %s: count must be 1..%d in all", tok, SCV_CLUSTER_MAX_VMS);
        for (long k = 0; !rc && k < count; k++) {
            c->vm[c->n] = types[t];
            c->quota[c->n++] = types[t].cores;
        }
    }
    free(list);
    free(types);
    if (rc) return rc;
    scv_cluster_down(name, NULL); /* stale state of a crashed run */
    /* a free subnet */
    char names[4096];
    scv_cluster_list(names, sizeof names);
    int used[256] = {0};
    for (char *t = strtok(names, "\n"); t; t = strtok(NULL, "\n")) {
        scv_cluster o;
        if (!scv_cluster_load(t, &o, NULL)) used[o.subnet & 255] = 1;
    }
    for (c->subnet = 1; c->subnet < 255 && used[c->subnet]; c->subnet++) {}
    mkdir("/run/scavenger", 0755);
    mkdir(STATE_DIR, 0755);
    if ((rc = save_state(c, err))) return rc;
    const char *cg = cg_root();
    char path[512];
    snprintf(path, sizeof path, "%s/scavenger", cg);
    mkdir(path, 0755);
    (void)((rc = sh(err, "ip netns add scv-%s-sw", name)) ||
           (rc = sh(err, "ip -n scv-%s-sw link add br0 type bridge", name)) ||
           (rc = sh(err, "ip -n scv-%s-sw link set br0 up", name)));
    for (int i = 1; !rc && i <= c->n; i++) {
        const scv_emu_type *t = &c->vm[i - 1];
        int burst = mbit_burst(t->bandwidth_mbit);
        (void)((rc = sh(err, "ip netns add scv-%s-%d", name, i)) ||
               (rc = sh(err, "ip link add eth0 netns scv-%s-%d type veth peer name p%d netns scv-%s-sw",
                        name, i, i, name)) ||
               (rc = sh(err, "ip -n scv-%s-sw link set p%d master br0 up", name, i)) ||
               (rc = sh(err, "ip -n scv-%s-%d addr add 10.213.%d.%d/24 dev eth0", name, i, c->subnet, i)) ||
               (rc = sh(err, "ip -n scv-%s-%d link set eth0 up", name, i)) ||
               (rc = sh(err, "ip -n scv-%s-%d link set lo up", name, i)) ||
               (rc = sh(err, "tc -n scv-%s-%d qdisc add dev eth0 root tbf rate %.0fkbit burst %d latency 50ms",
                        name, i, t->bandwidth_mbit * 1000, burst)) ||
               (rc = sh(err, "tc -n scv-%s-sw qdisc add dev p%d root tbf rate %.0fkbit burst %d latency 50ms",
                        name, i, t->bandwidth_mbit * 1000, burst)));
        if (rc) break;
        snprintf(path, sizeof path, "%s/scavenger/%s-%d", cg, name, i);
        if (mkdir(path, 0755) != 0 && errno != EEXIST) {
            rc = scv_err_set(err, SCV_EIO, "%s: cannot create the CPU cgroup: %s", path, strerror(errno));
            break;
        }
        rc = scv_cluster_throttle(name, i, t->cores, err);
    }
    if (rc) scv_cluster_down(name, NULL);
    return rc;
}

int scv_cluster_throttle(const char *name, int vm, double cores, scv_err *err)
{
    scv_cluster c;
    int rc = scv_cluster_load(name, &c, err);
    if (rc) return rc;
    if (vm < 1 || vm > c.n) return scv_err_set(err, SCV_EINVAL, "cluster %s has VMs 1..%d, not %d", name, c.n, vm);
    if (!(cores >= 1000.0 / PERIOD_US) || cores > 256) /* the kernel's least quota is 1 ms a period */
        return scv_err_set(err, SCV_EINVAL, "quota %g: must be in [%g, 256] cores", cores, 1000.0 / PERIOD_US);
    char path[512], val[64];
    snprintf(path, sizeof path, "%s/scavenger/%s-%d/cpu.cfs_period_us", cg_root(), name, vm);
    snprintf(val, sizeof val, "%d", PERIOD_US);
    if (write_file(path, val)) return scv_err_set(err, SCV_EIO, "%s: %s", path, strerror(errno));
    snprintf(path, sizeof path, "%s/scavenger/%s-%d/cpu.cfs_quota_us", cg_root(), name, vm);
    snprintf(val, sizeof val, "%.0f", cores * PERIOD_US);
    if (write_file(path, val)) return scv_err_set(err, SCV_EIO, "%s: %s", path, strerror(errno));
    c.quota[vm - 1] = cores;
    return save_state(&c, err);
}

int scv_cluster_enter(const scv_cluster *c, int vm, scv_err *err)
{
    char path[512], pid[32];
    if (scv_cluster_vm_state(c->name, vm, NULL) == SCV_VM_PREEMPTED) /* stat only: safe after fork */
        return scv_err_set(err, SCV_EINVAL, "VM %s-%d is preempted (scavenger cluster restore %s %d)", c->name,
                           vm, c->name, vm);
    /* where a preemption notice for this VM appears (docs/CLUSTER.md "Preemptions") */
    if (scv_cluster_vm_dir(c->name, vm, 0, path, sizeof path, err) == SCV_OK) {
        char file[600];
        snprintf(file, sizeof file, "%s/" SCV_PREEMPT_NOTICE_FILE, path);
        setenv(SCV_PREEMPT_NOTICE_ENV, file, 1);
    }
    snprintf(path, sizeof path, "%s/scavenger/%s-%d/cgroup.procs", cg_root(), c->name, vm);
    snprintf(pid, sizeof pid, "%ld", (long)getpid());
    if (write_file(path, pid)) return scv_err_set(err, SCV_EIO, "%s: cannot join: %s", path, strerror(errno));
    snprintf(path, sizeof path, "/var/run/netns/scv-%s-%d", c->name, vm);
    int fd = open(path, O_RDONLY);
    if (fd < 0 || setns(fd, CLONE_NEWNET) != 0) {
        int e = errno;
        if (fd >= 0) close(fd);
        return scv_err_set(err, SCV_EIO, "%s: cannot enter: %s", path, strerror(e));
    }
    close(fd);
    char host[64];
    snprintf(host, sizeof host, "%s-%d", c->name, vm);
    if (unshare(CLONE_NEWUTS) != 0 || sethostname(host, strlen(host)) != 0)
        return scv_err_set(err, SCV_EIO, "cannot set the VM's host name: %s", strerror(errno));
    return SCV_OK;
}

int scv_cluster_by_host(const char *host, scv_cluster *out, int *vm, scv_err *err)
{
    int s, i;
    char names[4096];
    if (sscanf(host, "10.213.%d.%d", &s, &i) != 2)
        return scv_err_set(err, SCV_EINVAL, "%s: not an address of an emulated cluster", host);
    scv_cluster_list(names, sizeof names);
    for (char *t = strtok(names, "\n"); t; t = strtok(NULL, "\n"))
        if (!scv_cluster_load(t, out, NULL) && out->subnet == s && i >= 1 && i <= out->n) {
            *vm = i;
            return SCV_OK;
        }
    return scv_err_set(err, SCV_ENOTFOUND, "%s: no emulated VM has this address", host);
}
