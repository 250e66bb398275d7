/*
 * option.h - one row of an option table: a command's options (src/cli/) and the keys a job
 * accepts (src/search/jobopts.c) are declared once as arrays of scv_option, and the
 * parsing, --help, the bash completion's option lists, the man page's option list and the
 * job-file/service allow-list are all read from those arrays. A row also says what its
 * value is (scv_value: its type, its range and where it goes, an offset into the struct
 * the table fills, or a setter for a value of a form of its own), so that one reader,
 * scv_option_read (option.c), parses every command's, job file's and request's values
 * alike, and refuses a bad one with the same words: "--NAME 'TEXT': expected WHAT (WHY)".
 */
#ifndef SCV_CORE_OPTION_H
#define SCV_CORE_OPTION_H
#include <stddef.h>

#include "scv.h"

/* scv_option.flags */
enum {
    SCV_OPT_TRAINER = 1 << 0, /* a job key passed to every `scavenger train` of the job */
    SCV_OPT_SHELL = 1 << 1,   /* a job key for where and how the job runs (driver, cluster, db...) */
    SCV_OPT_LOOP = 1 << 2,    /* a job key that is a loop setting (scv_run_params_set) */
    SCV_OPT_SEGMENT = 1 << 3, /* train: a segment's option, read by the segment codec (io/segwire.c) */
    SCV_OPT_PATH = 1 << 4,    /* its value may be a path (the service keeps it in its data dir) */
    SCV_OPT_FROM_JOB = 1 << 5 /* arg, help and value are the job key's of the same name (jobopts.c) */
};

/* scv_value.type: what the text is and what is stored at the row's offset */
enum {
    SCV_VT_NONE = 0, /* not read by the table (the command handles it, or a heading) */
    SCV_VT_INT,      /* an integer in [lo, hi] into an int */
    SCV_VT_I64,      /* ... into an int64_t */
    SCV_VT_U64,      /* ... into a uint64_t (read exactly, up to 2^64 - 1) */
    SCV_VT_DBL,      /* a decimal number (never hex, inf or nan) in the range into a double */
    SCV_VT_DUR,      /* seconds, or a number with s, m or h (30s, 2m, 1.5h), into a double */
    SCV_VT_INTS,     /* a set of integers, a list 1,2,8 or a range 1..64[:STEP] (ascending,
                        each once), into int[cap] with its count, a size_t, at n_off */
    SCV_VT_DBLS,     /* numbers separated by commas (no empty item; "" is none) into
                        double[cap] with its count, an int, at n_off */
    SCV_VT_ENUM,     /* one of the row's words (scv_option.values): its index, into an int */
    SCV_VT_STR,      /* the text itself (a const char * to it; lo: its least length) */
    SCV_VT_BUF,      /* a copy of the text into char[cap] (lo: its least length) */
    SCV_VT_FLAG,     /* no value: 1 into an int */
    SCV_VT_SET       /* set(): a value of a form of its own (K,B; topk:CF; ...) */
};

/* scv_value.bounds */
#define SCV_VB_OPEN_LO 0x1u /* the range excludes lo */
#define SCV_VB_OPEN_HI 0x2u /* ... and hi */
#define SCV_VB_ZERO 0x4u    /* 0 is taken besides the range (it means "off") */
#define SCV_VB_POW2 0x8u    /* SCV_VT_INTS: a range without a step doubles (batches) */

/* Reads text into base (the struct the table fills) as it likes; label is the option's
 * name as the message gives it ("--start"). SCV_OK, or SCV_EINVAL with a message naming
 * label and text. */
typedef int (*scv_value_setter)(void *base, const char *text, const char *label, scv_err *err);

typedef struct scv_value {
    int type;              /* SCV_VT_* */
    double lo, hi;         /* the range of a number, of each item of a list; a string's least length */
    unsigned bounds;       /* SCV_VB_* */
    size_t off;            /* where the value goes: an offset into the struct the table fills */
    size_t n_off, cap;     /* lists: the count's offset and the capacity; SCV_VT_BUF: its size */
    scv_value_setter set;  /* SCV_VT_SET */
} scv_value;

typedef struct scv_option {
    const char *name;   /* the long name without "--"; NULL with help set: a section heading;
                           a row of all NULL/0 ends the table */
    const char *arg;    /* the value's name in help ("N", "on|off"); NULL: a flag (no value) */
    const char *help;   /* the help text; '\n' starts a continuation line */
    int id;             /* the command's code for it (getopt_long's val) */
    unsigned flags;     /* SCV_OPT_* */
    const char *values; /* the accepted words, '|'-separated (checks, completion); or NULL */
    scv_value v;        /* its value (type 0: the command reads it itself) */
} scv_option;

/* The value in text read as v says into base + v->off, words the accepted words of an
 * SCV_VT_ENUM ('|'-separated). SCV_OK; SCV_EINVAL with err "LABEL 'TEXT': expected WHAT
 * (WHY)", e.g. "--workers '0': expected an integer in 1..1024 (0 is below the minimum 1)";
 * nothing is stored then. */
int scv_value_read(const scv_value *v, const char *words, const char *label, void *base, const char *text,
                   scv_err *err);
/* The same for option o, labelled "--NAME". */
int scv_option_read(const scv_option *o, void *base, const char *text, scv_err *err);
/* Whether the number x is one v takes (its range, whole for an integer type, 0 with
 * SCV_VB_ZERO). */
int scv_value_in_range(const scv_value *v, double x);
/* What v takes, for messages: "an integer in 1..1024", "a positive number", "a number in
 * [0, 1)", "plan or throughput" (the words of an enum). */
void scv_value_expect(const scv_value *v, const char *words, char *buf, size_t cap);
#endif
