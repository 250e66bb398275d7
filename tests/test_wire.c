/*
 * test_wire.c - the wire formats' codecs: the segment spec (src/io/segwire.h) from one
 * struct to JSON, the environment and argv and back, with every field carried and ranges
 * of each type parses, a bad field is refused naming the file, the line and the field.
 * Fast (no processes, no files but one temporary metrics file).
 */
#define _POSIX_C_SOURCE 200809L
#include "scv_test.h"
#include "scv.h"
#include "../src/io/metrics_line.h"
#include "../src/io/segwire.h"
#include "../src/drivers/trainjob.h"

#include <cjson/cJSON.h>
#include <stdint.h>
#include <sys/stat.h>
#include <unistd.h>

/* Every field set to a value of its own (split and history exact at 9 digits). */
static void full(scv_segwire *w)
{
    memset(w, 0, sizeof *w);
    w->workers = 3, w->batch = 384;
    w->n_split = 3, w->split[0] = 0.5, w->split[1] = 0.25, w->split[2] = 1.125;
    w->until_iterations = 123456789012LL;
    w->epochs = 2.5, w->target_accuracy = 0.875, w->target_loss = 0.3125, w->eval_every_epochs = 0.1;
    w->eval_subset = 2000, w->target_window = 4, w->eval_max_share = 0.1;
    w->n_history = 3, w->history[0] = 0.75, w->history[1] = 0.8125, w->history[2] = 0.5;
    w->noise_window = 17, w->noise_tol = 0.15;
    w->time_rse = 0.02, w->time_min = 9;
    w->final_eval = 1;
    w->checkpoint_every = 250, w->checkpoint_end = 1;
    w->dynamic_batching = 1;
    w->selsync = 1, w->selsync_lssr = 0.3;
    w->compress_cf = 100, w->collective = SCV_COLL_ARTOPK;
    w->straggler = (scv_straggler_rule){.fraction = 0.7, .alpha = 0.2, .window_s = 3, .min_iterations = 12};
    snprintf(w->metrics, sizeof w->metrics, "/tmp/run dir/seg-001-train-k3-b384.jsonl");
    snprintf(w->checkpoint_dir, sizeof w->checkpoint_dir, "/tmp/run dir/ckpt");
    w->resume = 1, w->seed = 18446744073709551557ULL, w->probe = 1;
    snprintf(w->master_addr, sizeof w->master_addr, "10.0.0.7");
    w->master_port = 23456;
}

static void same_list(const double *a, int na, const double *b, int nb)
{
    CHECK_EQ_INT(na, nb);
    for (int i = 0; i < na && i < nb; i++) CHECK_NEAR(a[i], b[i], 0, 0);
}

static char *json_of(const scv_segwire *w)
{
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    fputc('{', f);
    scv_segwire_json_write(f, w);
    fputc('}', f);
    fclose(f);
    return buf;
}

static void t_json_round_trip(void)
{
    static scv_segwire w, r;
    full(&w);
    char *text = json_of(&w);
    cJSON *o = cJSON_Parse(text);
    CHECK_MSG(o != NULL, "%s", text);
    memset(&r, 0, sizeof r);
    scv_err e = {0};
    CHECK_EQ_INT(scv_segwire_json_read(&r, o, "cmd", &e), SCV_OK);
    CHECK_MSG(!e.code, "%s", e.msg);
    CHECK_EQ_INT(r.workers, 3);
    CHECK_EQ_INT(r.batch, 384);
    same_list(w.split, w.n_split, r.split, r.n_split);
    CHECK_EQ_INT(r.until_iterations, w.until_iterations);
    CHECK_NEAR(r.epochs, w.epochs, 0, 0);
    CHECK_NEAR(r.target_accuracy, w.target_accuracy, 0, 0);
    CHECK_NEAR(r.target_loss, w.target_loss, 0, 0);
    CHECK_NEAR(r.eval_every_epochs, w.eval_every_epochs, 0, 0); /* %.17g: exact */
    CHECK_EQ_INT(r.eval_subset, 2000);
    CHECK_EQ_INT(r.target_window, 4);
    same_list(w.history, w.n_history, r.history, r.n_history);
    CHECK_EQ_INT(r.noise_window, 17);
    CHECK_NEAR(r.noise_tol, w.noise_tol, 0, 0);
    CHECK_NEAR(r.time_rse, w.time_rse, 0, 0);
    CHECK_EQ_INT(r.time_min, 9);
    CHECK_EQ_INT(r.final_eval, 1);
    CHECK_EQ_INT(r.checkpoint_every, 250);
    CHECK_EQ_INT(r.checkpoint_end, 1);
    CHECK_EQ_INT(r.dynamic_batching, 1);
    CHECK_EQ_INT(r.selsync, 1);
    CHECK_NEAR(r.selsync_lssr, 0.3, 0, 0);
    CHECK_NEAR(r.compress_cf, 100, 0, 0);
    CHECK_EQ_INT(r.collective, SCV_COLL_ARTOPK);
    CHECK(r.straggler.fraction == 0.7);
    CHECK_NEAR(r.straggler.fraction, 0.7, 0, 0);
    CHECK_NEAR(r.straggler.alpha, 0.2, 0, 0);
    CHECK_NEAR(r.straggler.window_s, 3, 0, 0);
    CHECK_EQ_INT(r.straggler.min_iterations, 12);
    CHECK(!strcmp(r.metrics, w.metrics));
    /* the JSON carries no environment-only field */
    CHECK(r.checkpoint_dir[0] == 0 && r.seed == 0 && r.master_port == 0 && r.resume == 0 && r.probe == 0);
    cJSON_Delete(o);
    free(text);

    /* a zero struct: the window is written as 1, optional members left out */
    memset(&w, 0, sizeof w);
    w.workers = 1, w.batch = 32;
    text = json_of(&w);
    CHECK_MSG(strstr(text, "\"target_window\":1") && strstr(text, "\"history\":[]") && !strstr(text, "split") &&
              !strstr(text, "compress_cf") && !strstr(text, "selsync") && !strstr(text, "straggler") &&
              !strstr(text, "dynamic_batching") && !strstr(text, "collective"), "%s", text);
    free(text);
}

