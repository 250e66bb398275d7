/*
 * cmd_run.c - `scavenger run`: the Scavenger loop on the command line. A thin shell: the
 * options (a JSON job file, then the command line; later settings win; every key one of the
 * job's, src/search/jobopts.c) become a job through scv_job_setup_init (src/job/jobsetup.c:
 * the library decides the driver, the VM type and the job's identity); scv_run() does the
 * work; this file prints its events (progress on stderr, the trade-off on stdout), writes the
 * report and maps the outcome to the exit status (0 target reached, 1 not reached or failed,
 * 2 usage, 130 interrupted). The loop itself is src/search/loop.c. SIGINT and SIGTERM: while a
 * segment runs its driver passes them on to the job; between segments they are held here and
 * the loop stops before the next one (scv_run_observer.stop_requested).
 */
#define _POSIX_C_SOURCE 200809L
#include "cli.h"
#include "cli/opt.h"
#include "job/jobsetup.h"
#include "core/rundir.h"
#include "search/jobopts.h"
#include "scv.h"
#include "../core/util.h"
#include "model/stoprule.h"
#include "search/report.h"
#include "store/store.h"

#include <cjson/cJSON.h>
#include <errno.h>
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define RUN_USAGE "usage: scavenger run [JOB.json] [options]   |   scavenger run --resume RUN_ID\n"
#define MAX_PAIRS 96

enum { R_RESUME = 1, R_JSON };
/* run's own options; the others are the job's keys (src/search/jobopts.c: the built-in
 * trainer's options, the loop's settings, where the job runs), which a job file holds too */
const scv_option RUN_OPTIONS[] = {
    {"resume", "RUN_ID", "continue an interrupted run", R_RESUME, 0, NULL, {0}},
    {"json", NULL, "the report's JSON as the last line of stdout", R_JSON, 0, NULL, {0}},
    {NULL, NULL, NULL, 0, 0, NULL, {0}},
};

typedef struct pairs {
    char *name[MAX_PAIRS], *value[MAX_PAIRS];
    int n;
} pairs;

static const char *get(const pairs *p, const char *name)
{
    for (int i = p->n - 1; i >= 0; i--) /* later settings win */
        if (!strcmp(p->name[i], name)) return p->value[i];
    return NULL;
}

static void pairs_free(pairs *p)
{
    for (int i = 0; i < p->n; i++) free(p->name[i]), free(p->value[i]);
    p->n = 0;
}

static int known(const char *name)
{
    return scv_job_option_find(name) != NULL;
}

static int add_pair(pairs *p, const char *name, const char *value, scv_err *err)
{
    if (p->n == MAX_PAIRS) return scv_err_set(err, SCV_ERANGE, "too many settings (at most %d)", MAX_PAIRS);
    if (!(p->name[p->n] = strdup(name)) || !(p->value[p->n] = strdup(value))) {
        free(p->name[p->n]);
        return scv_err_set(err, SCV_ENOMEM, "out of memory");
    }
    p->n++;
    return SCV_OK;
}

/* The settings of a job, a JSON object of strings and finite numbers: a file or a stored
 * run's. Refused: anything after the object, a key given twice, non-finite numbers and
 * values too long to keep whole. */
