/*
 * cmd_cluster.c - `scavenger cluster up|down|status|throttle|exec|mpirun|agent|preempt|
 * restore|replay`: the emulated cloud cluster (src/runtime/cluster.c), its emulated
 * preemptions (src/runtime/preempt.c), and a command run as MPI ranks across it
 * (src/runtime/launch.c). `agent` is the rsh agent mpirun uses to start its daemons inside
 * the emulated VMs; users do not call it.
 */
#define _POSIX_C_SOURCE 200809L
#include "cli.h"
#include "cli/opt.h"
#include "scv.h"
#include "../core/util.h"
#include "../runtime/cluster.h"
#include "../runtime/launch.h"

#include <math.h>
#include <signal.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define CLUSTER_USAGE                                                                                                  \
    "usage: scavenger cluster up --name NAME --vm TYPE:COUNT[,TYPE:COUNT...] [--types CSV]\n"                          \
    "       scavenger cluster down --name NAME\n"                                                                      \
    "       scavenger cluster status [--json]\n"                                                                       \
    "       scavenger cluster throttle NAME VM CORES\n"                                                                \
    "       scavenger cluster exec NAME VM -- COMMAND [ARGS...]\n"                                                     \
    "       scavenger cluster mpirun NAME K -- COMMAND [ARGS...]\n"                                                    \
    "       scavenger cluster preempt NAME VM [--notice S] [--wait]\n"                                                 \
    "       scavenger cluster restore NAME VM\n"                                                                       \
    "       scavenger cluster replay NAME (--trace FILE | --random SEED --mean-life S\n"                               \
    "                --horizon S [--notice S] [--down S] [--vms LIST]) [--save FILE] [--dry-run]\n"

enum { C_NAME = 1, C_VM, C_TYPES, C_JSON, C_NOTICE, C_WAIT, C_TRACE, C_RANDOM, C_MEANLIFE, C_DOWN, C_HORIZON,
       C_VMS, C_SAVE, C_DRYRUN };
/* The numbers the options give (each read as its row says, a bad one a usage error). */
typedef struct cluster_nums {
    double notice, mean_life, down, horizon;
    int64_t seed;
} cluster_nums;
#define NUM(m, lo, hi, b) {SCV_VT_DBL, lo, hi, b, offsetof(cluster_nums, m), 0, 0, NULL}

/* the options of the subcommands (--help and the completion are made from it) */
const scv_option CLUSTER_OPTIONS[] = {
    {"name", "NAME", "the cluster (up, down)", C_NAME, 0, NULL, {0}},
    {"vm", "TYPE:COUNT[,...]", "its VMs (up): types of data/emulated-vms.csv", C_VM, 0, NULL, {0}},
    {"types", "CSV", "the emulated VM types (default data/emulated-vms.csv)", C_TYPES, 0, NULL, {0}},
    {"json", NULL, "status as JSON", C_JSON, 0, NULL, {0}},
    {"notice", "S", "preempt: seconds of notice before the VM goes (default 30;\n0: no notice)."
                    " replay --random: each preemption's notice", C_NOTICE, 0, NULL, NUM(notice, 0, SCV_PREEMPT_MAX_NOTICE_S, 0)},
    {"wait", NULL, "preempt: return only once the VM is down", C_WAIT, 0, NULL, {0}},
    {"trace", "FILE", "replay: lines SECONDS VM notice[:S]|kill|restore", C_TRACE, 0, NULL, {0}},
    {"random", "SEED", "replay: draw the trace from this seed (exponential lifetimes)", C_RANDOM, 0, NULL, {SCV_VT_I64, 0, 9223372036854775807.0, 0, offsetof(cluster_nums, seed), 0, 0, NULL}},
    {"mean-life", "S", "replay --random: mean lifetime of a VM to its notice", C_MEANLIFE, 0, NULL, NUM(mean_life, 0, INFINITY, SCV_VB_OPEN_LO)},
    {"down", "S", "replay --random: time from a take-down to the restore (default 60)", C_DOWN, 0, NULL, NUM(down, 0, INFINITY, SCV_VB_OPEN_LO)},
    {"horizon", "S", "replay --random: no event drawn from this time on", C_HORIZON, 0, NULL, NUM(horizon, 0, INFINITY, SCV_VB_OPEN_LO)},
    {"vms", "LIST", "replay --random: the VMs that can be preempted (default all)", C_VMS, 0, NULL, {0}},
    {"save", "FILE", "replay: write the trace replayed (to keep a drawn one)", C_SAVE, 0, NULL, {0}},
    {"dry-run", NULL, "replay: print the trace and stop", C_DRYRUN, 0, NULL, {0}},
    {NULL, NULL, NULL, 0, 0, NULL, {0}},
};