static void t_json_refused(void)
{
    static scv_segwire w;
    struct {
        const char *json, *needle;
    } bad[] = {
        {"{\"batch\":32}", "field 'workers' is missing"},
        {"{\"workers\":0,\"batch\":32}", "field 'workers' = 0 is out of range"},
        {"{\"workers\":2,\"batch\":32.5}", "field 'batch' = 32.5"},
        {"{\"workers\":2,\"batch\":32,\"epochs\":\"x\"}", "field 'epochs' is not a number"},
        {"{\"workers\":2,\"batch\":32,\"split\":[1,2,3]}", "field 'split' needs 2 shares"},
        {"{\"workers\":2,\"batch\":32,\"split\":[1,-2]}", "field 'split[1]' = -2"},
        {"{\"workers\":2,\"batch\":32,\"history\":[0.5,\"a\"]}", "field 'history[1]' is not a number"},
        {"{\"workers\":2,\"batch\":32,\"target_window\":0}", "field 'target_window' = 0"},
        {"{\"workers\":2,\"batch\":32,\"selsync_lssr\":1}", "field 'selsync_lssr' = 1"},
        {"{\"workers\":2,\"batch\":32,\"compress_cf\":1}", "field 'compress_cf' = 1"},
        {"{\"workers\":2,\"batch\":32,\"collective\":\"ring\"}", "field 'collective' = 'ring'"},
        {"{\"workers\":2,\"batch\":32,\"straggler\":{\"fraction\":2}}", "field 'straggler.fraction' = 2"},
        {"{\"workers\":2,\"batch\":32,\"metrics\":7}", "field 'metrics' is not a string"},
        {"{\"workers\":2,\"batch\":32,\"final_eval\":2}", "field 'final_eval' = 2"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        memset(&w, 0, sizeof w);
        cJSON *o = cJSON_Parse(bad[i].json);
        scv_err e = {0};
        CHECK_EQ_INT(scv_segwire_json_read(&w, o, "elastic command", &e), SCV_EINVAL);
        CHECK_MSG(strstr(e.msg, "elastic command: ") && strstr(e.msg, bad[i].needle), "%s -> %s", bad[i].json, e.msg);
        cJSON_Delete(o);
    }
    /* an absent optional field keeps the caller's default */
    memset(&w, 0, sizeof w);
    w.target_window = 1, w.checkpoint_every = 77;
    cJSON *o = cJSON_Parse("{\"workers\":2,\"batch\":32}");
    CHECK_EQ_INT(scv_segwire_json_read(&w, o, "cmd", NULL), SCV_OK);
    CHECK_EQ_INT(w.target_window, 1);
    CHECK_EQ_INT(w.checkpoint_every, 77);
    cJSON_Delete(o);
}

/* A test's environment: the encoder's "NAME=VALUE" strings. */
static const char *lookup(const char *name, void *ctx)
{
    char **env = ctx;
    size_t n = strlen(name);
    for (int i = 0; env && env[i]; i++)
        if (!strncmp(env[i], name, n) && env[i][n] == '=') return env[i] + n + 1;
    return NULL;
}

static void t_env_round_trip(void)
{
    static scv_segwire w, r;
    full(&w);
    char **env = NULL;
    CHECK_EQ_INT(scv_segwire_env(&w, &env, NULL), SCV_OK);
    /* the contract's names (docs/TRAINER-CONTRACT.md), no other */
    const char *names[] = {"SCV_WORKERS", "SCV_BATCH", "SCV_SPLIT", "SCV_MASTER_ADDR", "SCV_MASTER_PORT",
                           "SCV_CHECKPOINT_DIR", "SCV_RESUME", "SCV_METRICS", "SCV_UNTIL_ITERATIONS",
                           "SCV_MAX_EPOCHS", "SCV_EVAL_EVERY_EPOCHS", "SCV_SEED", "SCV_PROBE",
                           "SCV_EVAL_SUBSET", "SCV_FINAL_EVAL", "SCV_EVAL_MAX_SHARE"};
    int n = 0;
    while (env && env[n]) n++;
    CHECK_EQ_INT(n, (int)(sizeof names / sizeof names[0]));
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++) CHECK_MSG(lookup(names[i], env), "%s", names[i]);
    CHECK(!strcmp(lookup("SCV_SPLIT", env), "0.5,0.25,1.125"));
    CHECK(!strcmp(lookup("SCV_SEED", env), "18446744073709551557"));
    CHECK(!strcmp(lookup("SCV_RESUME", env), "1"));
    memset(&r, 0, sizeof r);
    scv_err e = {0};
    CHECK_EQ_INT(scv_segwire_env_read(&r, lookup, env, &e), SCV_OK);
    CHECK_MSG(!e.code, "%s", e.msg);
    CHECK_EQ_INT(r.workers, 3);
    CHECK_EQ_INT(r.batch, 384);
    same_list(w.split, w.n_split, r.split, r.n_split);
    CHECK(!strcmp(r.master_addr, "10.0.0.7"));
    CHECK_EQ_INT(r.master_port, 23456);
    CHECK(!strcmp(r.checkpoint_dir, w.checkpoint_dir));
    CHECK_EQ_INT(r.resume, 1);
    CHECK(!strcmp(r.metrics, w.metrics));
    CHECK_EQ_INT(r.until_iterations, w.until_iterations);
    CHECK_NEAR(r.epochs, 2.5, 0, 0);
    CHECK_NEAR(r.eval_every_epochs, 0.1, 0, 0);
    CHECK_NEAR(r.eval_max_share, 0.1, 0, 0);
    CHECK(r.seed == w.seed);
    CHECK_EQ_INT(r.probe, 1);
    CHECK(r.eval_subset == w.eval_subset && r.final_eval == w.final_eval);
    CHECK(r.target_window == 0 && r.noise_window == 0 && r.compress_cf == 0); /* not carried */
    scv_segwire_env_free(env);

    /* the split is left out when even; a variable out of range is refused by name */
    w.n_split = 0;
    CHECK_EQ_INT(scv_segwire_env(&w, &env, NULL), SCV_OK);
    CHECK(!lookup("SCV_SPLIT", env));
    scv_segwire_env_free(env);
    char *bad[] = {"SCV_WORKERS=2", "SCV_BATCH=abc", NULL};
    CHECK_EQ_INT(scv_segwire_env_read(&r, lookup, bad, &e), SCV_EINVAL);
    CHECK_MSG(strstr(e.msg, "SCV_BATCH") && strstr(e.msg, "'abc'"), "%s", e.msg);
    char *bad2[] = {"SCV_WORKERS=2", "SCV_BATCH=8", "SCV_SPLIT=1,0", NULL};
    CHECK_EQ_INT(scv_segwire_env_read(&r, lookup, bad2, &e), SCV_EINVAL);
    CHECK_MSG(strstr(e.msg, "SCV_SPLIT[1]"), "%s", e.msg);
    char *bad3[] = {"SCV_WORKERS=2", NULL};
    CHECK_EQ_INT(scv_segwire_env_read(&r, lookup, bad3, &e), SCV_EINVAL);
    CHECK_MSG(strstr(e.msg, "SCV_BATCH is not set"), "%s", e.msg);
    /* SCV_WORKERS may be left out: the reader keeps the caller's default (the contract's 1) */
    char *one[] = {"SCV_BATCH=8", NULL};
    memset(&r, 0, sizeof r);
    r.workers = 1;
    CHECK_EQ_INT(scv_segwire_env_read(&r, lookup, one, &e), SCV_OK);
    CHECK(r.workers == 1 && r.batch == 8);
}

static int has_opt(const scv_argv *a, const char *opt, const char *val)
{
    for (int i = 0; i < a->n; i++)
        if (!strcmp(a->v[i], opt)) return !val || (i + 1 < a->n && !strcmp(a->v[i + 1], val));
    return 0;
}

