/*
 * trainjob.h - what the two job drivers of the scavenger trainer share (internal to
 * src/drivers/; trainjob.c): the job's options and executable, its run directory and
 * checkpoint (RUN_DIR/ckpt), the probe that describes the job, the segments' metrics files
 * (RUN_DIR/seg-NNN-PHASE-kK-bB[-retryN].jsonl), tailing the running segment's metrics into
 * the loop's sink, and what a finished segment measured. The relaunch driver starts one
 * `scavenger train` per segment; the elastic driver keeps one running and sends it a
 * command per segment.
 */
#ifndef SCV_DRIVERS_TRAINJOB_H
#define SCV_DRIVERS_TRAINJOB_H
#include <stdio.h>
#include "scv.h"
#include "../io/metrics_line.h"

/* An external trainer's progress file in its checkpoint directory (docs/TRAINER-CONTRACT.md). */
#define SCV_STATE_FILE "scavenger-state.json"

/* The watchdog's policy (tj_stalled): a segment that writes no metrics line for a stated
 * time is a failed segment, ended and retried like one whose worker died. Before its first
 * line (MPI's start, the data, the model) it has startup_s; after it, no line for
 * max(stall_min_s, stall_iters x the longest iteration seen) ends it. `scavenger run
 * --stall-timeout S` sets both startup_s and stall_min_s (scv_relaunch_opts.stall_timeout_s). */
typedef struct tj_watchdog {
    double startup_s;          /* 600 */
    double stall_min_s;        /* 120 */
    double stall_iters;        /* 50 */
    /* An external trainer's start-up probe (SCV_PROBE=1, SCV_UNTIL_ITERATIONS=1) must end
     * within probe_s (600; --stall-timeout sets it too) and write at most probe_iters
     * iteration lines (3: one asked, a little slack); past either, the trainer ignores the
     * contract and the run fails at once, naming the variable it ignored. */
    double probe_s;
    double probe_iters;
    /* Before its first line, a job whose output says its launch failed (Open MPI's words,
     * scv_launch_error_line) and that neither exits nor writes a line within error_grace_s
     * (3) is ended at once, the failure and the output's last lines named: mpirun may hang
     * after one (a descriptor or memory limit), which waited for startup_s. */
    double error_grace_s;
    /* The exec driver's probe: while it has written no line, every note_every_s (30; a
     * quarter of the start-up timeout where that is shorter) a note on stderr says so, with
     * the trainer's last output line (a script that ignores the contract runs its own
     * course: it was silent until the timeout, 10 minutes by default). */
    double note_every_s;
} tj_watchdog;
#define TJ_WATCHDOG_DEFAULT {600.0, 120.0, 50.0, 600.0, 3.0, 3.0, 30.0}

/* The job's output watched for Open MPI's words of a failed launch (tj_errwatch_*): read
 * from its log as it grows, or fed a line at a time (the relaunch driver's child's stderr). */
typedef struct tj_errwatch {
    char path[1300];          /* the log ("": lines are fed) */
    long off;                 /* how much of it was read */
    char partial[1024];       /* a line being read (a longer one is cut) */
    size_t plen;
    char first[400];          /* the first failure line ("": none yet) */
    double first_at;          /* when it was read (scv_now; 0: none) */
    char last[4][240];        /* the last lines (a ring) */
    int n_last;
} tj_errwatch;

typedef struct trainjob {
    char *exe, *cluster, *vm_type, *catalog;
    char *exec;                /* an external trainer's command (the exec driver), else NULL */
    char *hostfile;            /* real machines (an Open MPI hostfile), else NULL */
    char **opts;               /* owned copies of the job's options, NULL-terminated */
    int show_progress;
    char run_dir[1024], ckpt_dir[1100];
    scv_job_info job;
    int K, B;                  /* configured (0: not yet) */
    const char *placed;        /* the VM type the segment under way goes on (tj_place; valid
                                  during train; NULL: none said, VMs 1..K) */
    double *split;
    int next_seg;              /* number of the next segment file */
    int attempt;               /* retries of the current segment */
    /* tailing the running segment's metrics */
    FILE *tail;
    char tail_path[1400];
    const scv_measure_sink *sink;
    scv_segment_result *res;
    char partial[8192];
    size_t partial_len;        /* its bytes (a NUL byte among them included) */
    int overlong;              /* within a line longer than partial (skipped) */
    int lineno;                /* lines of the tailed file read */
    scv_ml_reader rd;          /* its reader's state across lines (the segment's K) */
    scv_err line_err;          /* its first bad line (code 0: none) */
    scv_err diverged;          /* its first non-finite value: "the trainer diverged (...)" */
    /* every evaluation line read well (any role), before the sink (NULL: none): the exec
     * driver's target rule, which needs the line's role and set */
    void (*eval_line)(void *ctx, const scv_ml_eval *x, int lineno);
    void *eval_line_ctx;
    /* the watchdog over the tailed file */
    tj_watchdog wd;
    double wd_start, wd_last;  /* when tailing started, when the last line came (scv_now) */
    double wd_titer;           /* the longest iteration seen (s) */
    char wd_seen[160];         /* what the last line was ("" before the first) */
    double wd_fired;           /* when tj_watch_tick ended the child (0: not) */
    char wd_why[1024];         /* why (tj_stalled's words) */
    tj_errwatch ew;            /* the tailed job's output (tj_tail_start: fed lines; the
                                  exec and elastic drivers tail their log) */
} trainjob;