/* which subcommand takes which option */
static int option_for(int id, const char *sub)
{
    if (id <= C_JSON) return !strcmp(sub, "up") || !strcmp(sub, "down") || !strcmp(sub, "status");
    if (id == C_NOTICE) return !strcmp(sub, "preempt") || !strcmp(sub, "replay");
    if (id == C_WAIT) return !strcmp(sub, "preempt");
    return !strcmp(sub, "replay");
}

static volatile sig_atomic_t stop_replay;
static void on_stop(int sig)
{
    (void)sig;
    stop_replay = 1;
}

static void help(void)
{
    printf(CLUSTER_USAGE "\nTurns this machine into a small emulated cloud: one network namespace per VM with a\n"
                         "bandwidth limit each way (tc tbf) and a CPU quota (cgroup v1 cpu). VM types come\n"
                         "from data/emulated-vms.csv, each standing for the catalog type of the same name\n"
                         "scaled down by one factor. Needs root. train and run use it by its NAME (their cluster\n"
                         "option) and run MPI across it.\n"
                         "`throttle` changes a VM's CPU quota (in host cores) while a job runs (a straggler).\n"
                         "`preempt` takes a VM away as a cloud does: a notice first (the file named by\n"
                         "$SCV_PREEMPT_NOTICE_FILE in the VM's processes), then its processes killed and its\n"
                         "link down; `restore` brings it back in place; `replay` plays a preemption trace in\n"
                         "real time. See docs/CLUSTER.md \"Preemptions\".\n"
                         "`mpirun` runs COMMAND as K MPI ranks, one on each of the first K VMs, as train and\n"
                         "run launch theirs: a trainer under docs/TRAINER-CONTRACT.md outside run, say. The\n"
                         "ranks get its SCV_* variables, SCV_MASTER_ADDR and MASTER_ADDR set to rank 0's VM,\n"
                         "MASTER_PORT to SCV_MASTER_PORT and GLOO_SOCKET_IFNAME to the VMs' interface. SIGINT\n"
                         "or SIGTERM stops the ranks (SIGUSR1); its exit status is the first failing rank's.\n\n");
    cli_opt_help(stdout, CLUSTER_OPTIONS, 24, 0);
}

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    return ts.tv_sec + 1e-9 * ts.tv_nsec;
}

/* VM as "I" or "NAME-I" */
static int parse_vm(const char *name, const char *s, int *vm)
{
    int64_t v;
    size_t len = strlen(name);
    if (!strncmp(s, name, len) && s[len] == '-') s += len + 1;
    if (scv_parse_i64(s, &v) || v < 1 || v > SCV_CLUSTER_MAX_VMS) return -1;
    *vm = (int)v;
    return 0;
}

static int fail(scv_err *err)
{
    fprintf(stderr, "scavenger cluster: %s\n", err->msg);
    return EXIT_FAIL;
}

static int usage(const char *what)
{
    fprintf(stderr, "scavenger cluster: %s\n" CLUSTER_USAGE, what);
    return EXIT_USAGE;
}

/* The settings of a `cluster` subcommand, as parsed. */
typedef struct cluster_args {
    const char *sub, *name, *spec, *types;
    const char *pos[3], *val[C_DRYRUN + 1];
    int json, npos, wait, dry;
    cluster_nums num;
} cluster_args;