static void t_argv_round_trip(void)
{
    static scv_segwire w, r;
    full(&w);
    scv_argv a = {0};
    scv_segwire_argv(&a, &w);
    CHECK(!a.oom);
    /* every option the segment carries on a `scavenger train` command line, as it was written */
    CHECK(has_opt(&a, "--workers", "3") && has_opt(&a, "--batch", "384"));
    CHECK(has_opt(&a, "--batch-split", "0.5,0.25,1.125"));
    CHECK(has_opt(&a, "--checkpoint", w.checkpoint_dir) && has_opt(&a, "--resume", NULL));
    CHECK(has_opt(&a, "--metrics", w.metrics));
    CHECK(has_opt(&a, "--iterations", "123456789012") && has_opt(&a, "--epochs", "2.5"));
    CHECK(has_opt(&a, "--eval-every-epochs", "0.10000000000000001"));
    CHECK(has_opt(&a, "--target-accuracy", "0.875") && has_opt(&a, "--target-loss", "0.3125"));
    CHECK(has_opt(&a, "--eval-subset", "2000") && has_opt(&a, "--target-window", "4"));
    CHECK(has_opt(&a, "--target-history", "0.75,0.8125,0.5"));
    CHECK(has_opt(&a, "--stop-noise-stable", "17:0.14999999999999999"));
    CHECK(has_opt(&a, "--stop-time-stable", "0.02:9"));
    CHECK(!has_opt(&a, "--no-final-eval", NULL));
    CHECK(has_opt(&a, "--checkpoint-every", "250") && has_opt(&a, "--dynamic-batching", NULL));
    CHECK(has_opt(&a, "--selsync", "lssr:0.29999999999999999"));
    CHECK(has_opt(&a, "--compress", "topk:100") && has_opt(&a, "--collective", "artopk"));
    memset(&r, 0, sizeof r);
    scv_err e = {0};
    CHECK_EQ_INT(scv_segwire_argv_read(&r, a.n, a.v, &e), SCV_OK);
    CHECK_MSG(!e.code, "%s", e.msg);
    CHECK(r.workers == 3 && r.batch == 384 && r.resume == 1 && r.until_iterations == w.until_iterations);
    same_list(w.split, w.n_split, r.split, r.n_split);
    same_list(w.history, w.n_history, r.history, r.n_history);
    CHECK(r.epochs == w.epochs && r.eval_every_epochs == w.eval_every_epochs && r.target_accuracy == w.target_accuracy);
    CHECK(r.target_loss == w.target_loss && r.eval_subset == 2000 && r.target_window == 4);
    CHECK(r.noise_window == 17 && r.noise_tol == w.noise_tol && r.time_rse == w.time_rse && r.time_min == 9);
    CHECK(r.checkpoint_every == 250 && r.dynamic_batching == 1 && r.selsync == 1 && r.selsync_lssr == 0.3);
    CHECK(r.compress_cf == 100 && r.collective == SCV_COLL_ARTOPK);
    CHECK(!strcmp(r.metrics, w.metrics) && !strcmp(r.checkpoint_dir, w.checkpoint_dir));
    scv_argv_free(&a);

    /* zero fields are left out; the final evaluation's option says "off"; no window: no history */
    memset(&w, 0, sizeof w);
    w.batch = 32, w.until_iterations = 1, w.n_history = 2, w.history[0] = 0.5, w.history[1] = 0.6;
    w.selsync = 1;
    scv_segwire_argv(&a, &w);
    CHECK_EQ_INT(a.n, 7);
    CHECK(has_opt(&a, "--batch", "32") && has_opt(&a, "--iterations", "1") && has_opt(&a, "--no-final-eval", NULL));
    CHECK(has_opt(&a, "--selsync", "0") && !has_opt(&a, "--target-history", NULL));
    memset(&r, 0, sizeof r);
    r.final_eval = 1;
    CHECK_EQ_INT(scv_segwire_argv_read(&r, a.n, a.v, NULL), SCV_OK);
    CHECK(r.final_eval == 0 && r.selsync == 1 && r.selsync_lssr == 0);
    scv_argv_free(&a);
    /* a split is written for K > 1 only */
    w.workers = 1, w.n_split = 1, w.split[0] = 1;
    scv_segwire_argv(&a, &w);
    CHECK(!has_opt(&a, "--batch-split", NULL));
    scv_argv_free(&a);

    char *bad[] = {"--stop-noise-stable", "20"};
    CHECK_EQ_INT(scv_segwire_argv_read(&r, 2, bad, &e), SCV_EINVAL);
    CHECK_MSG(strstr(e.msg, "--stop-noise-stable '20'"), "%s", e.msg);
    char *bad2[] = {"--compress", "topk:0.5"};
    CHECK_EQ_INT(scv_segwire_argv_read(&r, 2, bad2, &e), SCV_EINVAL);
    CHECK_MSG(strstr(e.msg, "--compress") && strstr(e.msg, "0.5"), "%s", e.msg);
}

static void t_from_spec(void)
{
    static scv_segwire w;
    double hist[] = {0.5, 0.6}, split[] = {1, 3};
    scv_straggler_rule sr = {.fraction = 0.8, .alpha = 0.1, .window_s = 5, .min_iterations = 10};
    scv_plan_comm comm = {.kind = SCV_PLAN_TOPK, .cf = 50};
    scv_segment_spec s = {.phase = "train", .until_iterations = 900, .noise_window = 0, .target_accuracy = 0.9,
                          .max_epochs = 3, .eval_every_epochs = 0.5, .checkpoint_every = 100, .final_eval = 1,
                          .eval_subset = 500, .target_window = 3, .history = hist, .n_history = 2,
                          .straggler = &sr, .dynamic_batching = 1, .comm = &comm,
                          .comm_collective = SCV_COLL_ALLGATHER};
    memset(&w, 0, sizeof w);
    scv_segwire_from_spec(&w, &s, 2, 64, split);
    CHECK(w.workers == 2 && w.batch == 64 && w.n_split == 2 && w.split[1] == 3);
    CHECK(w.until_iterations == 900 && w.epochs == 3 && w.target_accuracy == 0.9 && w.eval_every_epochs == 0.5);
    CHECK(w.checkpoint_every == 100 && w.checkpoint_end == 1 && w.final_eval == 1 && w.eval_subset == 500);
    CHECK(w.target_window == 3 && w.n_history == 2 && w.history[1] == 0.6);
    CHECK(w.straggler.fraction == 0.8 && w.dynamic_batching == 1);
    CHECK(w.compress_cf == 50 && w.collective == SCV_COLL_ALLGATHER && !w.selsync);
    s.phase = "search", s.comm = NULL, s.straggler = NULL;
    scv_segwire_from_spec(&w, &s, 2, 64, NULL);
    CHECK(w.checkpoint_end == 0 && w.compress_cf == 0 && !(w.straggler.fraction > 0) && w.n_split == 0);
}


/* ---- the metrics-line reader ---- */