static int load_job_json(const char *text, const char *where, pairs *p, scv_err *err)
{
    const char *end = NULL;
    cJSON *o = cJSON_ParseWithOpts(text, &end, 1);
    if (!o || !cJSON_IsObject(o)) {
        cJSON_Delete(o);
        return scv_err_set(err, SCV_EPARSE, "%s: not a JSON object%s", where,
                           end && *end ? " (or something follows it)" : "");
    }
    int rc = SCV_OK;
    for (cJSON *it = o->child; it && !rc; it = it->next) {
        char val[512];
        int len = 0;
        if (cJSON_IsString(it)) len = snprintf(val, sizeof val, "%s", it->valuestring);
        else if (cJSON_IsNumber(it) && isfinite(it->valuedouble)) len = snprintf(val, sizeof val, "%.17g", it->valuedouble);
        else rc = scv_err_set(err, SCV_EPARSE, "%s: field '%s' must be a string or a finite number", where, it->string);
        if (!rc && len >= (int)sizeof val)
            rc = scv_err_set(err, SCV_EPARSE, "%s: field '%s': the value is longer than %zu characters", where,
                             it->string, sizeof val - 1);
        if (!rc && !known(it->string)) rc = scv_err_set(err, SCV_EPARSE, "%s: unknown field '%s'", where, it->string);
        for (const cJSON *q = o->child; !rc && q != it; q = q->next)
            if (!strcmp(q->string, it->string))
                rc = scv_err_set(err, SCV_EPARSE, "%s: field '%s' is given twice", where, it->string);
        if (!rc) rc = add_pair(p, it->string, val, err);
    }
    cJSON_Delete(o);
    return rc;
}

static int load_job_file(const char *path, pairs *p, scv_err *err)
{
    FILE *f = fopen(path, "r");
    if (!f) return scv_err_set(err, SCV_ENOTFOUND, "%s: cannot open: %s", path, strerror(errno));
    char *buf = malloc(1 << 20);
    size_t len = buf ? fread(buf, 1, (1 << 20) - 1, f) : 0;
    int bad = ferror(f);
    fclose(f);
    if (!buf) return scv_err_set(err, SCV_ENOMEM, "out of memory");
    if (bad) {
        free(buf);
        return scv_err_set(err, SCV_EIO, "%s: read error", path);
    }
    buf[len] = 0;
    int rc = load_job_json(buf, path, p, err);
    free(buf);
    return rc;
}

/* ---- printing the loop's events ---- */

typedef struct view {
    int tty, json;
    double last_line;          /* when the progress line was last drawn */
    double accuracy;           /* the latest evaluation, NaN before the first */
    int subset;                /* the periodic evaluations' test samples (0: all): labels */
    int window;                /* the target's window of evaluations */
    double evals[SCV_TARGET_WINDOW_MAX]; /* the latest `window` evaluations, a ring */
    int n_evals;
    int planned;
    const scv_catalog *cat;
    int comms;                 /* planned with communication options: the table's comm column */
    double nominal_epochs;     /* a relative plan's epochs assumed (the policy's), at ... */
    int nominal_batch;         /* ... the space's first batch (the loop's target_of) */
    double budget;             /* the run's cap in dollars (0: none): the progress line's spend */
} view;

