/*
 * opt.h - the commands' option tables (scv_option rows, core/option.h) made into what the
 * command line needs: getopt_long's table, the --help text, the long-option words of the
 * bash completion and the man page's option list (src/cli/opt.c).
 */
#ifndef SCV_CLI_OPT_H
#define SCV_CLI_OPT_H
#include "core/option.h"

#include <getopt.h>
#include <stdio.h>

/* A row with SCV_OPT_FROM_JOB set takes its arg, help and value from the job key of its name;
 * this returns the row whose arg and help to print (o itself otherwise). */
const scv_option *cli_opt_text(const scv_option *o);
/* The value of option o in text read as its row says (a SCV_OPT_FROM_JOB row: as the job
 * key's) into base, the struct the command's table fills; SCV_EINVAL "--NAME 'TEXT':
 * expected WHAT (WHY)". */
int cli_opt_read(const scv_option *o, void *base, const char *text, scv_err *err);
/* The option called name in t (not a heading), or NULL. */
const scv_option *cli_opt_find(const scv_option *t, const char *name);
/* getopt_long's table from the rows of t with an id, then {"help", 'h'} and the end row;
 * returns the number of options, or -1 when cap is too small. */
int cli_opt_getopt(const scv_option *t, struct option *out, size_t cap);
/* The rows of t as --help prints them: a heading on its own line, an option as
 * "  --name ARG" padded to column col (or two spaces after a longer one), then its help,
 * its continuation lines indented to col; rows with a flag of skip are left out. */
void cli_opt_help(FILE *f, const scv_option *t, int col, unsigned skip);
/* "--name" of each option of t, one a line. */
void cli_opt_words(FILE *f, const scv_option *t);
/* The rows of t as man(7) paragraphs (.TP, the option in bold, its value in italics). */
void cli_opt_man(FILE *f, const scv_option *t);

/* The tables of the commands that have one (cmd_*.c), for the generators in main.c. */
extern const scv_option RUN_OPTIONS[], TRAIN_OPTIONS[], PLAN_OPTIONS[], SWEEP_OPTIONS[], SERVE_OPTIONS[],
    PROFILE_OPTIONS[], CLUSTER_OPTIONS[], RUNS_OPTIONS[], VMS_OPTIONS[];
#endif