/* `cluster mpirun NAME K -- COMMAND [ARGS...]`: COMMAND as K ranks on the cluster's VMs,
 * with the caller's SCV_* variables (mpirun -x: what a rank on another machine would need)
 * and the rendezvous's (see help). */
static int cluster_mpirun(int argc, char **argv)
{
    extern char **environ;
    int64_t k;
    if (argc < 6 || strcmp(argv[4], "--")) return usage("mpirun needs NAME K -- COMMAND");
    if (scv_parse_i64(argv[3], &k) || k < 1 || k > SCV_CLUSTER_MAX_VMS) return usage("K must be a whole number of VMs");
    scv_err err = {0};
    scv_launch l = {
        .workers = (int)k, .threads = 1, .program = argv[5], .argv = argv + 6, .argc = argc - 6, .cluster = argv[2]};
    char addr[64], v_addr[96];
    if (scv_launch_rank0_addr(&l, addr, sizeof addr, &err)) return fail(&err);
    int64_t port = 29500; /* torchrun's default */
    if (getenv("SCV_MASTER_PORT") && (scv_parse_i64(getenv("SCV_MASTER_PORT"), &port) || port < 1 || port > 65535))
        return usage("SCV_MASTER_PORT must be a port number (1..65535)");
    snprintf(v_addr, sizeof v_addr, "SCV_MASTER_ADDR=%s", addr);
    size_t n = 0;
    for (char **e = environ; *e; e++) n++;
    const char **env = calloc(n + 2 + SCV_LAUNCH_RDV_VARS, sizeof *env);
    if (!env) return EXIT_FAIL;
    size_t m = 0;
    for (char **e = environ; *e; e++)
        if (!strncmp(*e, "SCV_", 4) && strncmp(*e, "SCV_MASTER_ADDR=", 16)) env[m++] = *e;
    env[m++] = v_addr;
    scv_launch_rdv rdv;
    m += (size_t)scv_launch_rendezvous_env(&l, addr, (int)port, &rdv, env + m);
    l.env = env;
    int status = 0, rc = scv_launch_mpirun(&l, &status, &err);
    free(env);
    if (rc) return fail(&err);
    return status;
}

/* `cluster status`: every emulated VM, its state (up, under notice, preempted). */
static int cluster_status(const cluster_args *a)
{
    scv_err err = {0};
    int json = a->json;
    char names[4096];
    scv_cluster_list(names, sizeof names);
    if (json) printf("[");
    int first = 1;
    for (char *t = strtok(names, "\n"); t; t = strtok(NULL, "\n")) {
        scv_cluster c;
        if (scv_cluster_load(t, &c, &err)) continue;
        for (int i = 1; i <= c.n; i++) {
            char a[32], ns[96];
            scv_cluster_addr(&c, i, a, sizeof a);
            snprintf(ns, sizeof ns, "/var/run/netns/scv-%s-%d", c.name, i);
            int alive = access(ns, F_OK) == 0;
            double at;
            scv_vm_state st = scv_cluster_vm_state(c.name, i, &at);
            static const char *const state_name[] = {"up", "notice", "preempted"};
            char pre[96] = "";
            if (st == SCV_VM_NOTICE) snprintf(pre, sizeof pre, "  (preemption notice: goes in %.0f s)", at - now_s());
            else if (st == SCV_VM_PREEMPTED) snprintf(pre, sizeof pre, "  (preempted %.0f s ago)", now_s() - at);
            if (json)
                printf("%s{\"cluster\":\"%s\",\"vm\":%d,\"type\":\"%s\",\"address\":\"%s\","
                       "\"cores\":%g,\"bandwidth_mbit\":%g,\"present\":%s,\"state\":\"%s\"",
                       first ? "" : ",", c.name, i, c.vm[i - 1].name, a, c.quota[i - 1],
                       c.vm[i - 1].bandwidth_mbit, alive ? "true" : "false", state_name[st]);
            if (json && st != SCV_VM_UP && isfinite(at)) printf(",\"state_at\":%.3f", at);
            if (json) printf("}");
            else
                printf("%s-%d  %-12s %s  %.2f cores  %.0f Mbit/s%s%s\n", c.name, i, c.vm[i - 1].name, a,
                       c.quota[i - 1], c.vm[i - 1].bandwidth_mbit, alive ? "" : "  (namespace missing)", pre);
            first = 0;
        }
    }
    if (json) printf("]\n");
    else if (first) printf("no emulated cluster\n");
    return EXIT_OK;
}

