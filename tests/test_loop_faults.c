/*
 * test_loop_faults.c - the Scavenger loop under stops, failures and preemptions (src/search/
 * loop.c, segment.c, record.c) with the fake driver of loop_fake.h: a stop between segments,
 * interruption and resume from the store, a driver failure and its retry limit, failures that
 * each leave the checkpoint further on, preemptions the job survived in place (noted, not read
 * as drift, a shrink without its VM back labelled).
 */
#include "loop_fake.h"

/* A stop between segments (scv_run_observer.stop_requested: the CLI's SIGINT/SIGTERM while
 * no driver held them): the run stops before the next segment, interrupted and resumable. */
static int stop_after_two(void *ctx)
{
    const rec *r = ctx;
    int n = 0;
    for (const char *q = r->seq; (q = strchr(q, ':')); q++) n++;
    return n >= 2;
}

static void t_stop_between_segments(void)
{
    scv_store *db = open_db("stop.db");
    fake f = new_fake();
    scv_job_driver d = driver_of(&f);
    rec r;
    memset(&r, 0, sizeof r);
    scv_run_observer obs = {.ctx = &r, .on_event = on_event, .stop_requested = stop_after_two};
    scv_run_params p = params(db, "job-stop");
    scv_run_result res;
    scv_err e = {0};
    CHECK_EQ_INT(scv_run(&p, &d, &obs, &res, &e), SCV_EINTR);
    CHECK(res.state == SCV_STATE_INTERRUPTED && !res.budget_stopped);
    CHECK_EQ_INT(res.n_steps, 2); /* the warm-up and one search step, no third segment started */
    CHECK_MSG(!strchr(strchr(r.seq, ' ') + 1, ' '), "%s", r.seq);
    long long id = res.run_id;
    scv_run_result_free(&res);
    memset(&r, 0, sizeof r);
    obs.stop_requested = NULL;
    p.resume_run = id;
    CHECK_EQ_INT(scv_run(&p, &d, &obs, &res, &e), SCV_OK);
    CHECK(res.reached && res.run_id == id);
    scv_run_result_free(&res);
    scv_store_close(db);
}