static void progress_line(view *v, const scv_run_event *ev)
{
    double now = scv_now();
    if (now - v->last_line < 0.25) return;
    v->last_line = now;
    char el[32], rem[256] = "", acc[32] = "";
    scv_fmt_time(ev->elapsed_s, el, sizeof el);
    /* past the predicted time (ev->overdue): the learning curve's re-estimate, or that there
     * is none yet; never a time left of zero while training goes on */
    const char *plan_t = ev->relative ? "nominal" : "predicted";
    char past[96] = "";
    if (ev->overdue) snprintf(past, sizeof past, ": past the %s time, re-estimated from the learning curve", plan_t);
    if (isfinite(ev->remaining_s) && ev->remaining_s > 0 && ev->relative && !ev->overdue) {
        /* a nominal plan's time left is not a prediction: say what it is */
        char t[32];
        scv_fmt_time(ev->remaining_s, t, sizeof t);
        snprintf(rem, sizeof rem, ", nominal (%.3g epochs assumed): %s left, the target's epochs unknown",
                 v->nominal_epochs, t);
    } else if (isfinite(ev->remaining_s) && ev->remaining_s > 0) {
        char t[32], lo[32], hi[32];
        scv_fmt_time(ev->remaining_s, t, sizeof t);
        if (isfinite(ev->remaining_lo_s) && isfinite(ev->remaining_hi_s)) {
            scv_fmt_time(ev->remaining_lo_s, lo, sizeof lo);
            scv_fmt_time(ev->remaining_hi_s, hi, sizeof hi);
            snprintf(rem, sizeof rem, ", about %s to the target (%s to %s)%s", t, lo, hi, past);
        } else if (isfinite(ev->remaining_hi_s)) { /* the band's low end is passed */
            scv_fmt_time(ev->remaining_hi_s, hi, sizeof hi);
            snprintf(rem, sizeof rem, ", about %s to the target (up to %s)%s", t, hi, past);
        } else {
            snprintf(rem, sizeof rem, ", about %s to the target%s", t, past);
        }
    } else if (ev->overdue) {
        snprintf(rem, sizeof rem, "; target not reached at the %s time, re-estimating at the next evaluation", plan_t);
    }
    if (isfinite(v->accuracy)) snprintf(acc, sizeof acc, ", %s acc %.4f", v->subset ? "subset" : "test", v->accuracy);
    char spend[96] = "";
    if (v->budget > 0) {
        char sp[32], cp[32];
        scv_fmt_usd(ev->spent_usd, sp, sizeof sp);
        scv_fmt_usd(v->budget, cp, sizeof cp);
        snprintf(spend, sizeof spend, ", %s of %s", sp, cp);
    }
    fprintf(stderr, "\r\033[K  [%s] K=%d B=%d iteration %lld, epoch %.2f%s; %s in the run%s%s", scv_run_state_name(ev->state),
            ev->workers, ev->batch, (long long)ev->iter->iteration, ev->iter->epoch, acc, el, spend, rem);
    fflush(stderr);
}

/* SIGINT or SIGTERM while no segment runs (a driver's own handler takes them during one). */
static volatile sig_atomic_t g_stop;
static void on_stop(int sig)
{
    (void)sig;
    g_stop = 1;
}
static int stop_requested(void *ctx)
{
    (void)ctx;
    return g_stop;
}

static void on_event(void *ctx, const scv_run_event *ev)
{
    view *v = ctx;
    switch (ev->kind) {
    case SCV_EV_SEGMENT_START:
        fprintf(stderr, "scavenger run: %-7s K=%d B=%d%s%s ...%s", ev->phase, ev->workers, ev->batch,
                ev->vm ? " on " : "", ev->vm ? ev->vm : "", v->tty ? "\n" : "");
        break;
    case SCV_EV_ITER:
        if (v->tty) progress_line(v, ev);
        break;
    case SCV_EV_EVAL:
        v->accuracy = ev->eval->accuracy;
        if (v->window > 0 && v->window <= SCV_TARGET_WINDOW_MAX)
            v->evals[v->n_evals++ % v->window] = ev->eval->accuracy;
        break;
    case SCV_EV_SEGMENT_END: {
        const scv_segment_result *s = ev->segment;
        if (v->tty) fprintf(stderr, "\r\033[K");
        fprintf(stderr, "%s %lld iterations", v->tty ? "  done:" : "", (long long)s->iterations);
        if (s->stats.workers) fprintf(stderr, ", %.2f ms/iteration", 1e3 * s->stats.t_iter);
        if (isfinite(s->accuracy)) fprintf(stderr, ", test acc %.4f", s->accuracy);
        fprintf(stderr, "%s\n", s->reached ? ", target reached" : "");
        break;
    }
    case SCV_EV_PLAN:
        if (v->planned++ || v->json) break; /* the first plan's table; re-plans print a line */
        char rows[160]; /* what the table shows of the plan: its cost-time front (at most 12 rows) */
        size_t shown_n = ev->plan->n_front < 12 ? ev->plan->n_front : 12;
        if (shown_n == ev->plan->n_points)
            snprintf(rows, sizeof rows, "%zu configuration%s", shown_n, shown_n == 1 ? "" : "s");
        else
            snprintf(rows, sizeof rows, "%zu of %zu configurations planned: the cost-time front%s", shown_n,
                     ev->plan->n_points, shown_n < ev->plan->n_front ? "'s fastest" : ", the others slower and dearer");
        if (ev->relative) /* not predictions: say what they are */
            printf("trade-off (%s; nominal time and cost, not predicted: %.3g epochs at B=%d assumed, the target's "
                   "epochs are not known yet):\n", rows, v->nominal_epochs, v->nominal_batch);
        else
            printf("trade-off (%s; predicted time and cost to the target, from the start):\n", rows);
        scv_plan_print_header_ex(stdout, v->comms);
        int shown = 0;
        for (size_t i = 0; i < ev->plan->n_front && i < 12; i++) {
            scv_plan_print_point_ex(stdout, v->cat, &ev->plan->points[ev->plan->front[i]],
                                    (long)ev->plan->front[i] == ev->plan->chosen ? ">" : " ", v->comms);
            shown |= (long)ev->plan->front[i] == ev->plan->chosen;
        }
        if (!shown && ev->plan->chosen >= 0) /* off the front: the run keeps its VM type (run --vm) */
            scv_plan_print_point_ex(stdout, v->cat, &ev->plan->points[ev->plan->chosen], ">", v->comms);
        fflush(stdout);
        break;
    case SCV_EV_DECISION:
        if (v->planned <= 1 && !v->json && ev->code == SCV_NOTE_DECISION) { /* (a re-plan's: a note) */
            printf("chosen: %s\n", ev->text);
            fflush(stdout);
        } else {
            fprintf(stderr, "scavenger run: %s\n", ev->text);
        }
        break;
    case SCV_EV_RETRY:
    case SCV_EV_NOTE: fprintf(stderr, "scavenger run: %s\n", ev->text); break;
    default: break;
    }
}