/* `cluster preempt NAME VM [--notice S] [--wait]` and `cluster restore NAME VM`. */
static int cluster_preempt_restore(const cluster_args *a)
{
    scv_err err = {0};
    const char *sub = a->sub, *const *pos = a->pos, *const *val = a->val;
    int npos = a->npos, wait = a->wait;
    int vm;
    if (npos != 2) return usage(!strcmp(sub, "preempt") ? "preempt needs NAME VM" : "restore needs NAME VM");
    if (parse_vm(pos[0], pos[1], &vm)) return usage("VM must be a VM number (or NAME-NUMBER)");
    if (!strcmp(sub, "restore")) {
        if (scv_cluster_restore(pos[0], vm, &err)) return fail(&err);
        printf("%s-%d restored\n", pos[0], vm);
        return EXIT_OK;
    }
    double notice = val[C_NOTICE] ? a->num.notice : SCV_PREEMPT_POLICY.default_notice_s;
    if (scv_cluster_preempt(pos[0], vm, notice, 0, &err)) return fail(&err);
    if (notice > 0) {
        char dir[300];
        scv_cluster_vm_dir(pos[0], vm, 0, dir, sizeof dir, NULL);
        printf("%s-%d: notice given (%s/" SCV_PREEMPT_NOTICE_FILE "); it goes in %g s\n", pos[0], vm, dir, notice);
    }
    fflush(stdout);
    if (notice == 0 || wait) {
        if (scv_cluster_vm_wait(pos[0], vm, notice + 60) != SCV_VM_PREEMPTED) {
            fprintf(stderr, "scavenger cluster: %s-%d was restored before its notice ended\n", pos[0], vm);
            return EXIT_FAIL;
        }
        printf("%s-%d preempted: its processes killed, its link down\n", pos[0], vm);
    }
    return EXIT_OK;
}