static void t_interrupt_resume(void)
{
    scv_store *db = open_db("int.db");
    fake f = new_fake();
    f.interrupt_at_call = 3; /* during the second search segment */
    scv_job_driver d = driver_of(&f);
    rec r;
    memset(&r, 0, sizeof r);
    scv_run_observer obs = {.ctx = &r, .on_event = on_event};
    scv_run_params p = params(db, "job-int");
    scv_run_result res;
    scv_err e = {0};
    CHECK_EQ_INT(scv_run(&p, &d, &obs, &res, &e), SCV_EINTR);
    CHECK(res.state == SCV_STATE_INTERRUPTED);
    long long id = res.run_id;
    CHECK_EQ_INT(res.n_steps, 2); /* warm-up and one search step are stored */
    scv_run_result_free(&res);
    scv_run_summary s;
    CHECK_EQ_INT(scv_store_run_summary(db, id, &s, NULL), SCV_OK);
    CHECK(!strcmp(s.status, "interrupted"));
    /* resume: no second warm-up, the profiled configuration is not profiled again */
    memset(&r, 0, sizeof r);
    f.interrupt_at_call = 0;
    p.resume_run = id;
    CHECK_EQ_INT(scv_run(&p, &d, &obs, &res, &e), SCV_OK);
    const char *want = "search:1,128 search:4,32 search:4,128 train:";
    CHECK_MSG(!strncmp(r.seq, want, strlen(want)), "%s", r.seq);
    CHECK(res.reached && res.run_id == id);
    CHECK(res.n_steps >= 7);
    /* the interrupted segment is recovered as a step, and its time counts */
    CHECK_MSG(!strcmp(res.steps[2].phase, "search") && res.steps[2].workers == 1 && res.steps[2].batch == 128 &&
                  res.steps[2].iterations == 5,
              "%s %d %d %lld", res.steps[2].phase, res.steps[2].workers, res.steps[2].batch,
              (long long)res.steps[2].iterations);
    CHECK(isnan(res.steps[3].idle_before)); /* the interruption is not the loop's idle */
    scv_run_result_free(&res);
    /* a done run cannot be resumed */
    CHECK_EQ_INT(scv_run(&p, &d, &obs, &res, &e), SCV_EINVAL);
    CHECK(strstr(e.msg, "already done") != NULL);
    scv_run_result_free(&res);
    /* interrupted after the decision: resumes training at the stored decision */
    fake g = new_fake();
    g.need_e0 = 30;
    g.interrupt_at_call = 6, g.interrupt_after = 1000;                /* in the first training segment */
    g.tau = 60000, g.acc_max = 0.97, g.acc_gap = 0.5, g.target = 0.9; /* evaluated: stored while it trained */
    d = driver_of(&g);
    p = params(db, "job-int2");
    p.target_epochs = 30, p.target_batch = 32;
    CHECK_EQ_INT(scv_run(&p, &d, &obs, &res, &e), SCV_EINTR);
    int K = res.plan ? res.plan->points[res.plan->chosen].workers : 0;
    id = res.run_id;
    scv_run_result_free(&res);
    memset(&r, 0, sizeof r);
    p.resume_run = id;
    CHECK_EQ_INT(scv_run(&p, &d, &obs, &res, &e), SCV_OK);
    CHECK_MSG(!strncmp(r.seq, "train:", 6), "%s", r.seq);
    CHECK_EQ_INT(res.steps[5].workers, K);
    /* the recovered segment's samples count at its own batch (not the last stored step's,
     * a search at another): the time left at the resumed decision is the chosen
     * configuration's for the share of the target not done, as t_eta_share_done counts it */
    CHECK(res.steps[5].iterations == 1000 && res.steps[4].batch != res.steps[5].batch && res.n_forecasts > 0);
    double share = 0;
    for (size_t i = 0; i <= 5; i++)
        share += res.steps[i].iterations / scv_stat_iterations(&res.stat, res.steps[i].batch);
    double want_s = (1 - share) * res.predicted_time_s;
    CHECK_MSG(share > 0.1 && share < 1 && fabs(res.forecasts[0].remaining_s / want_s - 1) < 0.02,
              "time left %.4g s at the resumed decision, want %.4g s (%.3g done)", res.forecasts[0].remaining_s, want_s,
              share);
    scv_run_result_free(&res);
    scv_store_close(db);
}

static void t_failure_retries(void)
{
    scv_store *db = open_db("fail.db");
    fake f = new_fake();
    f.fail_calls = 2; /* within the limit: retried */
    scv_job_driver d = driver_of(&f);
    rec r;
    memset(&r, 0, sizeof r);
    scv_run_observer obs = {.ctx = &r, .on_event = on_event};
    scv_run_params p = params(db, "job-f");
    scv_run_result res;
    scv_err e = {0};
    CHECK_EQ_INT(scv_run(&p, &d, &obs, &res, &e), SCV_OK);
    CHECK_EQ_INT(r.retries, 2);
    CHECK(res.reached);
    scv_run_result_free(&res);
    /* past the limit: FAILED, the message says why, the store says failed */
    fake g = new_fake();
    g.fail_calls = 3;
    d = driver_of(&g);
    p = params(db, "job-g");
    int rc = scv_run(&p, &d, &obs, &res, &e);
    CHECK_EQ_INT(rc, SCV_EMPI);
    CHECK(res.state == SCV_STATE_FAILED);
    CHECK_MSG(strstr(e.msg, "a rank died") && strstr(e.msg, "retries are spent"), "%s", e.msg);
    scv_run_summary s;
    CHECK_EQ_INT(scv_store_run_summary(db, res.run_id, &s, NULL), SCV_OK);
    CHECK(!strcmp(s.status, "failed"));
    scv_run_result_free(&res);
    /* the job's files cannot be written (SCV_EIO, a full disk): no retry at all */
    fake h = new_fake();
    h.fail_calls = 1, h.fail_code = SCV_EIO;
    d = driver_of(&h);
    p = params(db, "job-h");
    rec rh = {0};
    obs.ctx = &rh;
    CHECK_EQ_INT(scv_run(&p, &d, &obs, &res, &e), SCV_EIO);
    CHECK_EQ_INT(rh.retries, 0);
    CHECK_EQ_INT(h.calls, 1);
    CHECK(res.state == SCV_STATE_FAILED && strstr(e.msg, "disk full"));
    scv_run_result_free(&res);
    scv_store_close(db);
}

