/*
 * main.c - `scavenger <command> [options]`: the command table and global options, and the
 * small helpers the commands share (usage errors, choices, data files).
 */
#define _POSIX_C_SOURCE 200809L
#include "cli.h"
#include "cli/opt.h"
#include "search/jobopts.h"
#include "runtime/procs.h"
#include "../core/util.h"
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
    {"vms", cmd_vms, "the VM types of the price catalog: vCPUs, memory, GPUs, on-demand and spot prices"},
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
    /* an unknown option: the command's nearest one (its option table's names) */
    const char *near = arg && !strncmp(arg, "--", 2) && (strstr(fmt, "unknown") || strstr(fmt, "unexpected argument"))
                           ? cli_nearest_option(cmd, arg + 2)
                           : NULL;
    if (near) fprintf(stderr, "; did you mean '--%s'?", near);
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

/* ---- files made from the option tables (opt.h): `scavenger help --completion` prints the
 * bash completion's option lists, `scavenger help --man-options CMD` a command's option list
 * of the man page; scripts/gen-options.sh puts them into scripts/scavenger.bash-completion
 * and docs/scavenger.1, and tests/test_options.c checks that the committed files hold them. */

/* the commands whose options are a table: run's are the job's keys and its own */
static const struct {
    const char *cmd;
    const scv_option *own;
    int job;                  /* also every key of the job table */
    const scv_option *passed; /* the options it passes on to another command (completion) */
} TABLES[] = {{"run", RUN_OPTIONS, 1, NULL},
              {"train", TRAIN_OPTIONS, 0, NULL},
              {"plan", PLAN_OPTIONS, 0, NULL},
              {"sweep", SWEEP_OPTIONS, 0, TRAIN_OPTIONS},
              {"serve", SERVE_OPTIONS, 0, NULL},
              {"profile", PROFILE_OPTIONS, 0, NULL},
              {"runs", RUNS_OPTIONS, 0, NULL},
              {"cluster", CLUSTER_OPTIONS, 0, NULL},
              {"vms", VMS_OPTIONS, 0, NULL}};

/* The option of cmd's table (with run's job keys, and what sweep passes on) nearest to
 * word ("workres" -> "workers"; a "=value" left out), or NULL (core/util.h's measure). */
const char *cli_nearest_option(const char *cmd, const char *word)
{
    static const char *names[512];
    char w[128];
    snprintf(w, sizeof w, "%.*s", (int)strcspn(word, "="), word);
    for (size_t i = 0; i < sizeof TABLES / sizeof TABLES[0]; i++) {
        if (strcmp(cmd, TABLES[i].cmd)) continue;
        size_t n = 0;
        const scv_option *ts[3] = {TABLES[i].own, TABLES[i].job ? scv_job_options() : NULL, TABLES[i].passed};
        for (int k = 0; k < 3; k++)
            for (const scv_option *o = ts[k]; o && (o->name || o->help) && n < 511; o++)
                if (o->name) names[n++] = o->name;
        names[n++] = "help";
        return scv_nearest_name(w, names, n);
    }
    return NULL;
}

/* the words of a table as arguments on continued lines */
static void completion_words(const scv_option *t, int *col)
{
    for (; t->name || t->help; t++) {
        if (!t->name || !strcmp(t->name, "help")) continue;
        if (*col + 3 + (int)strlen(t->name) > 96) *col = printf(" \\\n       ") - 3;
        *col += printf(" --%s", t->name);
    }
}

/* "CMD --NAME") the words ;; for each option of t with a fixed set of values */
static void completion_values(const char *cmd, const scv_option *t)
{
    for (; t->name || t->help; t++) {
        const scv_option *x = t->name ? cli_opt_text(t) : NULL;
        if (!x || !x->values) continue;
        printf("    \"%s --%s\") echo '", cmd, t->name);
        for (const char *c = x->values; *c; c++) putchar(*c == '|' ? ' ' : *c);
        printf("' ;;\n");
    }
}

