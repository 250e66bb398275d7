/*
 * segwire.h - the segment spec on the wire: what one segment's trainer needs (K, B, the
 * split, the stopping rules, evaluations, the target window and its history, the exchange,
 * the straggler rule, dynamic batching, the metrics and checkpoint paths, resume, the seed)
 * as one struct, and its one codec for each format that crosses a process boundary:
 *   - argv: the `scavenger train` options the relaunch driver and `sweep` start a child
 *     with (src/cli/cmd_train.c reads each of them through scv_segwire_arg, the one
 *     reading of this form; scv_segwire_argv_read reads a whole argv back for the
 *     round-trip tests, and tests/test_options.c checks that every option the codec
 *     writes is one train's table declares and hands to the codec);
 *   - JSON: the elastic job's segment command (src/drivers/elastic.c writes it,
 *     src/runtime/train_elastic.c reads it);
 *   - environment: the SCV_* variables of docs/TRAINER-CONTRACT.md (src/drivers/exec.c
 *     sets them for an external trainer).
 * Every field's name in each format is written once, in segwire.c's field table (with its
 * range, checked on every decode: errors name the field). A format that does not carry a
 * field leaves it out. Internal to the library (not in scv.h).
 */
#ifndef SCV_IO_SEGWIRE_H
#define SCV_IO_SEGWIRE_H
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include "scv.h"
#include "../model/stoprule.h"

/* Capacities of the wire's lists and paths. */
#define SCV_SEGWIRE_MAX_SPLIT SCV_MAX_WORKERS  /* one share of B per worker */
#define SCV_SEGWIRE_MAX_HISTORY SCV_TARGET_WINDOW_MAX /* earlier target values prefilling the window */
#define SCV_SEGWIRE_PATH 4096
/* The profiling rule's least iterations when `--stop-time-stable R` gives none (R:M). */
#define SCV_SEGWIRE_TIME_MIN_DEFAULT 10
/* The history's JSON name: the elastic job rewrites it in a command it continues (train_elastic.c). */
#define SCV_SEGWIRE_HISTORY_KEY "history"

typedef struct scv_segwire {
    int workers, batch;                  /* K and the global batch B */
    int n_split;                         /* 0: an even split; else K shares of B */
    double split[SCV_SEGWIRE_MAX_SPLIT];
    int64_t until_iterations;            /* stop at this total iteration count (0: no cap) */
    double epochs;                       /* ... or after this many epochs in all (0: none) */
    double target_accuracy, target_loss; /* ... or at the target (0: none) */
    double eval_every_epochs;            /* periodic evaluations (0: the trainer's default) */
    int eval_subset;                     /* ... on this many held-out samples (0: all) */
    double eval_max_share;               /* ... skipped past this share of the time (0: never) */
    int target_window;                   /* the target over the mean of the last W (0, 1: off) */
    int n_history;                       /* earlier target values, oldest first */
    double history[SCV_SEGWIRE_MAX_HISTORY];
    int noise_window;                    /* the warm-up's noise rule (0: off) */
    double noise_tol;
    double time_rse;                     /* the profiling rule (0: off) */
    int time_min;
    int final_eval;                      /* evaluate when the segment ends */
    int64_t checkpoint_every;            /* iterations between checkpoints (0: the trainer's) */
    int checkpoint_end;                  /* checkpoint when the segment ends (elastic) */
    int dynamic_batching;
    int selsync;                         /* SelSync at selsync_lssr (0: synchronous) */
    double selsync_lssr;
    double compress_cf;                  /* > 1: Top-k at this factor over collective (0: dense) */
    scv_coll_pref collective;
    scv_straggler_rule straggler;        /* the straggler rule (fraction 0: off) */
    char metrics[SCV_SEGWIRE_PATH];      /* "" : none */
    char checkpoint_dir[SCV_SEGWIRE_PATH];
    int resume;                          /* load the checkpoint first */
    uint64_t seed;
    int probe;                           /* the exec driver's probe (K=1, one iteration) */
    char master_addr[256];               /* the framework's rendezvous (environment only) */
    int master_port;
} scv_segwire;

/* A segment of spec at K, B and split (NULL: even): the rules, evaluations, window and
 * history, exchange, straggler rule and dynamic batching; checkpoint_end for a training
 * segment; final_eval from spec. Paths, resume and seed are left as they are in w. */
void scv_segwire_from_spec(scv_segwire *w, const scv_segment_spec *spec, int K, int B, const double *split);

/* K shares of B (split NULL: even), at most SCV_SEGWIRE_MAX_SPLIT. */
void scv_segwire_set_split(scv_segwire *w, int K, const double *split);

/* JSON: the object's members (no braces) to f, every field the format carries; the
 * elastic command puts them after its "cmd". */
void scv_segwire_json_write(FILE *f, const scv_segwire *w);
/* The members of o (a cJSON object, as void * to keep cJSON out of this header) into w:
 * a field that is absent keeps w's value (the caller's default), except the required K
 * and B; a field of another type or out of range is SCV_EINVAL naming `what` (e.g.
 * "elastic command") and the field. */
int scv_segwire_json_read(scv_segwire *w, const void *o, const char *what, scv_err *err);

/* The environment: "NAME=VALUE" strings, each malloc'ed, NULL-terminated, in *env (free
 * with scv_segwire_env_free). SCV_ENOMEM. */
int scv_segwire_env(const scv_segwire *w, char ***env, scv_err *err);
void scv_segwire_env_free(char **env);
/* The variables read back through get (getenv, or a test's lookup); absent ones keep w's
 * value, except the contract's required ones; errors name the variable. */
int scv_segwire_env_read(scv_segwire *w, const char *(*get)(const char *name, void *ctx), void *ctx,
                         scv_err *err);

/* A growing argv of owned strings, NULL-terminated (a.oom after a failed allocation). */
typedef struct scv_argv {
    char **v;
    int n, cap;
    int oom;
} scv_argv;
void scv_argv_add(scv_argv *a, const char *s);
void scv_argv_addf(scv_argv *a, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
void scv_argv_free(scv_argv *a);

/* argv: the `scavenger train` options of w appended to a. Zero fields are left out. */
void scv_segwire_argv(scv_argv *a, const scv_segwire *w);
/* The options in argv[0..argc), as scv_segwire_argv wrote them, read back into w; an
 * option the codec does not write, or a bad value, is SCV_EINVAL naming it ("argv: ..."). */
int scv_segwire_argv_read(scv_segwire *w, int argc, char *const *argv, scv_err *err);
/* One of those options (opt "--workers"; value NULL for a flag) read into w, as
 * `scavenger train` reads its segment options: SCV_ENOTFOUND when the codec has no such
 * option; a bad value SCV_EINVAL in the options' words ("--workers '0': expected an
 * integer in 1..1024 (0 is below the minimum 1)"). */
int scv_segwire_arg(scv_segwire *w, const char *opt, const char *value, scv_err *err);
/* Whether the codec carries option opt: -1 no, 0 a flag, 1 an option with a value. */
int scv_segwire_arg_kind(const char *opt);

/* The collective's name on the wire ("auto", "allgather", "artopk"), and back (-1: none). */
const char *scv_segwire_coll_name(scv_coll_pref c);
int scv_segwire_coll_parse(const char *s);
#endif