/* ---- the command ---- */

static int usage(const char *fmt, const char *arg)
{
    return cli_usage_error("run", RUN_USAGE, fmt, arg);
}

static void help(void)
{
    printf(RUN_USAGE "\nThe Scavenger loop: trains the job, searches (K, B) online, picks the configuration the\n"
                     "objective asks for and trains to the target there; every step is training.\n\n"
                     "Job (as `scavenger train`):");
    int col = 27;
    for (const scv_option *o = scv_job_options(); o->name || o->help; o++)
        if (o->name && (o->flags & SCV_OPT_TRAINER)) {
            if (col + 3 + (int)strlen(o->name) > 86) col = printf("\n ");
            col += printf(" --%s", o->name);
        }
    printf("\n");
    cli_opt_help(stdout, scv_job_options(), 23, SCV_OPT_TRAINER);
    cli_opt_help(stdout, RUN_OPTIONS, 23, 0);
    printf("A job file holds the same settings: {\"model\": \"lenet\", \"target-accuracy\": 0.89, ...}\n"
           "Exit status: 0 target reached, 1 failure or target not reached, 2 usage, 130 interrupted.\n");
}

/* Options and job file -> pairs; returns an exit status or -1 to go on. */
static int parse_args(int argc, char **argv, pairs *p, long long *resume, int *json)
{
    scv_err err = {0};
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        if (!strcmp(a, "-h") || !strcmp(a, "--help")) {
            help();
            return EXIT_OK;
        }
        const scv_option *own = !strncmp(a, "--", 2) ? cli_opt_find(RUN_OPTIONS, a + 2) : NULL;
        if (own && own->id == R_JSON) {
            *json = 1;
            continue;
        }
        if (own && own->id == R_RESUME) {
            int64_t v;
            if (i + 1 >= argc || scv_parse_i64(argv[i + 1], &v) || v < 1)
                return usage("--resume needs a run id%s", "");
            *resume = v;
            i++;
            continue;
        }
        if (a[0] != '-') {
            if (load_job_file(a, p, &err)) {
                fprintf(stderr, "scavenger run: %s\n", err.msg);
                return err.code == SCV_ENOTFOUND || err.code == SCV_EIO ? EXIT_FAIL : EXIT_USAGE;
            }
            continue;
        }
        if (strncmp(a, "--", 2) || !known(a + 2)) return usage("unknown option '%s'", a); /* a job key */
        if (i + 1 >= argc) return usage("%s needs a value", a);
        if (add_pair(p, a + 2, argv[++i], &err)) return usage("%s", err.msg);
    }
    return -1;
}