static void t_line_good(void)
{
    scv_metrics_line m;
    scv_err e = {0};
    /* the built-in trainer's lines and a Python trainer's (json.dumps spacing) */
    CHECK_EQ_INT(scv_metrics_line_parse("{\"type\":\"job\",\"model\":\"lenet\",\"arch\":\"cnn\",\"params\":61706,"
                                        "\"act_bytes\":58408,\"input_floats\":784,\"n_train\":60000,\"vm\":\"c5.large\","
                                        "\"threads\":2,\"workers\":2,\"batch\":64}\n", "m.jsonl", 1, &m, &e), SCV_OK);
    CHECK_EQ_INT(m.type, SCV_ML_JOB);
    CHECK(!strcmp(m.u.job.model, "lenet") && !strcmp(m.u.job.arch, "cnn") && !strcmp(m.u.job.vm, "c5.large"));
    CHECK(m.u.job.params == 61706 && m.u.job.act_bytes == 58408 && m.u.job.n_train == 60000 && m.u.job.threads == 2);
    CHECK_EQ_INT(scv_metrics_line_parse("{\"type\": \"iter\", \"iter\": 812, \"epoch_progress\": 3.46, \"workers\": 2, "
                                        "\"batch\": 256, \"t_compute\": 0.0101, \"t_comm\": 0.0042, \"t_iter\": 0.0151, "
                                        "\"loss\": 0.41, \"grad_sqnorm_local_mean\": 1.18, \"grad_sqnorm_global\": null, "
                                        "\"samples_seen\": 207872, \"ts\": 1795342538.23, \"cf\": 100, \"t_compress\": 0.001}",
                                        "m.jsonl", 2, &m, &e), SCV_OK);
    CHECK_EQ_INT(m.type, SCV_ML_ITER);
    CHECK(m.u.iter.iter == 812 && m.u.iter.workers == 2 && m.u.iter.batch == 256 && m.u.iter.t_iter == 0.0151);
    CHECK(m.u.iter.g_local == 1.18 && isnan(m.u.iter.g_global) && m.u.iter.samples_seen == 207872);
    CHECK(m.u.iter.ts == 1795342538.23 && m.u.iter.cf == 100 && m.u.iter.t_compress == 0.001 && m.u.iter.loss == 0.41);
    CHECK_EQ_INT(scv_metrics_line_parse("{\"type\":\"eval\",\"iter\":936,\"epoch_progress\":4.0,\"test_accuracy\":0.871,"
                                        "\"test_loss\":0.367,\"train_loss\":null,\"train_loss_samples\":14848,"
                                        "\"role\":\"periodic\",\"set\":\"subset\"}", "m.jsonl", 3, &m, &e), SCV_OK);
    CHECK_EQ_INT(m.type, SCV_ML_EVAL);
    CHECK(m.u.eval.iter == 936 && m.u.eval.test_accuracy == 0.871 && isnan(m.u.eval.train_loss));
    CHECK(!strcmp(m.u.eval.role, "periodic") && !strcmp(m.u.eval.set, "subset") && m.u.eval.train_loss_samples == 14848);
    CHECK_EQ_INT(scv_metrics_line_parse("{\"type\":\"latency\",\"iter\":0,\"workers\":4,\"seconds\":2.5e-05}", "m.jsonl",
                                        4, &m, &e), SCV_OK);
    CHECK(m.type == SCV_ML_LATENCY && m.u.latency.workers == 4 && m.u.latency.seconds == 2.5e-05);
    /* other types (the trainer's target, straggler, rebalance lines; a user's own) are skipped */
    CHECK_EQ_INT(scv_metrics_line_parse("{\"type\":\"straggler\",\"worker\":\"x\"}", "m.jsonl", 5, &m, &e), SCV_OK);
    CHECK_EQ_INT(m.type, SCV_ML_OTHER);
    CHECK_EQ_INT(scv_metrics_line_parse("{\"loss\":1}", "m.jsonl", 6, &m, &e), SCV_OK);
    CHECK_EQ_INT(m.type, SCV_ML_OTHER);
    CHECK_EQ_INT(scv_metrics_line_parse("  \r\n", "m.jsonl", 7, &m, &e), SCV_OK);
    CHECK_EQ_INT(m.type, SCV_ML_BLANK);
    CHECK_MSG(!e.code, "%s", e.msg);
}

static void t_line_bad(void)
{
    static const char *iter_head = "{\"type\":\"iter\",\"iter\":5,\"workers\":2,\"batch\":64,\"t_compute\":0.01,"
                                   "\"t_comm\":0.001,\"grad_sqnorm_local_mean\":1,\"grad_sqnorm_global\":1,"
                                   "\"epoch_progress\":0.5,";
    struct {
        const char *tail, *needle;
        scv_ml_type type;
    } bad[] = {
        {"\"t_iter\":\"fast\"}", "seg-001.jsonl:17: field 't_iter' is not a number (0..1e+07): write it as a JSON number", SCV_ML_ITER},
        {"\"t_iter\":1e400}", "seg-001.jsonl:17: field 't_iter' = inf is out of range (0..1e+07)", SCV_ML_ITER},
        {"\"t_iter\":-1}", "seg-001.jsonl:17: field 't_iter' = -1 is out of range", SCV_ML_ITER},
        {"\"t_iter\":null}", "seg-001.jsonl:17: field 't_iter' is null, but an iteration line needs a number there",
         SCV_ML_ITER},
        {"\"t_iter\":0.01,\"ts\":\"now\"}", "seg-001.jsonl:17: field 'ts' is not a number", SCV_ML_ITER},
        {"\"t_iter\":0.01,\"cf\":-3}", "seg-001.jsonl:17: field 'cf' = -3 is out of range", SCV_ML_ITER},
    };
    char line[1024];
    scv_metrics_line m;
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        snprintf(line, sizeof line, "%s%s", iter_head, bad[i].tail);
        scv_err e = {0};
        CHECK_EQ_INT(scv_metrics_line_parse(line, "seg-001.jsonl", 17, &m, &e), SCV_EPARSE);
        CHECK_MSG(strstr(e.msg, bad[i].needle), "%s -> %s", bad[i].tail, e.msg);
        CHECK_EQ_INT(m.type, bad[i].type);
    }
    /* a refused value reads as missing, the rest of the line is read */
    snprintf(line, sizeof line, "%s\"t_iter\":\"fast\",\"samples_seen\":640}", iter_head);
    CHECK_EQ_INT(scv_metrics_line_parse(line, "f", 1, &m, NULL), SCV_EPARSE);
    CHECK(isnan(m.u.iter.t_iter) && m.u.iter.iter == 5 && m.u.iter.samples_seen == 640);
    struct {
        const char *line, *needle;
    } more[] = {
        {"{\"type\":\"iter\",\"batch\":64}", "f.jsonl:3: iteration line lacks field 'workers'"},
        {"{\"type\":\"iter\",\"workers\":1,\"batch\":64,\"t_compute\":0,\"t_comm\":0,\"t_iter\":0}",
         "f.jsonl:3: iteration line lacks field 'grad_sqnorm_local_mean'"},
        {"{\"type\":\"iter\",\"workers\":2.5}", "f.jsonl:3: field 'workers' = 2.5 is out of range (an integer in 1..65536)"},
        {"{\"type\":\"eval\",\"test_accuracy\":1.5}", "f.jsonl:3: field 'test_accuracy' = 1.5 is out of range (0..1)"},
        {"{\"type\":\"eval\",\"role\":7}", "f.jsonl:3: field 'role' is not a string"},
        {"{\"type\":\"eval\",\"iter\":-2}", "f.jsonl:3: field 'iter' = -2 is out of range"},
        {"{\"type\":\"job\",\"params\":10}", "f.jsonl:3: job line lacks field 'n_train' (required: params, n_train)"},
        {"{\"type\":\"job\",\"params\":0,\"act_bytes\":0,\"input_floats\":0,\"n_train\":5}",
         "f.jsonl:3: field 'params' = 0 is out of range"},
        {"{\"type\":\"job\",\"params\":1,\"act_bytes\":0,\"input_floats\":0,\"n_train\":5,\"threads\":1.5}",
         "f.jsonl:3: field 'threads' = 1.5"},
        {"{\"type\":\"latency\",\"workers\":2}", "f.jsonl:3: latency line lacks field 'seconds' (required: workers, seconds)"},
        {"{\"type\":\"latency\",\"workers\":0,\"seconds\":1}", "f.jsonl:3: field 'workers' = 0 is out of range"},
        {"{\"type\":\"iter\",\"workers\":", "f.jsonl:3: not a JSON object"},
        {"[1,2]", "f.jsonl:3: not a JSON object"},
    };
    for (size_t i = 0; i < sizeof more / sizeof more[0]; i++) {
        scv_err e = {0};
        CHECK_EQ_INT(scv_metrics_line_parse(more[i].line, "f.jsonl", 3, &m, &e), SCV_EPARSE);
        CHECK_MSG(strstr(e.msg, more[i].needle), "%s -> %s", more[i].line, e.msg);
    }
}

