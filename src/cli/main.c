/*
 * main.c - `scavenger <command> [options]`: the command table and global options, and the
 * small helpers the commands share (usage errors, choices, data files).
 */
#define _POSIX_C_SOURCE 200809L
#include "cli.h"
#include "scv.h"

#include <errno.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <stdio.h>
#include <string.h>

static const struct cmd {
    const char *name;
    int (*fn)(int, char **);
    const char *summary;
} cmds[] = {
    {"run", cmd_run, "the Scavenger loop: search (K, B) online, choose, train to the target"},
    {"runs", cmd_runs, "list the stored runs, or show one (`runs show ID`)"},
    {"train", cmd_train, "synchronous data-parallel SGD on K MPI workers with global batch B"},
    {"profile", cmd_profile, "summarise the trainer's metrics per configuration"},
    {"cluster", cmd_cluster, "an emulated cloud cluster on this machine (namespaces, tc, cgroups)"},
    {"sweep", cmd_sweep, "train every (K, B) to the target: measured time and cost (ground truth)"},
    {"plan", cmd_plan, "predict time and cost of every (VM, K, B) from measurements; pick one"},
    {"serve", cmd_serve, "the service: a JSON API and a live dashboard over the run store"},
};


int cli_choice(const char *value, const char *const *names)
{
    for (int i = 0; value && names[i]; i++)
        if (!strcmp(value, names[i])) return i;
    return -1;
}

int cli_usage_error(const char *cmd, const char *usage_text, const char *fmt, const char *arg)
{
    fprintf(stderr, "scavenger %s: ", cmd);
    fprintf(stderr, fmt, arg);
    fprintf(stderr, "\n%sTry 'scavenger %s --help'.\n", usage_text, cmd);
    return EXIT_USAGE;
}

/* data/NAME from the working directory, else beside the executable, else where `make
 * install` put it (scv_data_file, src/core/datadir.c) */
const char *scv_default_data_file(const char *name, char *buf, size_t cap)
{
    return scv_data_file(name, buf, cap);
}

/* $XDG_DATA_HOME/scavenger/scavenger.db, else ~/.local/share/scavenger/scavenger.db; with
 * neither set (as absolute paths) there is no default: never a shared place like /tmp,
 * where anyone could plant or read the database. */
int cli_default_db(char *buf, size_t cap, scv_err *err)
{
    const char *x = getenv("XDG_DATA_HOME"), *h = getenv("HOME");
    char base[900];
    if (x && x[0] == '/') snprintf(base, sizeof base, "%s/scavenger", x);
    else if (h && h[0] == '/') snprintf(base, sizeof base, "%s/.local/share/scavenger", h);
    else
        return scv_err_set(err, SCV_EINVAL, "no default database: HOME and XDG_DATA_HOME are not set (as "
                           "absolute paths); give --db PATH, or set HOME or XDG_DATA_HOME");
    char tmp[900];
    snprintf(tmp, sizeof tmp, "%s", base);
    for (char *p = tmp + 1;; p++)
        if (*p == '/' || !*p) {
            char c = *p;
            *p = 0;
            if (mkdir(tmp, 0755) && errno != EEXIST)
                return scv_err_set(err, SCV_EIO, "%s: cannot create: %s", tmp, strerror(errno));
            if (!(*p = c)) break;
        }
    snprintf(buf, cap, "%s/scavenger.db", base);
    return SCV_OK;
}

static void usage(FILE *f)
{
    fprintf(f, "usage: scavenger <command> [options]\n\n"
               "Scavenger trains data-parallel models, measures them and picks the cheapest or\n"
               "fastest cluster configuration.\n\ncommands:\n");
    for (size_t i = 0; i < sizeof cmds / sizeof cmds[0]; i++)
        fprintf(f, "  %-10s %s\n", cmds[i].name, cmds[i].summary);
    fprintf(f, "\n'scavenger help <command>' (or 'scavenger <command> --help') describes a\n"
               "command's options.\n"
               "  --version  print the version\n");
}

static const struct cmd *find_cmd(const char *name)
{
    for (size_t i = 0; i < sizeof cmds / sizeof cmds[0]; i++)
        if (!strcmp(name, cmds[i].name)) return &cmds[i];
    return NULL;
}

/* Runs a command and reports a failed write of its stdout (a full disk, a closed pipe). */
static int run_cmd(const struct cmd *c, int argc, char **argv)
{
    int rc = c->fn(argc, argv);
    if (fflush(stdout) != 0 || ferror(stdout)) {
        perror("scavenger: write to stdout");
        return EXIT_FAIL;
    }
    return rc;
}

int main(int argc, char **argv)
{
    if (argc < 2) {
        usage(stderr);
        return EXIT_USAGE;
    }
    if (!strcmp(argv[1], "help") && argc > 2) { /* `scavenger help CMD` = `scavenger CMD --help` */
        const struct cmd *c = find_cmd(argv[2]);
        if (!c) {
            fprintf(stderr, "scavenger help: unknown command '%s'\n\n", argv[2]);
            usage(stderr);
            return EXIT_USAGE;
        }
        if (argc > 3) {
            fprintf(stderr, "scavenger help: unexpected argument '%s' (usage: scavenger help "
                            "<command>)\n", argv[3]);
            return EXIT_USAGE;
        }
        char *hargv[] = {argv[2], "--help", NULL};
        return run_cmd(c, 2, hargv);
    }
    if (!strcmp(argv[1], "--help") || !strcmp(argv[1], "-h") || !strcmp(argv[1], "help")) {
        usage(stdout);
        if (fflush(stdout) != 0 || ferror(stdout)) {
            perror("scavenger: write to stdout");
            return EXIT_FAIL;
        }
        return EXIT_OK;
    }
    if (!strcmp(argv[1], "--version")) {
        printf("scavenger %s\n", SCV_VERSION);
        return EXIT_OK;
    }
    const struct cmd *c = find_cmd(argv[1]);
    if (c) return run_cmd(c, argc - 1, argv + 1);
    fprintf(stderr, "scavenger: unknown command '%s'\n\n", argv[1]);
    usage(stderr);
    return EXIT_USAGE;
}