/* The database, and on --resume the stored job first (the command line adds to it).
 * Returns nonzero with err set on failure. */
static int open_job(pairs *opt, long long resume, scv_store **db, char *dbpath, size_t cap, scv_err *err)
{
    const char *dbarg = get(opt, "db");
    if (dbarg) snprintf(dbpath, cap, "%s", dbarg);
    else if (cli_default_db(dbpath, cap, err)) return 1;
    if (scv_store_open(dbpath, db, err)) return 1;
    if (!resume) return 0;
    char job[65536], status[64], where[64];
    pairs stored = {0};
    if (scv_store_run_get(*db, resume, job, sizeof job, status, sizeof status, err)) return 1;
    snprintf(where, sizeof where, "run %lld's stored job", resume);
    if (load_job_json(job, where, &stored, err)) {
        pairs_free(&stored);
        return 1;
    }
    for (int i = 0; i < opt->n && stored.n < MAX_PAIRS; i++) /* the command line after */
        stored.name[stored.n] = opt->name[i], stored.value[stored.n++] = opt->value[i];
    opt->n = 0;
    *opt = stored;
    return 0;
}

/* Why the run ended as it did, stored with it (scv_run_summary.reason: `runs`, `runs show`,
 * --json, the service's run document). The loop has stored the status; this writes it again
 * with the reason in one UPDATE, which on a full disk gives up the store's reserve, so that a
 * run whose own end write met the full disk is not left `running`. */
static void store_end(scv_store *db, long long id, const char *status, const char *reason)
{
    scv_err e = {0};
    if (id && scv_store_run_end(db, id, status, NULL, reason, &e))
        fprintf(stderr, "scavenger run: how run %lld ended could not be stored: %s\n", id, e.msg);
}

/* The outcome on stdout (stderr with --json, whose JSON report is then stdout's last line)
 * and the report files: a run that reached its end, or stopped by its budget or out of reach.
 * A run that did not reach its target stores why (a stop's caller stores its own). A report
 * that cannot be written is said with how to write it from the store, after the outcome.
 * Returns the exit status (1 when the report failed), err set then. */
