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
#include <stdio.h>
#include "scv.h"
/* "scavenger CMD: <fmt with arg>", the usage text and a pointer to --help on stderr;
 * returns EXIT_USAGE (main.c) */
int cli_usage_error(const char *cmd, const char *usage, const char *fmt, const char *arg);
/* shared output of plans (cmd_plan.c) */
void plan_fmt_time(double s, char *b, size_t cap);
void plan_print_header(FILE *f);
void plan_print_point(FILE *f, const scv_catalog *cat, const scv_plan_point *p, const char *mark);
void plan_json_point(FILE *f, const scv_catalog *cat, const scv_plan_point *p);
/* data/NAME from the working directory, else beside the executable's build directory */
const char *scv_default_data_file(const char *name, char *buf, size_t cap);
#endif