/* The profile reads through the reader: an external trainer's bad line is named by file,
 * line and field; a good file loads. */
static void t_profile_strict(void)
{
    char path[128];
    snprintf(path, sizeof path, "/tmp/scv-test-wire-%ld.jsonl", (long)getpid());
    FILE *f = fopen(path, "w");
    fprintf(f, "{\"type\": \"job\", \"model\": \"fake\", \"params\": 10000, \"n_train\": 6000, \"act_bytes\": 0, "
               "\"input_floats\": 784, \"workers\": 2, \"batch\": 64}\n");
    for (int i = 1; i <= 12; i++)
        fprintf(f, "{\"type\": \"iter\", \"iter\": %d, \"epoch_progress\": %g, \"workers\": 2, \"batch\": 64, "
                   "\"t_compute\": 0.01, \"t_comm\": 0.002, \"t_iter\": 0.013, \"loss\": 1.0, "
                   "\"grad_sqnorm_local_mean\": 2.0, \"grad_sqnorm_global\": 1.0, \"samples_seen\": %d, \"ts\": 1795342538.5}\n",
                i, i * 64 / 6000.0, i * 64);
    fclose(f);
    scv_profile *p = NULL;
    scv_err e = {0};
    CHECK_EQ_INT(scv_profile_load(path, &p, &e), SCV_OK);
    CHECK_MSG(p && p->n == 1 && p->configs[0].workers == 2 && p->configs[0].batch == 64, "%s", e.msg);
    CHECK(p && fabs(p->configs[0].t_iter - 0.013) < 1e-12 && !strcmp(p->job.model, "fake"));
    scv_profile_free(p);
    f = fopen(path, "a");
    fprintf(f, "{\"type\": \"iter\", \"iter\": 13, \"epoch_progress\": 0.2, \"workers\": 2, \"batch\": 64, "
               "\"t_compute\": 0.01, \"t_comm\": 0.002, \"t_iter\": 0.013, \"grad_sqnorm_local_mean\": 2.0, "
               "\"grad_sqnorm_global\": 1.0, \"samples_seen\": -5}\n");
    fclose(f);
    p = NULL;
    CHECK_EQ_INT(scv_profile_load(path, &p, &e), SCV_EPARSE);
    CHECK_MSG(!p && strstr(e.msg, ".jsonl:14: field 'samples_seen' = -5 is out of range"), "%s", e.msg);
    unlink(path);
}


/* Non-finite values (issue 24 item 11): NaN and Infinity as Python's json.dumps writes them
 * (bare, not JSON), as C's printf does ("nan", "-nan", "inf"), and a number beyond a
 * double; each is named by file, line and field, and as non-finite (the loss first). */
static void t_line_nonfinite(void)
{
    static const char *head = "{\"type\": \"iter\", \"iter\": 7, \"workers\": 1, \"batch\": 1, \"t_compute\": 0.01, "
                               "\"t_comm\": 0.0, \"t_iter\": 0.01, \"grad_sqnorm_global\": 1.0, \"epoch_progress\": 0.1, ";
    struct {
        const char *tail, *field, *as, *needle;
    } bad[] = {
        {"\"grad_sqnorm_local_mean\": 1, \"loss\": NaN}", "loss", "NaN", "s.jsonl:9: field 'loss' = NaN is not a finite number"},
        {"\"grad_sqnorm_local_mean\": 1, \"loss\": Infinity}", "loss", "Infinity", "s.jsonl:9: field 'loss' = Infinity"},
        {"\"grad_sqnorm_local_mean\": 1, \"loss\": -Infinity}", "loss", "-Infinity", "s.jsonl:9: field 'loss' = -Infinity"},
        {"\"grad_sqnorm_local_mean\": -nan, \"loss\": -nan, \"lr\": inf}", "loss", "-nan",
         "s.jsonl:9: field 'grad_sqnorm_local_mean' = -nan is not a finite number"},
        {"\"grad_sqnorm_local_mean\": Infinity, \"loss\": 2.5}", "grad_sqnorm_local_mean", "Infinity",
         "s.jsonl:9: field 'grad_sqnorm_local_mean' = Infinity"},
        {"\"grad_sqnorm_local_mean\": 1, \"loss\": 1e999}", "loss", "inf", "s.jsonl:9: field 'loss' = inf is out of range"},
    };
    scv_metrics_line m;
    char line[1024];
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        snprintf(line, sizeof line, "%s%s\n", head, bad[i].tail);
        scv_err e = {0};
        CHECK_EQ_INT(scv_metrics_line_parse(line, "s.jsonl", 9, &m, &e), SCV_EPARSE);
        CHECK_MSG(strstr(e.msg, bad[i].needle), "%s -> %s", bad[i].tail, e.msg);
        CHECK_EQ_INT(m.type, SCV_ML_ITER);
        CHECK_MSG(m.nonfinite && !strcmp(m.nonfinite, bad[i].field) && !strcmp(m.nonfinite_as, bad[i].as),
                  "%s -> %s %s", bad[i].tail, m.nonfinite ? m.nonfinite : "(none)", m.nonfinite_as);
        CHECK(m.u.iter.iter == 7); /* the rest of the line is read */
    }
    /* inside a string, the words are text; a token must stand alone */
    CHECK_EQ_INT(scv_metrics_line_parse("{\"type\":\"eval\",\"role\":\"NaN Infinity\",\"test_accuracy\":0.5}", "s", 1, &m,
                                        NULL), SCV_OK);
    CHECK(!m.nonfinite && !strcmp(m.u.eval.role, "NaN Infinity"));
    CHECK_EQ_INT(scv_metrics_line_parse("{\"type\":\"iter\",\"loss\":NaNa}", "s", 1, &m, NULL), SCV_EPARSE);
    CHECK(m.type == SCV_ML_OTHER && !m.nonfinite);
    CHECK_EQ_INT(scv_metrics_line_parse("{\"type\":\"iter\",\"loss\":\"#scv-nonfinite:NaN\"}", "s", 1, &m, NULL),
                 SCV_EPARSE); /* the reader's own mark, written as a string: only not a number */
    CHECK(m.type == SCV_ML_ITER && !m.nonfinite);
}

/* Checks across lines (issue 24 item 10): iter increases, samples_seen and ts do not
 * decrease, workers is the segment's K; a job line starts a new stream. */