/* Preemptions the driver survived in place: each noted, kept in the result and the report,
 * and the segment (trained at two K) not taken as a measurement of its configuration. */
static void t_preempt_survived(void)
{
    scv_store *db = open_db("survived.db");
    fake f = new_fake();
    f.preempt_at_call = 1; /* the warm-up's segment at K=2 */
    scv_job_driver d = driver_of(&f);
    rec r = {0};
    scv_run_observer obs = {.ctx = &r, .on_event = on_event};
    scv_run_params p = params(db, "job-survived");
    scv_run_result res;
    scv_err e = {0};
    CHECK_MSG(scv_run(&p, &d, &obs, &res, &e) == SCV_OK, "%s", e.msg);
    CHECK_MSG(NOTED_NUMS(&r, SCV_NOTE_PREEMPT_NOTICE, 1) && NOTED_NUMS(&r, SCV_NOTE_PREEMPT_RESTORED, 1), "%.3000s",
              r.notes); /* process 1 */
    CHECK(res.n_preemptions == 2 && !res.preemptions[0].restored && res.preemptions[1].restored);
    CHECK_MSG(NOTED_NUMS(&r, SCV_NOTE_WARMUP_REMEASURED, 2, 32) && res.n_steps >= 2 &&
                  !strcmp(res.steps[1].phase, "warmup"),
              "%.2000s", r.notes);
    char *js = scv_run_report_json(&p, &res);
    CHECK(js && strstr(js, "\"preemptions\":[{\"iteration\":") && strstr(js, "\"event\":\"restored\""));
    free(js);
    /* the warm-up's segment is not a measurement: only its repeat's is stored */
    scv_config_stats *cs;
    size_t n;
    CHECK(scv_store_run_measurements(db, res.run_id, &cs, &n, NULL) == SCV_OK);
    int warm_k2 = 0;
    for (size_t i = 0; i < n; i++) warm_k2 += cs[i].workers == 2 && cs[i].batch == 32;
    free(cs);
    CHECK_MSG(res.steps[0].workers == 2 && warm_k2 == 1, "K=2 B=32 stored %d times", warm_k2);
    /* priced at the K that ran: the worker the notice took is not billed until it is back */
    double at_k = 0, price = scv_catalog_find(p.catalog, "c5.xlarge")->ondemand;
    for (size_t i = 0; i < res.n_steps; i++) {
        const scv_run_step *t = &res.steps[i];
        CHECK(!t->vm[0] || !strcmp(t->vm, "c5.xlarge"));
        at_k += t->workers *
                ((t->iterations ? t->last_end - t->first_start : 0) + (isfinite(t->idle_before) ? t->idle_before : 0)) *
                price / 3600;
    }
    CHECK_MSG(f.short_s > 0, "%g", f.short_s);
    CHECK_NEAR(res.actual_cost, at_k - f.short_s * price / 3600, 1e-9, 0);
    scv_run_result_free(&res);
    scv_store_close(db);
}

/* A training segment that ran a stretch below its K (a preemption's shrink, here at a third
 * of the iteration time over most of it) measured no iteration at K: its mean is no drift
 * of the plan's, and nothing is re-planned for it. */
static void t_preempt_no_drift(void)
{
    scv_store *db = open_db("preempt-drift.db");
    fake f = new_fake();
    f.preempt_train = 1, f.preempt_iters = 100000, f.short_t_factor = 0.3;
    scv_job_driver d = driver_of(&f);
    rec r = {0};
    scv_run_observer obs = {.ctx = &r, .on_event = on_event};
    scv_run_params p = params(db, "job-preempt-drift");
    p.search = SCV_SEARCH_NONE;
    scv_run_result res;
    scv_err e = {0};
    CHECK_MSG(scv_run(&p, &d, &obs, &res, &e) == SCV_OK, "%s", e.msg);
    CHECK_MSG(NOTED_NUMS(&r, SCV_NOTE_PREEMPT_NOTICE, 1), "%.3000s", r.notes);
    CHECK_MSG(!noted(&r, SCV_NOTE_DRIFT) && !noted(&r, SCV_NOTE_DRIFT_OPTION) && !noted(&r, SCV_NOTE_DRIFT_OTHER_VM),
              "%.3000s", r.notes);
    scv_run_result_free(&res);
    scv_store_close(db);
}