/* `cluster replay NAME (--trace FILE | --random ...) [--save FILE] [--dry-run]`. */
static int cluster_replay(const cluster_args *a)
{
    scv_err err = {0};
    const char *const *pos = a->pos, *const *val = a->val;
    int npos = a->npos, dry = a->dry;
    if (npos != 1) return usage("replay needs NAME");
    if (!val[C_TRACE] == !val[C_RANDOM]) return usage("replay needs --trace FILE or --random SEED");
    if (val[C_TRACE] && (val[C_MEANLIFE] || val[C_HORIZON] || val[C_DOWN] || val[C_VMS] || val[C_NOTICE]))
        return usage("--mean-life, --horizon, --notice, --down and --vms go with --random, not --trace");
    scv_cluster c;
    int have = scv_cluster_load(pos[0], &c, &err) == SCV_OK;
    if (!have && !dry) return fail(&err);
    scv_preempt_event *ev = NULL;
    size_t n = 0;
    scv_preempt_random rnd = {0};
    int *vms = NULL, rc = SCV_OK;
    if (val[C_TRACE]) rc = scv_preempt_trace_read(val[C_TRACE], have ? c.n : 0, &ev, &n, &err);
    else {
        if (!val[C_MEANLIFE] || !val[C_HORIZON]) return usage("--random needs --mean-life S and --horizon S");
        rnd.seed = (uint64_t)a->num.seed; /* each value read (and checked) with its option */
        rnd.mean_life_s = a->num.mean_life, rnd.horizon_s = a->num.horizon;
        rnd.notice_s = val[C_NOTICE] ? a->num.notice : SCV_PREEMPT_POLICY.default_notice_s;
        rnd.down_s = val[C_DOWN] ? a->num.down : SCV_PREEMPT_POLICY.default_down_s;
        if (!val[C_VMS] && !have) return usage("replay --dry-run without the cluster needs --vms LIST");
        char all[32];
        snprintf(all, sizeof all, "1..%d", have ? c.n : SCV_CLUSTER_MAX_VMS);
        long nv = scv_parse_int_set(val[C_VMS] ? val[C_VMS] : all, 0, 1, have ? c.n : SCV_CLUSTER_MAX_VMS, &vms, &err);
        if (nv < 0) {
            fprintf(stderr, "scavenger cluster: --vms: %s\n", err.msg);
            return EXIT_USAGE;
        }
        rnd.vms = vms;
        rnd.n_vms = (int)nv;
        rc = scv_preempt_trace_random(&rnd, &ev, &n, &err);
    }
    if (!rc && val[C_SAVE]) {
        FILE *f = fopen(val[C_SAVE], "w");
        if (!f) rc = scv_err_set(&err, SCV_EIO, "--save %s: cannot write", val[C_SAVE]);
        else {
            scv_preempt_trace_write(f, val[C_RANDOM] ? &rnd : NULL, ev, n);
            if (fclose(f)) rc = scv_err_set(&err, SCV_EIO, "--save %s: write failed", val[C_SAVE]);
        }
    }
    if (!rc && dry) scv_preempt_trace_write(stdout, val[C_RANDOM] ? &rnd : NULL, ev, n);
    else if (!rc) {
        struct sigaction sa;
        memset(&sa, 0, sizeof sa);
        sa.sa_handler = on_stop;
        sigaction(SIGINT, &sa, NULL);
        sigaction(SIGTERM, &sa, NULL);
        rc = scv_preempt_replay(pos[0], ev, n, &stop_replay, stderr, &err);
    }
    free(ev);
    free(vms);
    if (rc) return fail(&err);
    return EXIT_OK;
}

