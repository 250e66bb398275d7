/*
 * option.h - one row of an option table: a command's options (src/cli/) and the keys a job
 * accepts (src/search/jobopts.c) are declared once as arrays of scv_option, and the
 * parsing, --help, the bash completion's option lists, the man page's option list and the
 * job-file/service allow-list are all read from those arrays. Pure data: no code here.
 */
#ifndef SCV_CORE_OPTION_H
#define SCV_CORE_OPTION_H

/* scv_option.flags */
enum {
    SCV_OPT_TRAINER = 1 << 0, /* a job key passed to every `scavenger train` of the job */
    SCV_OPT_SHELL = 1 << 1,   /* a job key for where and how the job runs (driver, cluster, db...) */
    SCV_OPT_LOOP = 1 << 2,    /* a job key that is a loop setting (scv_run_params_set) */
    SCV_OPT_NUM = 1 << 3,     /* its value is a non-negative number (the service checks it so) */
    SCV_OPT_PATH = 1 << 4,    /* its value may be a path (the service keeps it in its data dir) */
    SCV_OPT_FROM_JOB = 1 << 5 /* arg and help are the job key's of the same name (jobopts.c) */
};

typedef struct scv_option {
    const char *name;   /* the long name without "--"; NULL with help set: a section heading;
                           a row of all NULL/0 ends the table */
    const char *arg;    /* the value's name in help ("N", "on|off"); NULL: a flag (no value) */
    const char *help;   /* the help text; '\n' starts a continuation line */
    int id;             /* the command's code for it (getopt_long's val) */
    unsigned flags;     /* SCV_OPT_* */
    const char *values; /* the accepted words, '|'-separated (checks, completion); or NULL */
} scv_option;

#endif
