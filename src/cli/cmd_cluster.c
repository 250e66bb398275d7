/*
 * cmd_cluster.c - `scavenger cluster up|down|status|throttle|exec|agent`: the emulated
 * cloud cluster (src/runtime/cluster.c). `agent` is the rsh agent mpirun uses to start its
 * daemons inside the emulated VMs; users do not call it.
 */
#define _POSIX_C_SOURCE 200809L
#include "cli.h"
#include "cli/opt.h"
#include "scv.h"
#include "../core/util.h"
#include "../runtime/cluster.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define CLUSTER_USAGE                                                                         \
    "usage: scavenger cluster up --name NAME --vm TYPE:COUNT[,TYPE:COUNT...] [--types CSV]\n" \
    "       scavenger cluster down --name NAME\n"                                            \
    "       scavenger cluster status [--json]\n"                                             \
    "       scavenger cluster throttle NAME VM CORES\n"                                       \
    "       scavenger cluster exec NAME VM -- COMMAND [ARGS...]\n"

enum { C_NAME = 1, C_VM, C_TYPES, C_JSON };
/* the options of up, down and status (--help and the completion are made from it) */
const scv_option CLUSTER_OPTIONS[] = {
    {"name", "NAME", "the cluster (up, down)", C_NAME, 0, NULL},
    {"vm", "TYPE:COUNT[,...]", "its VMs (up): types of data/emulated-vms.csv", C_VM, 0, NULL},
    {"types", "CSV", "the emulated VM types (default data/emulated-vms.csv)", C_TYPES, 0, NULL},
    {"json", NULL, "status as JSON", C_JSON, 0, NULL},
    {NULL, NULL, NULL, 0, 0, NULL},
};

static void help(void)
{
    printf(CLUSTER_USAGE
           "\nTurns this machine into a small emulated cloud: one network namespace per VM with a\n"
           "bandwidth limit each way (tc tbf) and a CPU quota (cgroup v1 cpu). VM types come\n"
           "from data/emulated-vms.csv, each standing for the catalog type of the same name\n"
           "scaled down by one factor. Needs root. train and run use it by its NAME (their cluster\n"
           "option) and run MPI across it.\n"
           "`throttle` changes a VM's CPU quota (in host cores) while a job runs (a straggler).\n\n");
    cli_opt_help(stdout, CLUSTER_OPTIONS, 24, 0);
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

int cmd_cluster(int argc, char **argv)
{
    if (argc < 2) return usage("missing subcommand");
    const char *sub = argv[1];
    if (!strcmp(sub, "-h") || !strcmp(sub, "--help")) {
        help();
        return EXIT_OK;
    }
    scv_err err = {0};
    const char *name = NULL, *spec = NULL, *types = NULL;
    int json = 0;
    if (!strcmp(sub, "up") || !strcmp(sub, "down") || !strcmp(sub, "status")) {
        for (int i = 2; i < argc; i++) {
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
            if (o->id == C_JSON) json = 1;
            else if (o->id == C_NAME) name = argv[++i];
            else if (o->id == C_VM) spec = argv[++i];
            else types = argv[++i];
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
    if (!strcmp(sub, "status")) {
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
                if (json)
                    printf("%s{\"cluster\":\"%s\",\"vm\":%d,\"type\":\"%s\",\"address\":\"%s\","
                           "\"cores\":%g,\"bandwidth_mbit\":%g,\"present\":%s}",
                           first ? "" : ",", c.name, i, c.vm[i - 1].name, a, c.quota[i - 1],
                           c.vm[i - 1].bandwidth_mbit, alive ? "true" : "false");
                else
                    printf("%s-%d  %-12s %s  %.2f cores  %.0f Mbit/s%s\n", c.name, i, c.vm[i - 1].name, a,
                           c.quota[i - 1], c.vm[i - 1].bandwidth_mbit, alive ? "" : "  (namespace missing)");
                first = 0;
            }
        }
        if (json) printf("]\n");
        else if (first) printf("no emulated cluster\n");
        return EXIT_OK;
    }
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