static int print_outcome(scv_store *db, const scv_run_params *p, const scv_run_result *res, const view *v,
                         const char *rep, int json, const char *dbarg, scv_err *err)
{
    double wmean = NAN;
    int w = v->n_evals < v->window ? v->n_evals : v->window;
    if (w > 0) {
        wmean = 0;
        for (int i = 0; i < w; i++) wmean += v->evals[i] / w;
    }
    char head[512], why[768];
    scv_run_headline(p, res, SCV_TARGET_CONFIRM_TOL, wmean, v->subset, head, sizeof head);
    if (!res->reached && !res->reach_stopped && !res->budget_stopped) {
        if (res->epochs >= p->max_epochs - 1e-9)
            snprintf(why, sizeof why, "%s after %.2f epochs: its epoch bound (max-epochs %g) came first", head,
                     res->epochs, p->max_epochs);
        else
            snprintf(why, sizeof why, "%s after %.2f epochs, before its epoch bound (max-epochs %g): the loop's "
                     "segment limit, or a segment that trained no iteration", head, res->epochs, p->max_epochs);
        store_end(db, res->run_id, "target not reached", why);
    }
    int bad = scv_run_report_write(p, res, rep, err) != SCV_OK;
    char at[192], ac[32];
    scv_run_time_text(res, at, sizeof at);
    scv_fmt_usd(res->actual_cost, ac, sizeof ac);
    char pt[32] = "", band[96] = "";
    if (isfinite(res->predicted_time_s) && !res->decision_relative) {
        scv_fmt_time(res->predicted_time_s, pt, sizeof pt);
        if (isfinite(res->predicted_lo_s)) {
            char lo[32], hi[32] = "never";
            scv_fmt_time(res->predicted_lo_s, lo, sizeof lo);
            if (isfinite(res->predicted_hi_s)) scv_fmt_time(res->predicted_hi_s, hi, sizeof hi);
            snprintf(band, sizeof band, ", %.0f%% band %s to %s", 100 * p->policy.band_coverage, lo, hi);
        }
    }
    char first[96] = "";
    if (res->decision_relative && isfinite(res->absolute_time_s)) {
        char ft[32];
        scv_fmt_time(res->absolute_time_s, ft, sizeof ft);
        snprintf(first, sizeof first, " (first predicted after %.2f epochs: %s)", res->absolute_at_epochs, ft);
    }
    char where[1400];
    if (bad) snprintf(where, sizeof where, "no report (run %lld)", res->run_id);
    else snprintf(where, sizeof where, "report in %s/report.md (run %lld)", rep, res->run_id);
    fprintf(json ? stderr : stdout, "%s after %.2f epochs in %s, %s%s%s%s%s%s; %s\n", head, res->epochs, at, ac,
            pt[0] ? " (predicted at the decision: " : "", pt, band, pt[0] ? ")" : "", first, where);
    if (bad) /* the run is stored: its report can be written from the store */
        fprintf(stderr, "scavenger run: the report could not be written: %s; the run is stored: scavenger runs report "
                "%lld%s%s --report DIR writes it\n", err->msg, res->run_id, dbarg ? " --db " : "", dbarg ? dbarg : "");
    if (json) {
        char *s = scv_run_report_json(p, res);
        if (!s) {
            scv_err_set(err, SCV_ENOMEM, "out of memory");
            return -1;
        }
        printf("%s\n", s);
        free(s);
    }
    return res->reached && !bad ? EXIT_OK : EXIT_FAIL;
}