/* Copies the options (SCV_ENOMEM); tj_free releases them. */
int tj_init(trainjob *t, const scv_relaunch_opts *o, scv_err *err);
void tj_free(trainjob *t);
/* The driver's open: the run directory, and a one-iteration probe that proves the job
 * starts and describes it. */
int tj_open(trainjob *t, const char *run_dir, scv_job_info *job, scv_err *err);
/* The VM types the driver can place segments on (job->types: the cluster's, with their
 * counts; none without a cluster). */
int tj_types(const trainjob *t, scv_job_info *job, scv_err *err);
/* Where the segment's K workers go: *type = spec->vm_type when it is another type than the
 * driver's own and the cluster holds K VMs of it, else the driver's own (t->vm_type, maybe
 * NULL); SCV_EINVAL naming the type when it is not held (no cluster, or fewer than K). */
int tj_place(const trainjob *t, const scv_segment_spec *spec, const char **type, scv_err *err);
/* Only the run directory, checkpoint directory and segment numbering of tj_open; SCV_ERANGE
 * when run_dir does not fit t->run_dir (never a truncated directory). */
int tj_dirs(trainjob *t, const char *run_dir, scv_err *err);
/* Iterations and samples of the latest checkpoint (0 when none). */
int tj_progress(trainjob *t, int64_t *iterations, double *samples, scv_err *err);
int tj_configure(trainjob *t, int workers, int batch, const double *split, scv_err *err);
/* 1 when the run has a checkpoint to resume from. */
int tj_has_checkpoint(const trainjob *t);
/* The next segment's metrics file (a retry gets its own). */
void tj_segment_path(const trainjob *t, const char *phase, char *buf, size_t cap);
/* 1 when the tailed segment has stalled (tj_watchdog): why (cap bytes) names the timeout
 * and what was last seen; 0 while it makes progress. Call after tj_tail_tick. */
int tj_stalled(const trainjob *t, char *why, size_t cap);
/* tj_tail_tick, then the watchdog for a child run by scv_run_self (child.h): a stalled
 * segment's child and all its descendants are killed (scv_kill_tree; t->wd_fired, t->wd_why
 * set). */
void tj_watch_tick(void *t);
/* Tails path into sink, counting iterations and their wall-clock span into out; lines go
 * through the strict reader (the segment's K expected), the first bad one kept in
 * t->line_err and the first non-finite value in t->diverged. */
void tj_tail_start(trainjob *t, const char *path, const scv_measure_sink *sink, scv_segment_result *out);
void tj_tail_tick(void *t);
void tj_tail_stop(trainjob *t);
/* A segment that ended well: its measurement (from its metrics), where the job now is (from
 * the checkpoint, unless totals_known: out's total_iterations and samples_seen are set, as a
 * job that keeps its state in memory reports them), and the next segment number. */
int tj_segment_done(trainjob *t, const char *metrics, int totals_known, scv_segment_result *out, scv_err *err);
/* Dynamic batching from the trainer's result object (a cJSON *, as void * to keep cJSON out
 * of this header): its "rebalances" and "shares" into out (left as they are when absent). */
void tj_result_shares(const void *result, scv_segment_result *out);
/* The error a segment's tail found, if any (SCV_EINVAL: not retried): a divergence (any
 * trainer), or, for an external trainer, a line that breaks the contract; SCV_OK if none. */
int tj_tail_verdict(const trainjob *t, scv_err *err);
/* The job's output watch (t->ew): tj_errwatch_start reads path from its present end on
 * (NULL: lines are fed with tj_errwatch_line); tj_errwatch_tick reads what was added. */
void tj_errwatch_start(trainjob *t, const char *path);
void tj_errwatch_tick(trainjob *t);
/* One line of the job's output (ctx: the trainjob), as scv_run_self_on_line calls it. */
void tj_errwatch_line(void *ctx, const char *line);
/* 1 when the output held a failure line grace seconds ago or earlier: why says so, with the
 * output's last lines; 0 otherwise. */
int tj_errwatch_failed(const trainjob *t, double grace, char *why, size_t cap);
/* The output's last lines (at most 4, joined by " | "; "" when none); but_first: without
 * the first failure line (quoted on its own). */
void tj_errwatch_tail(const trainjob *t, int but_first, char *buf, size_t cap);

/* The last lines (at most `lines`, each cut to fit) of a log file, joined by " | ", into
 * buf ("" when none). */
void tj_log_tail(const char *path, int lines, char *buf, size_t cap);
/* The driver's recover: segment `index`'s metrics (its last attempt) as if it had just ended,
 * read as the tail reads them (t->line_err, t->diverged: this file's alone; a line longer
 * than the tail's buffer counted, not read). */
int tj_recover(trainjob *t, int index, scv_segment_result *out, char *phase, size_t cap, int *workers, int *batch,
               scv_err *err);
/* A segment whose job died without an answer (a kill, a preemption without notice): the
 * work it loses, stated for its error message ("; lost N samples (iterations A-B ...)"):
 * what the tail saw in out (its last metrics line's samples_seen and iteration) less the
 * checkpoint the retry resumes from; "" when the tail saw no line. */
void tj_lost_work(trainjob *t, const scv_segment_result *out, char *buf, size_t cap);
#endif