static int gen_completion(void)
{
    printf("# BEGIN generated by `scavenger help --completion` from the option tables: do not edit\n"
           "# The long options of command $2 of binary $1, one a line.\n"
           "_scavenger_opts()\n{\n    case $2 in\n");
    for (size_t i = 0; i < sizeof TABLES / sizeof TABLES[0]; i++) {
        int col = printf("    %s) printf '%%s\\n'", TABLES[i].cmd);
        if (TABLES[i].job) completion_words(scv_job_options(), &col);
        completion_words(TABLES[i].own, &col);
        if (TABLES[i].passed) completion_words(TABLES[i].passed, &col);
        printf(" ;;\n");
    }
    printf("    esac\n}\n"
           "# The values option $2 of command $1 takes, when they are a fixed set.\n"
           "_scavenger_choices()\n{\n    case \"$1 $2\" in\n");
    for (size_t i = 0; i < sizeof TABLES / sizeof TABLES[0]; i++) {
        if (TABLES[i].job) completion_values(TABLES[i].cmd, scv_job_options());
        completion_values(TABLES[i].cmd, TABLES[i].own);
        if (TABLES[i].passed) completion_values(TABLES[i].cmd, TABLES[i].passed);
    }
    printf("    esac\n}\n# END generated by `scavenger help --completion`\n");
    return EXIT_OK;
}

static int gen_man(const char *cmd)
{
    for (size_t i = 0; i < sizeof TABLES / sizeof TABLES[0]; i++) {
        if (strcmp(cmd, TABLES[i].cmd)) continue;
        printf(".\\\" BEGIN generated by `scavenger help --man-options %s`: do not edit\n", cmd);
        if (TABLES[i].job) {
            printf(".TP\n.B Job\nThe options of\n.B train\nthat describe the job:\n");
            int first = 1;
            for (const scv_option *o = scv_job_options(); o->name || o->help; o++)
                if (o->name && (o->flags & SCV_OPT_TRAINER)) {
                    printf("%s.BR \\-\\-", first ? "" : " ,\n");
                    for (const char *c = o->name; *c; c++) printf(*c == '-' ? "\\-" : "%c", *c);
                    first = 0;
                }
            printf(" .\n");
            for (const scv_option *o = scv_job_options(); o->name || o->help; o++)
                if (!(o->flags & SCV_OPT_TRAINER)) {
                    scv_option one[2] = {*o, {NULL, NULL, NULL, 0, 0, NULL, {0}}};
                    cli_opt_man(stdout, one);
                }
        }
        cli_opt_man(stdout, TABLES[i].own);
        printf(".\\\" END generated by `scavenger help --man-options %s`\n", cmd);
        return EXIT_OK;
    }
    fprintf(stderr, "scavenger help --man-options: '%s' has no option table\n", cmd ? cmd : "");
    return EXIT_USAGE;
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

/* The command nearest to a mistyped name (and "help" when with_help), or NULL. */
static const char *nearest_cmd(const char *word, int with_help)
{
    const char *names[sizeof cmds / sizeof cmds[0] + 1];
    size_t n = 0;
    for (; n < sizeof cmds / sizeof cmds[0]; n++) names[n] = cmds[n].name;
    if (with_help) names[n++] = "help";
    return scv_nearest_name(word, names, n);
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
    if (!strcmp(argv[1], "help") && argc == 3 && !strcmp(argv[2], "--completion")) return gen_completion();
    if (!strcmp(argv[1], "help") && argc == 4 && !strcmp(argv[2], "--man-options")) return gen_man(argv[3]);
    if (!strcmp(argv[1], "help") && argc > 2) { /* `scavenger help CMD` = `scavenger CMD --help` */
        const struct cmd *c = find_cmd(argv[2]);
        if (!c) {
            const char *near = nearest_cmd(argv[2], 0);
            fprintf(stderr, "scavenger help: unknown command '%s'%s%s%s\n\n", argv[2], near ? "; did you mean '" : "",
                    near ? near : "", near ? "'?" : "");
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
    /* internal, not listed: the exec driver's rank program (src/runtime/rankguard.c) */
    if (!strcmp(argv[1], "rank-guard")) return scv_rank_guard_main(argc - 1, argv + 1);
    const struct cmd *c = find_cmd(argv[1]);
    if (c) return run_cmd(c, argc - 1, argv + 1);
    const char *near = nearest_cmd(argv[1], 1);
    fprintf(stderr, "scavenger: unknown command '%s'%s%s%s\n\n", argv[1], near ? "; did you mean '" : "",
            near ? near : "", near ? "'?" : "");
    usage(stderr);
    return EXIT_USAGE;
}