int cmd_run(int argc, char **argv)
{
    pairs opt = {0};
    long long resume = 0;
    int json = 0, rc = parse_args(argc, argv, &opt, &resume, &json);
    if (rc >= 0) {
        pairs_free(&opt);
        return rc;
    }
    rc = EXIT_FAIL;
    scv_err err = {0};
    scv_store *db = NULL;
    scv_job_driver *drv = NULL;
    scv_job_setup js;
    memset(&js, 0, sizeof js);
    scv_run_result res;
    memset(&res, 0, sizeof res);
    char dbpath[1024], state_dir[1100];
    const char *dbarg = get(&opt, "db");
    int resume_added = 0; /* settings on the command line besides --resume and --db */
    for (int i = 0; resume && i < opt.n; i++) resume_added += strcmp(opt.name[i], "db") != 0;
    if (open_job(&opt, resume, &db, dbpath, sizeof dbpath, &err)) goto out;
    /* the report's directory before any training: after hours of it a missing parent, a
     * dangling link, a file or a read-only mount would leave no report */
    const char *report_dir = get(&opt, "report");
    if (report_dir && scv_run_report_dir_ready(report_dir, &err)) {
        fprintf(stderr, "scavenger run: --report: %s (checked before training: nothing was trained)\n", err.msg);
        goto out_quiet;
    }
    /* the job: the library's defaults (driver, VM type, identity) over the settings */
    if (scv_runs_dir_path(dbpath, state_dir, sizeof state_dir, &err)) goto out;
    int jrc = scv_job_setup_init(&js, opt.name, opt.value, opt.n, db, state_dir, &err);
    if (js.note[0]) fprintf(stderr, "scavenger run: note: %s\n", js.note);
    if (jrc) {
        if (!js.bad_setting) goto out;
        rc = usage("%s", err.msg);
        goto out_quiet;
    }
    js.params.resume_run = resume;
    if (scv_job_setup_driver(&js, &drv, &err)) goto out;
    /* a resume with settings added (a larger --budget): the stored job is what it runs with */
    if (resume && resume_added && scv_store_run_set_job(db, resume, js.job_json, &err)) goto out;
    view v = {.tty = isatty(STDERR_FILENO), .json = json, .accuracy = NAN, .cat = js.catalog,
              .comms = js.params.n_comms > 0, .nominal_epochs = js.params.policy.nominal_epochs,
              .nominal_batch = js.params.batches[0], .subset = js.params.policy.eval_subset,
              .window = js.params.policy.target_window, .budget = js.params.budget};
    fprintf(stderr, "scavenger run: %s (%s), search %s, state in %s/\n", resume ? "resuming" : "a new run",
            js.job_key, scv_search_name(js.params.search), state_dir);
    scv_run_observer obs = {.ctx = &v, .on_event = on_event, .stop_requested = stop_requested};
    struct sigaction sa = {.sa_handler = on_stop}, old_int, old_term;
    sigaction(SIGINT, &sa, &old_int);
    sigaction(SIGTERM, &sa, &old_term);
    int st = scv_run(&js.params, drv, &obs, &res, &err);
    sigaction(SIGINT, &old_int, NULL);
    sigaction(SIGTERM, &old_term, NULL);
    char why[SCV_ERR_LEN + 128];
    if (st == SCV_EINTR && (res.reach_stopped || res.budget_stopped)) {
        /* a stop of the loop's, not a Ctrl-C (the loop stored it interrupted, with its why):
         * its report, then how to go on */
        scv_err rerr = {0};
        char sp[32];
        scv_fmt_usd(res.actual_cost, sp, sizeof sp);
        print_outcome(db, &js.params, &res, &v, report_dir ? report_dir : res.run_dir, json, dbarg, &rerr);
        if (res.reach_stopped)
            fprintf(stderr,
                    "scavenger run: %s; the checkpoint is kept: scavenger run --resume %lld --out-of-reach "
                    "go-on%s%s trains on to the bound\n",
                    res.why, res.run_id, dbarg ? " --db " : "", dbarg ? dbarg : "");
        else
            fprintf(
                stderr,
                "scavenger run: the checkpoint is kept: scavenger run --resume %lld --budget USD%s%s goes on "
                "with a budget USD above the %s spent (a service: POST /api/runs/%lld/resume with {\"budget\": USD})\n",
                res.run_id, dbarg ? " --db " : "", dbarg ? dbarg : "", sp, res.run_id);
        rc = EXIT_FAIL;
        goto out_quiet;
    }
    if (st == SCV_EINTR) {
        snprintf(why, sizeof why, "interrupted (SIGINT or SIGTERM%s%s); the checkpoint is kept: resumable",
                 err.msg[0] ? ": " : "", err.msg);
        store_end(db, res.run_id, "interrupted", why);
        fprintf(stderr, "\nscavenger run: interrupted; the checkpoint is kept: scavenger run --resume %lld%s%s\n",
                res.run_id, dbarg ? " --db " : "", dbarg ? dbarg : "");
        rc = EXIT_INTR;
        goto out_quiet;
    }
    if (st) {
        store_end(db, res.run_id, "failed", err.msg[0] ? err.msg : scv_strerror(st));
        if (res.run_id) fprintf(stderr, "scavenger run: run %lld failed; its files are in %s\n", res.run_id, res.run_dir);
        goto out;
    }
    rc = print_outcome(db, &js.params, &res, &v, report_dir ? report_dir : res.run_dir, json, dbarg, &err);
    if (rc < 0) {
        rc = EXIT_FAIL;
        goto out;
    }
    goto out_quiet;
out:
    if (rc != EXIT_OK && rc != EXIT_USAGE) fprintf(stderr, "scavenger run: %s\n", err.msg[0] ? err.msg : "failed");
out_quiet:
    scv_run_result_free(&res);
    scv_job_driver_free(drv);
    scv_job_setup_free(&js);
    scv_store_close(db);
    pairs_free(&opt);
    return rc;
}