int cmd_cluster(int argc, char **argv)
{
    if (argc < 2) return usage("missing subcommand");
    const char *sub = argv[1];
    if (!strcmp(sub, "-h") || !strcmp(sub, "--help")) {
        help();
        return EXIT_OK;
    }
    scv_err err = {0};
    cluster_args A = {.sub = sub};
    const char *name = NULL, *spec = NULL, *types = NULL;
    if (!strcmp(sub, "up") || !strcmp(sub, "down") || !strcmp(sub, "status") || !strcmp(sub, "preempt") ||
        !strcmp(sub, "restore") || !strcmp(sub, "replay")) {
        for (int i = 2; i < argc; i++) {
            if (argv[i][0] != '-' && strcmp(sub, "up") && strcmp(sub, "down") && strcmp(sub, "status")) {
                if (A.npos == 2) return usage("too many arguments");
                A.pos[A.npos++] = argv[i];
                continue;
            }
            if (!strcmp(argv[i], "--help") || !strcmp(argv[i], "-h")) {
                help();
                return EXIT_OK;
            }
            const scv_option *o = !strncmp(argv[i], "--", 2) ? cli_opt_find(CLUSTER_OPTIONS, argv[i] + 2) : NULL;
            if (!o || (o->arg && i + 1 >= argc)) {
                char m[400];
                const char *near = !o && !strncmp(argv[i], "--", 2) ? cli_nearest_option("cluster", argv[i] + 2) : NULL;
                snprintf(m, sizeof m, "%s option '%.200s'%s%s%s", o ? "incomplete" : "unknown", argv[i],
                         near ? "; did you mean '--" : "", near ? near : "", near ? "'?" : "");
                return usage(m);
            }
            if (!option_for(o->id, sub)) {
                char m[200];
                snprintf(m, sizeof m, "--%s is not an option of '%s'", o->name, sub);
                return usage(m);
            }
            if (o->id == C_JSON) A.json = 1;
            else if (o->id == C_WAIT) A.wait = 1;
            else if (o->id == C_DRYRUN) A.dry = 1;
            else if (o->id == C_NAME) name = argv[++i];
            else if (o->id == C_VM) spec = argv[++i];
            else if (o->id == C_TYPES) types = argv[++i];
            else if (o->v.type && scv_option_read(o, &A.num, argv[i + 1], &err)) return usage(err.msg);
            else A.val[o->id] = argv[++i];
        }
    }
    if (!strcmp(sub, "up")) {
        if (!name || !spec) return usage("up needs --name and --vm");
        char buf[4200];
        if (!types) types = scv_default_data_file("emulated-vms.csv", buf, sizeof buf);
        scv_cluster c;
        if (scv_cluster_up(name, spec, types, &c, &err)) return fail(&err);
        for (int i = 1; i <= c.n; i++) {
            char a[32];
            scv_cluster_addr(&c, i, a, sizeof a);
            printf("%s-%d  %-12s %s  %.2f cores  %.0f Mbit/s each way  (stands for %s)\n", name, i,
                   c.vm[i - 1].name, a, c.quota[i - 1], c.vm[i - 1].bandwidth_mbit,
                   c.vm[i - 1].catalog_type);
        }
        return EXIT_OK;
    }
    if (!strcmp(sub, "down")) {
        if (!name) return usage("down needs --name");
        if (scv_cluster_down(name, &err) || err.msg[0]) return fail(&err);
        return EXIT_OK;
    }
    if (!strcmp(sub, "status")) return cluster_status(&A);
    if (!strcmp(sub, "throttle")) {
        if (argc != 5) return usage("throttle needs NAME VM CORES");
        int64_t vm;
        double cores;
        if (scv_parse_i64(argv[3], &vm) || scv_parse_f64(argv[4], &cores)) return usage("VM must be an integer and CORES a number");
        if (scv_cluster_throttle(argv[2], (int)vm, cores, &err)) return fail(&err);
        return EXIT_OK;
    }
    if (!strcmp(sub, "exec")) {
        if (argc < 6 || strcmp(argv[4], "--")) return usage("exec needs NAME VM -- COMMAND");
        int64_t vm;
        scv_cluster c;
        if (scv_parse_i64(argv[3], &vm)) return usage("VM must be an integer");
        if (scv_cluster_load(argv[2], &c, &err)) return fail(&err);
        if (vm < 1 || vm > c.n) return usage("no such VM in this cluster");
        if (scv_cluster_enter(&c, (int)vm, &err)) return fail(&err);
        execvp(argv[5], argv + 5);
        perror("scavenger cluster exec");
        return 127;
    }
    if (!strcmp(sub, "mpirun")) return cluster_mpirun(argc, argv);
    if (!strcmp(sub, "preempt") || !strcmp(sub, "restore")) return cluster_preempt_restore(&A);
    if (!strcmp(sub, "replay")) return cluster_replay(&A);
    if (!strcmp(sub, "agent")) {
        /* mpirun calls: AGENT [options] HOST COMMAND...; run COMMAND inside HOST's VM */
        int i = 2;
        while (i < argc && argv[i][0] == '-') i++;
        if (i + 1 >= argc) return usage("agent needs HOST COMMAND");
        scv_cluster c;
        int vm;
        if (scv_cluster_by_host(argv[i], &c, &vm, &err) || scv_cluster_enter(&c, vm, &err)) return fail(&err);
        size_t len = 0;
        for (int j = i + 1; j < argc; j++) len += strlen(argv[j]) + 1;
        char *cmd = malloc(len + 1);
        if (!cmd) return EXIT_FAIL;
        cmd[0] = 0;
        for (int j = i + 1; j < argc; j++) {
            strcat(cmd, argv[j]);
            if (j + 1 < argc) strcat(cmd, " ");
        }
        execl("/bin/sh", "sh", "-c", cmd, (char *)NULL);
        perror("scavenger cluster agent");
        return 127;
    }
    return usage("unknown subcommand");
}