/* Failures that each leave the checkpoint further on (a take-down after a while, as spot
 * VMs have them) do not spend the run's retries: only failures in a row without progress
 * do. Four such failures, two retries: the run goes on to its target. */
static void t_retries_progress(void)
{
    scv_store *db = open_db("retries-progress.db");
    fake f = new_fake();
    f.fail_calls = 4, f.fail_progress_iters = 10;
    scv_job_driver d = driver_of(&f);
    rec r = {0};
    scv_run_observer obs = {.ctx = &r, .on_event = on_event};
    scv_run_params p = params(db, "job-retries-progress");
    scv_run_result res;
    scv_err e = {0};
    CHECK_MSG(scv_run(&p, &d, &obs, &res, &e) == SCV_OK, "%s", e.msg);
    CHECK(res.reached && r.retries == 4);
    scv_run_result_free(&res);
    /* without progress the third failure in a row ends the run */
    fake g = new_fake();
    g.fail_calls = 3;
    d = driver_of(&g);
    p = params(db, "job-retries-none");
    CHECK(scv_run(&p, &d, NULL, &res, &e) != SCV_OK && strstr(e.msg, "retries are spent"));
    scv_run_result_free(&res);
    scv_store_close(db);
}

/* A preemption the job survives without its VM coming back (issue 38 item 13): the job runs
 * at K - 1 from then on, and the next segment and the re-plan say so (before: the step
 * labels and the re-plan kept the decision's K). */
static void t_preempt_shrunk_label(void)
{
    scv_store *db = open_db("shrunk.db");
    fake f = new_fake();
    f.preempt_train = 1, f.preempt_no_restore = 1; /* the first training segment: a notice alone */
    f.drift_K = 0;
    scv_job_driver d = driver_of(&f);
    rec r = {0};
    scv_run_observer obs = {.ctx = &r, .on_event = on_event};
    scv_run_params p = params(db, "job-shrunk");
    p.workers[0] = 1, p.workers[1] = 2, p.workers[2] = 4, p.n_workers = 3;
    scv_run_result res;
    scv_err e = {0};
    CHECK_MSG(scv_run(&p, &d, &obs, &res, &e) == SCV_OK, "%s", e.msg);
    int first_train = -1;
    for (size_t i = 0; i < res.n_steps && first_train < 0; i++)
        if (!strcmp(res.steps[i].phase, "train")) first_train = (int)i;
    CHECK(first_train >= 0 && noted(&r, SCV_NOTE_PREEMPT_NOTICE));
    CHECK_MSG(first_train >= 0 && (size_t)first_train + 1 < res.n_steps, "%zu steps, the first training one %d",
              res.n_steps, first_train); /* (a step after the shrink to judge) */
    if (first_train >= 0 && (size_t)first_train + 1 < res.n_steps) {
        int K0 = res.steps[first_train].workers, K1 = res.steps[first_train + 1].workers;
        CHECK_MSG(K1 == K0 - 1 || noted_with(&r, SCV_NOTE_REPLAN, 0, NULL, "switch to"),
                  "trained at K=%d, then labelled K=%d: %.2000s", K0, K1, r.notes);
        CHECK_MSG(K1 != K0, "the step after the shrink still says K=%d", K1);
    }
    scv_run_result_free(&res);
    scv_store_close(db);
}

static const scv_test tests[] = {
    {"stop_between_segments", t_stop_between_segments},
    {"interrupt_resume", t_interrupt_resume},
    {"failure_retries", t_failure_retries},
    {"retries_progress", t_retries_progress},
    {"preempt_survived", t_preempt_survived},
    {"preempt_no_drift", t_preempt_no_drift},
    {"preempt_shrunk_label", t_preempt_shrunk_label},
};
LOOP_TEST_MAIN(tests, "loop_faults")