static void t_line_sequence(void)
{
    scv_ml_reader r;
    scv_metrics_line m;
    char line[512];
#define IT(it, K, ss, ts)                                                                                          \
    (snprintf(line, sizeof line,                                                                                   \
              "{\"type\":\"iter\",\"iter\":%d,\"workers\":%d,\"batch\":64,\"t_compute\":0.01,\"t_comm\":0,"          \
              "\"t_iter\":0.01,\"grad_sqnorm_local_mean\":1,\"grad_sqnorm_global\":1,\"epoch_progress\":0.1,"        \
              "\"samples_seen\":%d,\"ts\":%.2f}", it, K, ss, ts),                                                      \
     line)
    struct {
        int it, K, ss;
        double ts;
        const char *needle;
    } bad[] = {
        {3, 2, 192, 1000.5, "seg.jsonl:4: field 'iter' = 3 does not follow line 3's 3 (iterations must increase)"},
        {4, 2, 128, 1000.5, "seg.jsonl:4: field 'samples_seen' = 128 is below line 3's 192 (it must not decrease)"},
        {4, 2, 256, 998.0, "seg.jsonl:4: field 'ts' = 998.000 is before line 3's 1000.000 (it must not decrease)"},
        {4, 3, 256, 1000.5, "seg.jsonl:4: field 'workers' = 3 is not the segment's K = 2"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        scv_ml_reader_init(&r, 2);
        scv_err e = {0};
        CHECK_EQ_INT(scv_metrics_line_next(&r, "{\"type\":\"job\",\"params\":10,\"act_bytes\":0,\"input_floats\":0,\"n_train\":640}", "seg.jsonl", 1,
                                           &m, &e), SCV_OK);
        CHECK_EQ_INT(scv_metrics_line_next(&r, IT(1, 2, 64, 999.0), "seg.jsonl", 2, &m, &e), SCV_OK);
        CHECK_EQ_INT(scv_metrics_line_next(&r, IT(3, 2, 192, 1000.0), "seg.jsonl", 3, &m, &e), SCV_OK);
        CHECK_MSG(!e.code, "%s", e.msg);
        CHECK_EQ_INT(scv_metrics_line_next(&r, IT(bad[i].it, bad[i].K, bad[i].ss, bad[i].ts), "seg.jsonl", 4, &m, &e),
                     SCV_EPARSE);
        CHECK_MSG(strstr(e.msg, bad[i].needle), "%d -> %s", (int)i, e.msg);
    }
    /* equal counts and a clock a little back (SCV_ML_TS_SLACK_S) pass; a job line restarts
     * the counters; K 0 takes any workers */
    scv_ml_reader_init(&r, 0);
    CHECK_EQ_INT(scv_metrics_line_next(&r, IT(5, 4, 320, 1000.0), "p", 1, &m, NULL), SCV_OK);
    CHECK_EQ_INT(scv_metrics_line_next(&r, IT(6, 2, 320, 999.5), "p", 2, &m, NULL), SCV_OK);
    CHECK_EQ_INT(scv_metrics_line_next(&r, "{\"type\":\"job\",\"params\":10,\"act_bytes\":0,\"input_floats\":0,\"n_train\":640}", "p", 3, &m,
                                       NULL), SCV_OK);
    CHECK_EQ_INT(scv_metrics_line_next(&r, IT(1, 2, 64, 10.0), "p", 4, &m, NULL), SCV_OK);
#undef IT
}

/* A trainer's segment read strictly (issue 38 item 11): "batch" is the segment's B (less
 * only in the iteration that ends an epoch of the job line's n_train), "iter" grows by one
 * per line and starts past the checkpoint's, "samples_seen" grows by at most the batch; a
 * key given twice and a NUL byte in a line are refused (a profile's reader too); each error
 * names the line and the field. */
static void t_line_contract(void)
{
    scv_ml_reader r;
    scv_metrics_line m;
    char line[512];
#define IT(it, B, ss)                                                                                             \
    (snprintf(line, sizeof line,                                                                                   \
              "{\"type\":\"iter\",\"iter\":%lld,\"workers\":2,\"batch\":%d,\"t_compute\":0.01,\"t_comm\":0,"         \
              "\"t_iter\":0.01,\"grad_sqnorm_local_mean\":1,\"grad_sqnorm_global\":1,\"samples_seen\":%d,"            \
              "\"ts\":1000}", (long long)(it), B, ss),                                                                             \
     line)
    static const char *job = "{\"type\":\"job\",\"params\":10,\"n_train\":650}";
    struct {
        long long it;
        int B, ss;
        const char *needle; /* NULL: accepted */
    } seq[] = {
        {11, 64, 704, NULL},
        {12, 64, 768, NULL},
        {13, 1, 769, "s.jsonl:5: field 'batch' = 1 is not the segment's B = 64 (SCV_BATCH"},
        {13, 128, 896, "s.jsonl:5: field 'batch' = 128 is not the segment's B = 64"},
        {14, 64, 832, "s.jsonl:5: field 'iter' = 14 jumps from line 4's 12 (one iter line per iteration: 13 expected)"},
        {1000000000013, 64, 832, "s.jsonl:5: field 'iter' = 1000000000013 jumps"},
        {13, 64, 900, "s.jsonl:5: field 'samples_seen' = 900 grows by 132 from line 4's 768, more than the line's "
                      "batch 64"},
        {13, 64, 832, NULL},
    };
    for (size_t i = 0; i < sizeof seq / sizeof seq[0]; i++) {
        scv_ml_reader_init(&r, 2);
        r.strict = 1, r.batch = 64, r.start_iter = 10;
        scv_err e = {0};
        CHECK_EQ_INT(scv_metrics_line_next(&r, job, "s.jsonl", 1, &m, &e), SCV_OK);
        CHECK_MSG(r.n_train == 650 && r.batch == 64 && r.start_iter == 10, "the job line kept the segment's settings");
        CHECK_EQ_INT(scv_metrics_line_next(&r, IT(10, 64, 640), "s.jsonl", 2, &m, &e), SCV_EPARSE);
        CHECK_MSG(strstr(e.msg, "s.jsonl:2: field 'iter' = 10 is not past the checkpoint's iteration 10"), "%s", e.msg);
        memset(&e, 0, sizeof e);
        CHECK_EQ_INT(scv_metrics_line_next(&r, IT(seq[0].it, seq[0].B, seq[0].ss), "s.jsonl", 3, &m, &e), SCV_OK);
        CHECK_EQ_INT(scv_metrics_line_next(&r, IT(seq[1].it, seq[1].B, seq[1].ss), "s.jsonl", 4, &m, &e), SCV_OK);
        if (i < 2) continue;
        int rc = scv_metrics_line_next(&r, IT(seq[i].it, seq[i].B, seq[i].ss), "s.jsonl", 5, &m, &e);
        CHECK_EQ_INT(rc, seq[i].needle ? SCV_EPARSE : SCV_OK);
        CHECK_MSG(!seq[i].needle || strstr(e.msg, seq[i].needle), "%zu -> %s", i, e.msg);
    }
    /* an epoch's last batch may be short: 650 = 10 x 64 + 10 */
    scv_ml_reader_init(&r, 2);
    r.strict = 1, r.batch = 64;
    CHECK_EQ_INT(scv_metrics_line_next(&r, job, "s.jsonl", 1, &m, NULL), SCV_OK);
    for (int i = 1; i <= 10; i++) CHECK_EQ_INT(scv_metrics_line_next(&r, IT(i, 64, 64 * i), "s.jsonl", i + 1, &m, NULL), SCV_OK);
    CHECK_EQ_INT(scv_metrics_line_next(&r, IT(11, 10, 650), "s.jsonl", 12, &m, NULL), SCV_OK);
    CHECK_EQ_INT(scv_metrics_line_next(&r, IT(12, 64, 714), "s.jsonl", 13, &m, NULL), SCV_OK);
    /* a key of the line's own given twice (cJSON keeps both: which is meant?), in a profile too;
     * the trainer's own keys may repeat */
    scv_ml_reader_init(&r, 0);
    scv_err e = {0};
    CHECK_EQ_INT(scv_metrics_line_next(&r, "{\"type\":\"job\",\"params\":10,\"n_train\":5,\"n_train\":6}", "p", 1, &m, &e),
                 SCV_EPARSE);
    CHECK_MSG(strstr(e.msg, "p:1: field 'n_train' is given twice in the line"), "%s", e.msg);
    CHECK(m.type == SCV_ML_JOB && isnan(m.u.job.n_train) && isnan(m.u.job.params)); /* none read (fuzz: not 0) */
    CHECK_EQ_INT(scv_metrics_line_next(&r, "{\"type\":\"job\",\"params\":10,\"n_train\":5,\"mine\":1,\"mine\":2}", "p", 2, &m,
                                       NULL), SCV_OK);
    CHECK_EQ_INT(scv_metrics_line_next(&r, "{\"type\":\"eval\",\"type\":\"eval\"}", "p", 3, &m, &e), SCV_EPARSE);
    CHECK_MSG(strstr(e.msg, "p:3: field 'type' is given twice"), "%s", e.msg);
    /* a NUL byte: a line led by one is not blank */
    static const char nul_led[] = "\0{\"type\":\"job\",\"params\":10,\"n_train\":5}\n";
    CHECK_EQ_INT(scv_metrics_line_next_n(&r, nul_led, sizeof nul_led - 1, "p", 4, &m, &e), SCV_EPARSE);
    CHECK_MSG(strstr(e.msg, "p:4: a NUL byte at byte 1 of the line"), "%s", e.msg);
    CHECK_EQ_INT(scv_metrics_line_next_n(&r, nul_led + 1, sizeof nul_led - 2, "p", 5, &m, &e), SCV_OK);
    /* not strict (a profile's files): counters may skip, the batch is any */
    scv_ml_reader_init(&r, 0);
    CHECK_EQ_INT(scv_metrics_line_next(&r, IT(1, 64, 64), "p", 1, &m, NULL), SCV_OK);
    CHECK_EQ_INT(scv_metrics_line_next(&r, IT(9, 32, 1000), "p", 2, &m, NULL), SCV_OK);
#undef IT
}

static int n_evals;
static void count_eval(void *ctx, const scv_eval_sample *e)
{
    (void)ctx, (void)e;
    n_evals++;
}

/* A running segment's tail (drivers/trainjob.c): an external trainer's accuracy in percent
 * is not passed on as an evaluation (it cannot reach a target) and fails the segment naming
 * file, line and field; a NaN loss says the trainer diverged, at which iteration, where; a
 * good file passes, a line longer than the tail's buffer included. */
static void t_tail_verdict(void)
{
    char path[128];
    snprintf(path, sizeof path, "/tmp/scv-test-tail-%ld.jsonl", (long)getpid());
    static const char *job = "{\"type\": \"job\", \"params\": 10, \"act_bytes\": 0, \"input_floats\": 0, \"n_train\": 640}\n";
    static const char *iter = "{\"type\": \"iter\", \"iter\": %d, \"workers\": 2, \"batch\": 64, \"t_compute\": 0.01, "
                              "\"t_comm\": 0.0, \"t_iter\": 0.01, \"grad_sqnorm_local_mean\": 1, "
                              "\"grad_sqnorm_global\": 1, \"epoch_progress\": 0.1, \"loss\": %s, \"samples_seen\": %d, "
                              "\"ts\": 1000.5}\n";
    for (int mode = 0; mode < 3; mode++) {
        FILE *f = fopen(path, "w");
        fputs(job, f);
        fprintf(f, iter, 1, "2.0", 64);
        fprintf(f, iter, 2, mode == 1 ? "NaN" : "1.5", 128);
        fprintf(f, "{\"type\": \"eval\", \"iter\": 2, \"epoch_progress\": 0.2, \"test_accuracy\": %s, "
                   "\"role\": \"periodic\"}\n", mode == 0 ? "5.0" : "0.05");
        if (mode == 2) { /* a line of the trainer's own, longer than the tail's buffer: not refused in parts */
            fputs("{\"type\": \"note\", \"text\": \"", f);
            for (int i = 0; i < 20000; i++) fputc('x', f);
            fputs("\"}\n", f);
            fprintf(f, iter, 3, "1.0", 192);
        }
        fclose(f);
        trainjob t;
        memset(&t, 0, sizeof t);
        t.exec = "trainer", t.K = 2;
        scv_segment_result res;
        memset(&res, 0, sizeof res);
        scv_measure_sink sink = {.on_eval = count_eval};
        n_evals = 0;
        tj_tail_start(&t, path, &sink, &res);
        tj_tail_tick(&t);
        tj_tail_stop(&t);
        scv_err e = {0};
        int rc = tj_tail_verdict(&t, &e);
        if (mode == 0) {
            CHECK_EQ_INT(rc, SCV_EINVAL);
            CHECK_EQ_INT(n_evals, 0);
            CHECK_MSG(strstr(e.msg, ".jsonl:4: field 'test_accuracy' = 5 is out of range (0..1): a fraction, not a percentage"), "%s", e.msg);
        } else if (mode == 1) {
            CHECK_EQ_INT(rc, SCV_EINVAL);
            CHECK_MSG(strstr(e.msg, "the trainer diverged (loss NaN at iteration 2, ") && strstr(e.msg, ".jsonl:3)"),
                      "%s", e.msg);
        } else {
            CHECK_MSG(rc == SCV_OK && n_evals == 1 && res.iterations == 3 && t.lineno == 6, "%s", e.msg);
        }
    }
    unlink(path);
}

/* A killed run's segment recovered (tj_recover): read as the tail reads it, its verdict
 * its own (an earlier segment's divergence cleared) and a line longer than the tail's
 * buffer one line, not several refused parts; the line numbers after it right. */
static void t_recover_lines(void)
{
    char dir[128], path[300];
    snprintf(dir, sizeof dir, "/tmp/scv-test-recover-%ld", (long)getpid());
    mkdir(dir, 0755);
    snprintf(path, sizeof path, "%s/seg-000-train-k2-b64.jsonl", dir);
    static const char *iter = "{\"type\": \"iter\", \"iter\": %d, \"workers\": 2, \"batch\": 64, \"t_compute\": 0.01, "
                              "\"t_comm\": 0.0, \"t_iter\": 0.01, \"grad_sqnorm_local_mean\": 1, "
                              "\"grad_sqnorm_global\": 1, \"epoch_progress\": 0.1, \"loss\": 1.0, \"samples_seen\": %d}\n";
    FILE *f = fopen(path, "w");
    CHECK(f != NULL);
    if (!f) return;
    fprintf(f, iter, 1, 64);
    fputs("{\"type\": \"note\", \"text\": \"", f); /* 20 KB: more than the 8 KiB buffer twice */
    for (int i = 0; i < 20000; i++) fputc('x', f);
    fputs("\"}\n", f);
    fprintf(f, iter, 2, 128);
    fprintf(f, "{\"type\": \"eval\", \"iter\": 2, \"epoch_progress\": 0.2, \"test_accuracy\": 5.0}\n");
    fclose(f);
    for (int stale = 0; stale < 2; stale++) {
        trainjob t;
        memset(&t, 0, sizeof t);
        snprintf(t.run_dir, sizeof t.run_dir, "%s", dir);
        snprintf(t.ckpt_dir, sizeof t.ckpt_dir, "%s/ckpt", dir);
        if (stale) /* the verdict of a segment read before */
            scv_err_set(&t.diverged, SCV_EINVAL, "the trainer diverged (loss NaN at iteration 9, other.jsonl:9)");
        scv_segment_result res;
        char phase[32];
        int K = 0, B = 0;
        scv_err e = {0};
        CHECK_EQ_INT(tj_recover(&t, 0, &res, phase, sizeof phase, &K, &B, &e), SCV_OK);
        CHECK_MSG(K == 2 && B == 64 && !strcmp(phase, "train"), "%s K=%d B=%d", phase, K, B);
        CHECK_MSG(res.iterations == 2 && res.total_iterations == 0, "%d iterations", (int)res.iterations);
        CHECK_MSG(t.lineno == 4, "%d lines", t.lineno);
        CHECK_MSG(t.diverged.code == 0, "a stale verdict kept: %s", t.diverged.msg);
        /* the one bad line is the evaluation's, named at its own line */
        CHECK_MSG(t.line_err.code && strstr(t.line_err.msg, ".jsonl:4: field 'test_accuracy'"), "%s", t.line_err.msg);
    }
    unlink(path);
    rmdir(dir);
}

/* Issue 26 item 4: the contract's schema, one table. docs/TRAINER-CONTRACT.md shows the table
 * the reader checks (between its schema marks, exactly); an error names the field that is
 * lacking, not another (a job line without act_bytes and input_floats is good; one without
 * n_train names n_train; a null t_iter is called null, not lacking), the fields required and
 * what to do; the strict reader of a trainer's segment also requires iter, samples_seen and
 * ts, and refuses an iteration line before the job line at once. */
static void t_line_schema(void)
{
    static char doc[1 << 17], want[1 << 15];
    FILE *f = fopen("docs/TRAINER-CONTRACT.md", "r");
    CHECK(f != NULL);
    size_t n = f ? fread(doc, 1, sizeof doc - 1, f) : 0;
    if (f) fclose(f);
    doc[n] = 0;
    int len = scv_ml_schema_markdown(want, sizeof want);
    CHECK(len > 0 && (size_t)len < sizeof want);
    const char *open = "<!-- schema: the table metrics_line.c checks (test_wire line_schema) -->\n";
    const char *a = strstr(doc, open), *b = a ? strstr(a, "<!-- /schema -->") : NULL;
    size_t have = a && b ? (size_t)(b - a) - strlen(open) : 0;
    int same = a && b && have == (size_t)len && !strncmp(a + strlen(open), want, have);
    if (!same) fprintf(stderr, "docs/TRAINER-CONTRACT.md's schema table should read:\n%s%s<!-- /schema -->\n", open, want);
    CHECK_MSG(same, "docs/TRAINER-CONTRACT.md does not show the reader's schema (%s)", a ? "differs" : "no marks");
    CHECK(strstr(want, "| `job` | `act_bytes` | number 0..1e+15 | no |") && strstr(want, "| `iter` | `t_iter` |") &&
          strstr(want, "| `iter` | `grad_sqnorm_global` | number 0..1e+300 | yes, may be null |"));

    scv_metrics_line m;
    scv_err e = {0};
    CHECK_EQ_INT(scv_metrics_line_parse("{\"type\":\"job\",\"params\":10,\"n_train\":640}", "j", 1, &m, &e), SCV_OK);
    CHECK_MSG(m.u.job.params == 10 && isnan(m.u.job.act_bytes), "%s", e.msg);
    struct {
        const char *line, *needle;
    } bad[] = {
        {"{\"type\":\"job\",\"params\":10,\"act_bytes\":0,\"input_floats\":0}",
         "f:1: job line lacks field 'n_train' (required: params, n_train): write it on every job line"},
        {"{\"type\":\"job\",\"n_train\":10}", "f:1: job line lacks field 'params'"},
        {"{\"type\":\"job\",\"params\":\"10\",\"n_train\":10}", "f:1: field 'params' is not a number (1..1e+15): "
                                                               "write it as a JSON number"},
        {"{\"type\":\"iter\",\"workers\":1,\"batch\":64,\"t_compute\":0,\"t_comm\":0,\"t_iter\":null,"
         "\"grad_sqnorm_local_mean\":null,\"grad_sqnorm_global\":null}",
         "f:1: field 't_iter' is null, but an iteration line needs a number there (required: workers, batch, "
         "t_compute, t_comm, t_iter; may be null: grad_sqnorm_local_mean, grad_sqnorm_global;"},
        {"{\"type\":\"eval\",\"test_accuracy\":0.5,\"set\":\"half\"}", "f:1: field 'set' = 'half': expected one of "
                                                                        "full|subset"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        scv_err le = {0};
        CHECK_EQ_INT(scv_metrics_line_parse(bad[i].line, "f", 1, &m, &le), SCV_EPARSE);
        CHECK_MSG(strstr(le.msg, bad[i].needle), "%s -> %s", bad[i].line, le.msg);
    }
    /* the strict reader of a trainer's segment */
    static const char *job = "{\"type\":\"job\",\"params\":10,\"n_train\":640}";
    static const char *it = "{\"type\":\"iter\",\"iter\":1,\"workers\":2,\"batch\":64,\"t_compute\":0.01,\"t_comm\":0,"
                            "\"t_iter\":0.01,\"grad_sqnorm_local_mean\":null,\"grad_sqnorm_global\":null,"
                            "\"samples_seen\":64}";
    scv_ml_reader r;
    scv_ml_reader_init(&r, 2);
    r.strict = 1;
    scv_err le = {0};
    CHECK_EQ_INT(scv_metrics_line_next(&r, it, "seg.jsonl", 1, &m, &le), SCV_EPARSE);
    CHECK_MSG(strstr(le.msg, "seg.jsonl:1: a 'iter' line before the job line"), "%s", le.msg);
    CHECK_EQ_INT(scv_metrics_line_next(&r, job, "seg.jsonl", 2, &m, &le), SCV_OK);
    CHECK_EQ_INT(scv_metrics_line_next(&r, it, "seg.jsonl", 3, &m, &le), SCV_EPARSE);
    CHECK_MSG(strstr(le.msg, "seg.jsonl:3: iteration line lacks field 'ts' (required: iter, workers, batch, t_compute, "
                     "t_comm, t_iter, samples_seen, ts; may be null: grad_sqnorm_local_mean, grad_sqnorm_global)"),
              "%s", le.msg);
    /* files given to plan (not strict) may leave them out */
    scv_ml_reader_init(&r, 0);
    CHECK_EQ_INT(scv_metrics_line_next(&r, it, "p.jsonl", 1, &m, &le), SCV_OK);
}

static const scv_test tests[] = {
    {"json_round_trip", t_json_round_trip}, {"json_refused", t_json_refused},
    {"env_round_trip", t_env_round_trip},   {"argv_round_trip", t_argv_round_trip},
    {"from_spec", t_from_spec},             {"line_good", t_line_good},
    {"line_bad", t_line_bad},               {"profile_strict", t_profile_strict},
    {"line_nonfinite", t_line_nonfinite},   {"line_sequence", t_line_sequence},
    {"tail_verdict", t_tail_verdict},       {"recover_lines", t_recover_lines},
    {"line_schema", t_line_schema},         {"line_contract", t_line_contract},
};
SCV_TEST_MAIN(tests)
