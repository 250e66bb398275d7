/*
 * cli.h - shared pieces of the `scavenger` command line: the command table entry type and
 * the exit codes (0 success, 1 failure, 2 usage error, 130 interrupted).
 */
#ifndef SCV_CLI_H
#define SCV_CLI_H
#include <stddef.h>

enum { EXIT_OK = 0, EXIT_FAIL = 1, EXIT_USAGE = 2, EXIT_INTR = 130 };

int cmd_train(int argc, char **argv);
int cmd_plan(int argc, char **argv);
int cmd_profile(int argc, char **argv);
int cmd_cluster(int argc, char **argv);
int cmd_sweep(int argc, char **argv);
int cmd_run(int argc, char **argv);
int cmd_runs(int argc, char **argv);
int cmd_serve(int argc, char **argv);
int cmd_vms(int argc, char **argv);
#include <stdio.h>
#include "scv.h"
/* "scavenger CMD: <fmt with arg>", the usage text and a pointer to --help on stderr;
 * returns EXIT_USAGE (main.c) */
int cli_usage_error(const char *cmd, const char *usage, const char *fmt, const char *arg);
/* The option of command cmd's table nearest to word (without "--"; "=value" ignored), for
 * "did you mean '--NAME'?", or NULL (main.c). */
const char *cli_nearest_option(const char *cmd, const char *word);
/* Index of value in the NULL-terminated names, or -1. */
int cli_choice(const char *value, const char *const *names);
/* The default run database, its directory created (main.c). */
int cli_default_db(char *buf, size_t cap, scv_err *err);
/* data/NAME from the working directory, else beside the executable, else the installed
 * share/scavenger/ (main.c: scv_data_file) */
const char *scv_default_data_file(const char *name, char *buf, size_t cap);
#endif
