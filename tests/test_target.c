/*
 * test_target.c - the target's estimators (src/search/target.c, est_*.c, carryread.c) through
 * whole runs with the fake driver of loop_fake.h: a first run's absolute plan from its own
 * curve, a stored run's target learnt or carried to another value through its curve (never
 * reused as is), one that did not reach its own, the bands' calibration, a job's recipe as
 * its identity, the corpus's seeds, stored runs read on their path. The batch carry-over's
 * runs are in test_carry.c and test_floor.c.
 */
#include "loop_fake.h"
#include "corpus_fixtures.h"
#include "../src/io/io.h"

/* No target epochs given and none stored: the first plan is absolute, from the learning
 * curve of the warm-up's and search's evaluations, and close to the fake's truth. */
static void t_first_run_absolute(void)
{
    scv_store *db = open_db("curve.db");
    fake f = new_fake();
    f.tau = 10000, f.acc_c = 0.5, f.acc_gap = 0.1414, f.target = 0.9; /* 0.9 at x = 20000 */
    scv_job_driver d = driver_of(&f);
    scv_run_params p = params(db, "job-curve");
    p.target_epochs = 0, p.target_batch = 0, p.target_accuracy = 0.9;
    scv_run_result res;
    scv_err e = {0};
    CHECK_EQ_INT(scv_run(&p, &d, NULL, &res, &e), SCV_OK);
    CHECK_MSG(res.target_source == SCV_TARGET_CURVE && !res.relative, "%s", res.target_note);
    /* the curve's crossing x* = tau (gap / (1 - target))^(1/c) reference samples at B = 32; the
     * fake's smoothed rule held later (x_rule), and the plan's times include that lag */
    CHECK(res.reached);
    double x_star = fake_pow_crossing(&f, f.target), x_rule = f.x_ref;
    CHECK(x_rule > x_star);
    CHECK_EQ_INT(res.target_batch, 32);
    CHECK_NEAR(res.target_epochs * f.job.n_train, x_star, 0.05, 0);
    CHECK(res.target_epochs_lo <= res.target_epochs && res.target_epochs <= res.target_epochs_hi);
    /* the chosen configuration's predicted time from the start against the fake's truth: its
     * iterations, and the start-ups of its segments at the idle the fake takes before each */
    const scv_plan_point *ch = &res.plan->points[res.plan->chosen];
    double iters = x_rule * (1 + ch->batch / f.b_noise) / (1 + 32 / f.b_noise) / ch->batch;
    double truth = iters * fake_t_iter(&f, ch->workers, ch->batch);
    CHECK_NEAR(res.predicted_time_s - ch->idle_s, truth, 0.12, 0);
    CHECK_MSG(ch->idle_s >= f.idle_per_segment && fabs(remainder(ch->idle_s, f.idle_per_segment)) < 0.02,
              "%.3g s of segments' idle at %.3g s a segment", ch->idle_s, f.idle_per_segment);
    CHECK(res.predicted_lo_s <= res.predicted_time_s && res.predicted_time_s <= res.predicted_hi_s);
    scv_run_result_free(&res);
    /* a target the curve never reaches (asymptote 0.97): still a forecast, not nominal times:
     * out of reach within the epoch bound, with the target it would reach there instead */
    fake g = new_fake();
    g.tau = 10000, g.acc_max = 0.97, g.acc_gap = 0.5, g.target = 0.99;
    d = driver_of(&g);
    p = params(db, "job-curve-2");
    p.target_epochs = 0, p.target_batch = 0, p.target_accuracy = 0.99, p.max_epochs = 6;
    CHECK_EQ_INT(scv_run(&p, &d, NULL, &res, &e), SCV_OK);
    CHECK_MSG(res.target_source == SCV_TARGET_CURVE && !res.relative && !res.decision_relative &&
              isfinite(res.target_nearest), "%s", res.target_note); /* likely out of reach: the value reached */
    CHECK_MSG(res.target_p_reach < 0.5, "%g", res.target_p_reach);
    CHECK_MSG(res.target_nearest > 0.9 && res.target_nearest < 0.99, "%g", res.target_nearest);
    CHECK_NEAR(res.target_epochs, p.max_epochs, 1e-9, 0); /* planned to the epoch bound */
    CHECK(!res.reached);
    scv_run_result_free(&res);
    scv_store_close(db);
}

/* A stored run of the job to another target value is carried to this one through its own
 * curve, not reused as it is (issue 23: a run to 0.89 stored, its epochs predicted a run to
 * 0.875, 3.2 min against 96.5 s). A run to 0.875 takes the epochs where the stored run's
 * curve crossed 0.875, read where its evaluations fired the target rule less the rule's lag
 * there; a run to 0.95, which the stored runs never
 * reached, the stored curve's crossing extrapolated with its band; a run to 0.99, which that
 * curve never reaches, nothing from the store (this run's own curve, or nominal). */
static void t_stored_target_carried(void)
{
    scv_store *db = open_db("carry.db");
    fake f = new_fake();
    f.tau = 10000, f.acc_c = 0.5, f.acc_gap = 0.1414, f.target = 0.89;
    scv_job_driver d = driver_of(&f);
    scv_run_params p = params(db, "job-carry");
    p.target_epochs = 0, p.target_batch = 0, p.target_accuracy = 0.89;
    scv_run_result res;
    scv_err e = {0};
    CHECK_EQ_INT(scv_run(&p, &d, NULL, &res, &e), SCV_OK);
    CHECK(res.reached);
    long long first = res.run_id;
    scv_run_result_free(&res);
    scv_stored_target t[4];
    size_t n = 0;
    CHECK_EQ_INT(scv_store_targets(db, "job-carry", SCV_METRIC_ACCURACY, 0, t, 4, &n, NULL), SCV_OK);
    CHECK_EQ_INT((int)n, 1);
    CHECK_EQ_INT(t[0].batch, 32);
    double e89 = t[0].epochs, x875 = fake_rule_crossing(&f, 0, 0.875, p.policy.target_window);
    CHECK(isfinite(x875) && x875 / f.job.n_train < 0.95 * e89); /* well apart: the test tells them apart */
    /* 0.875: the epochs at which the stored run's smoothed curve crossed it, not 0.89's */
    fake g = new_fake();
    g.tau = 10000, g.acc_c = 0.5, g.acc_gap = 0.1414, g.target = 0.875;
    d = driver_of(&g);
    p.target_accuracy = 0.875;
    CHECK_EQ_INT(scv_run(&p, &d, NULL, &res, &e), SCV_OK);
    CHECK_MSG(res.target_source == SCV_TARGET_CARRIED && !res.relative, "%s: %s",
              scv_target_source_name(res.target_source), res.target_note);
    CHECK_EQ_INT(res.target_batch, 32);
    /* (the curve's own crossing, within half an evaluation period: the rule, a window of
     * three, fired over a period past it; the plan adds the rule's lag at every batch) */
    double half = 0.5 * p.policy.eval_every_epochs, c875 = fake_pow_crossing(&f, 0.875) / f.job.n_train;
    CHECK(x875 / f.job.n_train - c875 > half); /* (the rule's reading would fail) */
    CHECK_MSG(fabs(res.target_epochs - c875) < half, "%.4g epochs, the stored curve crossed at %.4g, its rule fired at "
              "%.4g (0.89: %.4g)", res.target_epochs, c875, x875 / f.job.n_train, e89);
    CHECK_MSG(res.target_source == SCV_TARGET_CARRIED && res.target_from_run == first, "%s", res.target_note);
    CHECK(res.reached);
    scv_run_result_free(&res);
    /* 0.95, beyond both stored runs' evaluations: the nearest's curve extrapolated, with a
     * band, near the fake's crossing tau ln(gap / (max - 0.95)); not 0.89's epochs */
    fake h = new_fake();
    h.tau = 10000, h.acc_c = 0.5, h.acc_gap = 0.1414, h.target = 0.95;
    d = driver_of(&h);
    p.target_accuracy = 0.95;
    CHECK_EQ_INT(scv_run(&p, &d, NULL, &res, &e), SCV_OK);
    CHECK_MSG(res.target_source == SCV_TARGET_CARRIED_CURVE, "%s: %s", scv_target_source_name(res.target_source),
              res.target_note);
    CHECK_MSG(res.target_from_run == first && res.target_curve[0], "%s", res.target_note); /* 0.89's curve */
    CHECK_NEAR(res.target_epochs * h.job.n_train, fake_pow_crossing(&h, 0.95), 0.1, 0);
    CHECK(res.target_epochs_lo <= res.target_epochs && res.target_epochs <= res.target_epochs_hi);
    CHECK(res.predicted_lo_s <= res.predicted_time_s && res.predicted_time_s <= res.predicted_hi_s);
    scv_run_result_free(&res);
    /* 0.99, which no stored curve reaches within the bound: the store does not inform it */
    fake k = new_fake();
    k.tau = 10000, k.acc_c = 0.5, k.acc_gap = 0.1414, k.target = 0.99;
    d = driver_of(&k);
    p.target_accuracy = 0.99, p.max_epochs = 6;
    p.policy.out_of_reach = 1; /* (go on to the bound: the stored runs' word is what is judged) */
    rec r = {0};
    scv_run_observer obs = {.ctx = &r, .on_event = on_event};
    CHECK_EQ_INT(scv_run(&p, &d, &obs, &res, &e), SCV_OK);
    CHECK_MSG(res.target_source == SCV_TARGET_NOMINAL || res.target_source == SCV_TARGET_CURVE, "%s: %s",
              scv_target_source_name(res.target_source), res.target_note);
    CHECK_MSG(NOTED_NUMS(&r, SCV_NOTE_STORED_UNINFORMED, NAN, NAN, 0.99), "%.1000s", r.notes); /* target 0.99 */
    CHECK(!res.reached);
    scv_run_result_free(&res);
    scv_store_close(db);
}

/* A run that did not reach its target stores it without epochs, and its evaluations inform
 * the next run to it (issue 23: the MLP's first run to 0.86 trained its 6 epochs at B=64 and
 * stopped short; its second run, told nothing, predicted 1.8 epochs at B=64 again): its
 * curve, forecast to the target, from the first plan. */
static void t_stored_target_unreached(void)
{
    scv_store *db = open_db("unreached.db");
    fake f = new_fake(); /* 0.95 at tau (gap / 0.05)^2 = 8 epochs */
    f.tau = 10000, f.acc_c = 0.5, f.acc_gap = 0.1414, f.target = 0.95;
    scv_job_driver d = driver_of(&f);
    scv_run_params p = params(db, "job-unreached");
    p.target_epochs = 0, p.target_batch = 0, p.target_accuracy = 0.95, p.max_epochs = 5;
    scv_run_result res;
    scv_err e = {0};
    CHECK_EQ_INT(scv_run(&p, &d, NULL, &res, &e), SCV_OK);
    CHECK(!res.reached);
    scv_run_result_free(&res);
    scv_stored_target t[2];
    size_t n = 0;
    CHECK_EQ_INT(scv_store_targets(db, "job-unreached", SCV_METRIC_ACCURACY, 0, t, 2, &n, NULL), SCV_OK);
    CHECK(n == 1 && t[0].value == 0.95 && isnan(t[0].epochs));
    double ep, x95 = fake_pow_crossing(&f, 0.95) / f.job.n_train;
    int b;
    CHECK_EQ_INT(scv_store_learnt_target(db, "job-unreached", SCV_METRIC_ACCURACY, 0.95, &ep, &b, NULL), SCV_ENOTFOUND);
    /* within a bound that holds it: the stored curve's crossing */
    fake g = new_fake();
    g.tau = 10000, g.acc_c = 0.5, g.acc_gap = 0.1414, g.target = 0.95;
    d = driver_of(&g);
    p.max_epochs = 12;
    CHECK_EQ_INT(scv_run(&p, &d, NULL, &res, &e), SCV_OK);
    CHECK_MSG(res.target_source == SCV_TARGET_CARRIED_CURVE &&
              res.target_from_run == 1 && res.target_curve[0], "%s: %s",
              scv_target_source_name(res.target_source), res.target_note);
    CHECK(res.target_epochs_lo <= res.target_epochs && res.target_epochs <= res.target_epochs_hi);
    CHECK_MSG(fabs(res.target_epochs / x95 - 1) < 0.15, "%.4g epochs, the curve crosses at %.4g", res.target_epochs, x95);
    CHECK(res.reached);
    scv_run_result_free(&res);
    scv_store_close(db);
}

/* A training-loss target: predicted from the loss curve on the first run, learnt from the
 * stored run on the second; an accuracy target of the same job does not learn from it. */
static void t_loss_target(void)
{
    scv_store *db = open_db("loss.db");
    fake f = loss_fake();
    scv_job_driver d = driver_of(&f);
    scv_run_params p = loss_params(db, "job-loss", 0);
    scv_run_result res;
    scv_err e = {0};
    CHECK_EQ_INT(scv_run(&p, &d, NULL, &res, &e), SCV_OK);
    CHECK_MSG(res.target_source == SCV_TARGET_CURVE && !res.relative, "%s", res.target_note);
    CHECK_MSG(!strncmp(res.target_curve, "tail", 4), "%s", res.target_note);
    /* the curve's crossing, and the fake's smoothed rule past it */
    CHECK(res.reached);
    CHECK(f.x_ref > pow(0.3 / 20, -1 / 0.4));
    CHECK_NEAR(res.target_epochs * f.job.n_train, pow(0.3 / 20, -1 / 0.4), 0.05, 0);
    const scv_plan_point *ch = &res.plan->points[res.plan->chosen];
    double iters = f.x_ref * (1 + ch->batch / f.b_noise) / (1 + 32 / f.b_noise) / ch->batch;
    CHECK_NEAR(res.predicted_time_s - ch->idle_s, iters * fake_t_iter(&f, ch->workers, ch->batch), 0.12, 0);
    scv_run_result_free(&res);
    /* the second run of the job learns the loss target from the first */
    fake g = loss_fake();
    d = driver_of(&g);
    CHECK_EQ_INT(scv_run(&p, &d, NULL, &res, &e), SCV_OK);
    CHECK_MSG(res.target_source == SCV_TARGET_LEARNT, "%s", res.target_note);
    CHECK(res.reached);
    scv_run_result_free(&res);
    /* an accuracy target of the same job: not learnt from a loss target */
    fake h = new_fake();
    h.tau = 10000, h.acc_max = 0.97, h.acc_gap = 0.5, h.target = 0.9;
    d = driver_of(&h);
    p.target_loss = 0, p.target_accuracy = 0.9;
    CHECK_EQ_INT(scv_run(&p, &d, NULL, &res, &e), SCV_OK);
    CHECK_MSG(res.target_source == SCV_TARGET_CURVE, "%s", res.target_note);
    scv_run_result_free(&res);
    /* both targets, or neither: refused, naming them */
    p.target_loss = 0.3;
    CHECK_EQ_INT(scv_run_params_check(&p, &e), SCV_EINVAL);
    CHECK_MSG(strstr(e.msg, "target-loss") && strstr(e.msg, "not both"), "%s", e.msg);
    scv_store_close(db);
}

/* A stored run that evaluated more densely than this one (every 0.1 epochs, this one every
 * 0.25): its rule fired closer to its curve, so its crossing is read less its own lag (0.15
 * epochs), and this run's plan adds its own (0.375), not the stored run's. */
static void t_stored_target_spacing(void)
{
    scv_store *db = open_db("carry-spacing.db");
    fake f = new_fake();
    f.tau = 10000, f.acc_c = 0.5, f.acc_gap = 0.1414, f.target = 0.89;
    scv_job_driver d = driver_of(&f);
    scv_run_params p = params(db, "job-spacing");
    p.target_epochs = 0, p.target_batch = 0, p.target_accuracy = 0.89, p.policy.eval_every_epochs = 0.1;
    scv_run_result res;
    scv_err e = {0};
    CHECK_EQ_INT(scv_run(&p, &d, NULL, &res, &e), SCV_OK);
    CHECK(res.reached);
    scv_run_result_free(&res);
    double x875 = fake_rule_crossing(&f, 0, 0.875, p.policy.target_window) / f.job.n_train;
    double c875 = fake_pow_crossing(&f, 0.875) / f.job.n_train, gap = NAN;
    for (int i = 1; i < f.n_ev; i++) /* the stored run's period where its rule fired */
        if (f.ev_x[i] / f.job.n_train == x875) gap = (f.ev_x[i] - f.ev_x[i - 1]) / f.job.n_train;
    CHECK_MSG(gap < 0.15, "%g", gap); /* (it fired in its training at 0.1, not at this run's 0.25) */
    fake g = new_fake();
    g.tau = 10000, g.acc_c = 0.5, g.acc_gap = 0.1414, g.target = 0.875;
    d = driver_of(&g);
    p.target_accuracy = 0.875, p.policy.eval_every_epochs = 0.25;
    CHECK_EQ_INT(scv_run(&p, &d, NULL, &res, &e), SCV_OK);
    CHECK_MSG(res.target_source == SCV_TARGET_CARRIED, "%s: %s", scv_target_source_name(res.target_source),
              res.target_note);
    /* within half the stored period of the curve's crossing; the rule's reading is not */
    CHECK(x875 - c875 > 0.05);
    CHECK_MSG(fabs(res.target_epochs - c875) < 0.05, "%.4g epochs, the curve crossed at %.4g, the stored rule fired at "
              "%.4g", res.target_epochs, c875, x875);
    /* the plan's epochs at the target's batch: the crossing and this run's lag, W D / 2 */
    const scv_plan_result *pl = res.decision;
    int found = 0;
    for (size_t i = 0; pl && i < pl->n_points; i++) {
        const scv_plan_point *q = &pl->points[i];
        if (q->batch != res.target_batch || q->comm > 0) continue;
        found = 1;
        CHECK_MSG(fabs(q->iterations * q->batch / f.job.n_train - (res.target_epochs + 1.5 * 0.25)) < 0.02,
                  "%.4g epochs planned at B=%d, the target %.4g", q->iterations * q->batch / f.job.n_train, q->batch,
                  res.target_epochs);
    }
    CHECK(found);
    CHECK(res.reached);
    scv_run_result_free(&res);
    scv_store_close(db);
}

/* A loss target is carried the same way, through the stored run's period-mean training
 * losses: a run to 0.35 after one to 0.3 takes the epochs where the stored loss curve
 * crossed 0.35 (where the losses' window did, less its lag), not the 0.3 run's. */
static void t_stored_loss_target_carried(void)
{
    scv_store *db = open_db("carry-loss.db");
    fake f = loss_fake();
    scv_job_driver d = driver_of(&f);
    scv_run_params p = loss_params(db, "job-carry-loss", 0);
    scv_run_result res;
    scv_err e = {0};
    CHECK_EQ_INT(scv_run(&p, &d, NULL, &res, &e), SCV_OK);
    CHECK(res.reached);
    scv_run_result_free(&res);
    scv_stored_target t[2];
    size_t n = 0;
    CHECK_EQ_INT(scv_store_targets(db, "job-carry-loss", SCV_METRIC_LOSS, 0, t, 2, &n, NULL), SCV_OK);
    CHECK_EQ_INT((int)n, 1);
    double x35 = fake_rule_crossing(&f, 1, 0.35, p.policy.target_window);
    CHECK(n == 1 && isfinite(x35) && x35 / f.job.n_train < 0.9 * t[0].epochs);
    fake g = loss_fake();
    g.target = 0.35;
    d = driver_of(&g);
    p.target_loss = 0.35;
    CHECK_EQ_INT(scv_run(&p, &d, NULL, &res, &e), SCV_OK);
    CHECK_MSG(res.target_source == SCV_TARGET_CARRIED, "%s: %s", scv_target_source_name(res.target_source),
              res.target_note);
    double half = 0.5 * p.policy.eval_every_epochs, c35 = pow(0.35 / 20, -1 / 0.4) / f.job.n_train;
    CHECK(x35 / f.job.n_train - c35 > half);
    CHECK_MSG(fabs(res.target_epochs - c35) < half, "%.4g epochs, the stored loss curve crossed at %.4g, its rule fired "
              "at %.4g (0.3: %.4g)", res.target_epochs, c35, x35 / f.job.n_train, n ? t[0].epochs : NAN);
    CHECK(res.reached);
    scv_run_result_free(&res);
    scv_store_close(db);
}

/* A target whose epochs stay unknown (no evaluation to fit a curve to): the times are nominal,
 * and every place that prints them says so: report.json ("nominal", the epochs assumed),
 * report.md and tradeoff.svg (nominal, not predicted), the store's run summary (the runs
 * list). A run with a given target says "predicted" and is not nominal. */
static void t_nominal_labels(void)
{
    scv_store *db = open_db("nominal.db");
    fake f = new_fake();
    f.tau = 10000, f.acc_max = 0.97, f.acc_gap = 0.5, f.target = 0.99;
    f.drift_K = 2, f.drift_B = 64, f.drift_after = 1, f.drift_factor = 3; /* a re-plan, nominal too */
    scv_job_driver d = driver_of(&f);
    scv_run_params p = params(db, "job-nominal");
    p.target_epochs = 0, p.target_batch = 0, p.target_accuracy = 0.99, p.max_epochs = 5;
    p.policy.search_eval_every_epochs = p.policy.eval_every_epochs = 100; /* no curve, ever */
    scv_run_result res;
    scv_err e = {0};
    rec ev = {0};
    scv_run_observer obs = {.ctx = &ev, .on_event = on_event};
    CHECK_EQ_INT(scv_run(&p, &d, &obs, &res, &e), SCV_OK);
    CHECK(res.decision_relative && res.target_source == SCV_TARGET_NOMINAL);
    /* the time left while training: nominal, never as a prediction */
    CHECK_MSG(ev.remaining_nominal > 0 && ev.remaining_predicted == 0, "%d nominal, %d predicted",
              ev.remaining_nominal, ev.remaining_predicted);
    /* a re-plan's reason (stored with its nominal times) says so */
    CHECK_MSG(noted_with(&ev, SCV_NOTE_REPLAN, 0, NULL, "nominal times (10 epochs assumed): "), "%.3000s", ev.notes);
    char dir[512], path[600];
    snprintf(dir, sizeof dir, "%s/nominal", tmp);
    CHECK_EQ_INT(scv_run_report_write(&p, &res, dir, &e), SCV_OK);
    snprintf(path, sizeof path, "%s/report.json", dir);
    char *js = slurp(path);
    cJSON *o = js ? cJSON_Parse(js) : NULL;
    CHECK(o != NULL);
    CHECK(cJSON_IsTrue(cJSON_GetObjectItem(o, "nominal")));
    const cJSON *ne = cJSON_GetObjectItem(o, "nominal_epochs");
    CHECK(cJSON_IsNumber(ne) && ne->valuedouble == p.policy.nominal_epochs);
    CHECK(cJSON_IsTrue(cJSON_GetObjectItem(cJSON_GetObjectItem(o, "target"), "nominal")));
    CHECK(cJSON_IsNumber(cJSON_GetObjectItem(o, "predicted_time_s"))); /* the field stays, marked */
    cJSON_Delete(o);
    free(js);
    snprintf(path, sizeof path, "%s/report.md", dir);
    char *md = slurp(path);
    CHECK(md != NULL);
    CHECK_MSG(md && strstr(md, "Nominal at the decision (10 epochs at B=32 assumed") &&
                  strstr(md, "nominal time (10 epochs assumed)"), "%.3000s", md ? md : "");
    CHECK_MSG(md && !strstr(md, "Predicted at the decision") && !strstr(md, "predicted time") &&
                  !strstr(md, "predicted cost"), "%.3000s", md ? md : "");
    free(md);
    snprintf(path, sizeof path, "%s/tradeoff.svg", dir);
    char *svg = slurp(path);
    CHECK(svg && strstr(svg, "nominal time to target (10 epochs assumed)") && !strstr(svg, "predicted time") &&
          !strstr(svg, "Predicted cost"));
    free(svg);
    scv_run_summary sum;
    CHECK_EQ_INT(scv_store_run_summary(db, res.run_id, &sum, &e), SCV_OK);
    CHECK(sum.nominal && sum.nominal_epochs == p.policy.nominal_epochs && sum.nominal_batch == 32);
    scv_run_result_free(&res);
    /* a given target: predictions, labelled so */
    fake g = new_fake();
    d = driver_of(&g);
    p = params(db, "job-given");
    CHECK_EQ_INT(scv_run(&p, &d, NULL, &res, &e), SCV_OK);
    snprintf(dir, sizeof dir, "%s/given", tmp);
    CHECK_EQ_INT(scv_run_report_write(&p, &res, dir, &e), SCV_OK);
    js = scv_run_report_json(&p, &res);
    o = js ? cJSON_Parse(js) : NULL;
    CHECK(cJSON_IsFalse(cJSON_GetObjectItem(o, "nominal")));
    cJSON_Delete(o);
    free(js);
    snprintf(path, sizeof path, "%s/report.md", dir);
    md = slurp(path);
    CHECK(md && strstr(md, "Predicted at the decision") && !strstr(md, "ominal"));
    free(md);
    CHECK_EQ_INT(scv_store_run_summary(db, res.run_id, &sum, &e), SCV_OK);
    CHECK(!sum.nominal && isnan(sum.nominal_epochs));
    scv_run_result_free(&res);
    scv_store_close(db);
}

/* The examples the calibration note counts (its first number; NaN: no such note). */
static double calib_examples(const rec *r)
{
    for (int i = 0; i < r->n_nt; i++)
        if (r->nt[i].code == SCV_NOTE_CALIBRATION && r->nt[i].n_num > 0) return r->nt[i].num[0];
    return NAN;
}

/* The band calibrated on a corpus: curves of the fake's family (power laws to the ideal with
 * tau from 0.5x to 2x the fake's, noisy) make the band an 80% one from the first plan, with
 * the examples counted in a note; a corpus that cannot be read fails the run naming it. */
static void t_calibrated_band(void)
{
    char path[600];
    snprintf(path, sizeof path, "%s/corpus.jsonl", tmp);
    FILE *f = fopen(path, "w");
    scv_rng rng;
    scv_rng_seed(&rng, 5);
    for (int c = 0; c < 12; c++) {
        double tau = 10000 * (0.5 + 1.5 * c / 11.0);
        char job[32];
        snprintf(job, sizeof job, "fake-%d", c);
        write_curve(f, &(fake_curve){.job = job,
                                     .dataset = c % 2 ? "synthetic:20000" : NULL, /* two networks' */
                                     .rule = "none",
                                     .batch = 32,
                                     .base_batch = 32,
                                     .seed = 1,
                                     .lr = 0.05,
                                     .tau = tau,
                                     .noise = &rng});
    }
    fclose(f);
    scv_store *db = open_db("calibrated.db");
    fake g = new_fake();
    g.tau = 10000, g.acc_c = 0.5, g.acc_gap = 0.1414, g.target = 0.9;
    scv_job_driver d = driver_of(&g);
    scv_run_params p = params(db, "job-calibrated");
    p.target_epochs = 0, p.target_batch = 0, p.target_accuracy = 0.9, p.curve_corpus = path;
    scv_run_result res;
    scv_err e = {0};
    rec r = {0};
    scv_run_observer obs = {.ctx = &r, .on_event = on_event};
    CHECK_MSG(scv_run(&p, &d, &obs, &res, &e) == SCV_OK, "%s", e.msg);
    CHECK_MSG(res.target_source == SCV_TARGET_CURVE && !res.decision_relative && res.target_n_calib > 0,
              "%s", res.target_note);
    CHECK_MSG(NOTED_NUMS(&r, SCV_NOTE_CALIBRATION, NAN, 12), "%.2000s", r.notes); /* 12 curves of the corpus */
    CHECK(res.target_epochs_lo <= res.target_epochs && res.target_epochs <= res.target_epochs_hi);
    CHECK_MSG(res.target_p_reach > 0.5 && res.target_p_reach <= 1, "%g: %s", res.target_p_reach, res.target_note);
    /* the fake's crossing inside the band */
    double x_star = fake_pow_crossing(&g, g.target) / g.job.n_train;
    CHECK_MSG(res.target_epochs_lo <= x_star && x_star <= res.target_epochs_hi, "%g not in %g-%g", x_star,
              res.target_epochs_lo, res.target_epochs_hi);
    CHECK(res.reached);
    scv_run_result_free(&res);
    /* other networks' examples are built for a network the corpus does not hold ("fake"),
     * not for one it holds (the corpus's "exec" on synthetic:10000): fewer examples */
    double unseen = calib_examples(&r);
    scv_store *db2 = open_db("calibrated-seen.db");
    fake s = new_fake();
    s.tau = 10000, s.acc_c = 0.5, s.acc_gap = 0.1414, s.target = 0.9;
    snprintf(s.job.model, sizeof s.job.model, "exec");
    snprintf(s.job.dataset, sizeof s.job.dataset, "synthetic:10000");
    d = driver_of(&s);
    p.store = db2;
    rec r2 = {0};
    obs.ctx = &r2;
    CHECK_MSG(scv_run(&p, &d, &obs, &res, &e) == SCV_OK, "%s", e.msg);
    CHECK_MSG(calib_examples(&r2) > 0 && calib_examples(&r2) < unseen, "%g examples seen, %g unseen",
              calib_examples(&r2), unseen);
    scv_run_result_free(&res);
    scv_store_close(db2);
    p.store = db;
    /* an unreadable corpus: the run fails, naming the file */
    snprintf(path, sizeof path, "%s/no-such-corpus.jsonl", tmp);
    fake h = new_fake();
    h.tau = 10000, h.acc_max = 0.97, h.acc_gap = 0.5, h.target = 0.9;
    d = driver_of(&h);
    CHECK_EQ_INT(scv_run(&p, &d, NULL, &res, &e) != SCV_OK, 1);
    CHECK_MSG(strstr(e.msg, "no-such-corpus.jsonl") != NULL, "%s", e.msg);
    scv_run_result_free(&res);
    scv_store_close(db);
}

/* A target learnt from a stored run gets a band: the spread of reruns (the same job, batch
 * and rule with another seed) in the shipped corpus, stated in the note and carried to the
 * predicted time. */
static void t_learnt_band(void)
{
    scv_store *db = open_db("learnt-band.db");
    fake f = new_fake();
    f.tau = 10000, f.acc_c = 0.5, f.acc_gap = 0.1414, f.target = 0.9;
    scv_job_driver d = driver_of(&f);
    scv_run_params p = params(db, "job-learnt-band");
    p.target_epochs = 0, p.target_batch = 0, p.target_accuracy = 0.9, p.curve_corpus = NULL; /* data/curves.jsonl */
    scv_run_result res;
    scv_err e = {0};
    CHECK_MSG(scv_run(&p, &d, NULL, &res, &e) == SCV_OK, "%s", e.msg);
    scv_run_result_free(&res);
    fake g = new_fake();
    g.tau = 10000, g.acc_c = 0.5, g.acc_gap = 0.1414, g.target = 0.9;
    d = driver_of(&g);
    CHECK_MSG(scv_run(&p, &d, NULL, &res, &e) == SCV_OK, "%s", e.msg);
    CHECK_MSG(res.target_source == SCV_TARGET_LEARNT && res.target_n_calib > 0, "%s", /* the corpus's reruns */
              res.target_note);
    CHECK(res.target_epochs_lo < res.target_epochs && res.target_epochs < res.target_epochs_hi);
    CHECK(res.predicted_lo_s < res.predicted_time_s && res.predicted_time_s < res.predicted_hi_s);
    scv_run_result_free(&res);
    scv_store_close(db);
}

/* A stored run's crossing is where its confirmation accepted it: a subset's window fires above
 * the whole set's accuracy, and the trainer refuses that firing and trains on (an MLP's first
 * run of bench decide fired at 1.04 epochs and reached at 2.67; its second run had learnt
 * 0.84). A first run whose first training segment refuses every firing (the fake's
 * refuse_train) reaches in a later one; its second run learns the later crossing. */
static void t_stored_refused(void)
{
    scv_store *db = open_db("refused.db");
    fake f = new_fake();
    f.tau = 10000, f.acc_c = 0.5, f.acc_gap = 0.1414, f.target = 0.88, f.refuse_train = 1;
    scv_job_driver d = driver_of(&f);
    scv_run_params p = params(db, "job-refused");
    p.target_epochs = 0, p.target_batch = 0, p.target_accuracy = 0.88, p.curve_corpus = NULL;
    scv_run_result res;
    scv_err e = {0};
    CHECK_MSG(scv_run(&p, &d, NULL, &res, &e) == SCV_OK && res.reached, "%s", e.msg);
    /* the first training step did not end reached, though the window stood at the target in
     * it: the curve crosses 0.88 at 1.39 epochs of B=32 (reference samples), and the step
     * trained past it */
    double cross = fake_pow_crossing(&f, 0.88) / f.job.n_train, ref = 0;
    int refused_step = 0;
    for (size_t i = 0; i < res.n_steps && !refused_step; i++)
        refused_step = !strcmp(res.steps[i].phase, "train") && !res.steps[i].reached;
    for (int i = 0; i < f.n_ev; i++) ref = fmax(ref, f.ev_x[i] / f.job.n_train);
    CHECK_MSG(refused_step && ref > 2 * cross, "a refusing step %d, the run's curve to %.2f epochs", refused_step, ref);
    scv_run_result_free(&res);
    fake g = new_fake();
    g.tau = 10000, g.acc_c = 0.5, g.acc_gap = 0.1414, g.target = 0.88;
    d = driver_of(&g);
    CHECK_MSG(scv_run(&p, &d, NULL, &res, &e) == SCV_OK, "%s", e.msg);
    /* learnt where the first run reached (4.04 epochs at B=32), not at its refused firings (1.43) */
    CHECK_MSG(res.target_source == SCV_TARGET_LEARNT && res.target_epochs > 2 * cross, "%s: %.2f epochs",
              res.target_note, res.target_epochs);
    scv_run_result_free(&res);
    scv_store_close(db);
}

/* A job's identity is its recipe (issue 37 item 1): a stored run of the same model and data
 * under another learning rate does not inform the target (before: "learnt from stored run 1
 * of the job" across learning rates); the same recipe written otherwise ("1e-2" for "0.01",
 * a default given or left out) does. */
static void t_recipe_identity(void)
{
    char a[512], b[512];
    CHECK_EQ_INT(scv_job_recipe("{\"lr\":\"0.01\",\"momentum\":\"0.9\"}", a, sizeof a), SCV_OK);
    CHECK_EQ_INT(scv_job_recipe("{\"lr\":\"1e-2\",\"model\":\"mlp\"}", b, sizeof b), SCV_OK);
    CHECK_MSG(!strcmp(a, b) && strstr(a, "lr=0.01;momentum=0.9;"), "%s | %s", a, b);
    CHECK_EQ_INT(scv_job_recipe("{\"lr\":\"0.01\",\"lr-scaling\":\"sqrt\"}", b, sizeof b), SCV_OK);
    CHECK(strcmp(a, b) != 0);
    scv_job_recipe(NULL, a, sizeof a), scv_job_recipe("{}", b, sizeof b);
    CHECK(!strcmp(a, b));
    scv_store *db = open_db("recipe.db");
    scv_run_result res;
    scv_err e = {0};
    const char *recipes[] = {"{\"lr\":\"0.01\"}", "{\"lr\":\"0.1\"}", "{\"lr\":\"1e-2\"}"};
    for (int k = 0; k < 3; k++) {
        fake f = new_fake();
        f.tau = 10000, f.acc_c = 0.5, f.acc_gap = 0.1414, f.target = 0.9;
        scv_job_driver d = driver_of(&f);
        scv_run_params p = params(db, "job-recipe");
        p.target_epochs = 0, p.target_batch = 0, p.target_accuracy = 0.9, p.job_json = recipes[k];
        CHECK_MSG(scv_run(&p, &d, NULL, &res, &e) == SCV_OK, "%s", e.msg);
        if (k == 1) /* another learning rate: the stored run is left out */
            CHECK_MSG(res.target_source != SCV_TARGET_LEARNT && res.target_source != SCV_TARGET_CARRIED &&
                          res.target_source != SCV_TARGET_CARRIED_CURVE, "%s", res.target_note);
        if (k == 2) /* the first run's recipe again */
            CHECK_MSG(res.target_source == SCV_TARGET_LEARNT && res.target_from_run == 1, "%s",
                      res.target_note);
        scv_run_result_free(&res);
    }
    scv_store_close(db);
}

/* A corpus curve of the fake's family at B=32 under `lr` (base batch 64, no rule), with `arch`
 * ("": the line has none) and extra fields ("\"momentum\":0,", or ""). */
static void corpus_curve(FILE *f, const char *job, const char *arch, double lr, int seed, double tau, const char *extra)
{
    char more[160];
    snprintf(more, sizeof more, "%s%s%s%s", extra, arch[0] ? "\"arch\":\"" : "", arch, arch[0] ? "\"," : "");
    write_curve(f, &(fake_curve){.job = job,
                                 .rule = "none",
                                 .extra = more,
                                 .batch = 32,
                                 .base_batch = 64,
                                 .seed = seed,
                                 .lr = lr,
                                 .tau = tau});
}

/* CORPUS (issue 37 item 4): the corpus's curves of the job itself (its network, data and
 * recipe) give the first plan the seeds' median crossing with their span as the band's floor
 * (a target near the plateau is wide by seed, and says so); curves of the job under another
 * learning rate or momentum, or without the network named, are not read as the job's. */
static void t_corpus_seeds(void)
{
    char path[600];
    snprintf(path, sizeof path, "%s/seeds.jsonl", tmp);
    FILE *f = fopen(path, "w");
    corpus_curve(f, "fake-a", "fake:784-10", 0.05, 1, 8000, "");                /* crosses at 1.6 epochs */
    corpus_curve(f, "fake-a", "fake:784-10", 0.05, 2, 16000, "");               /* ... at 3.2 */
    corpus_curve(f, "fake-b", "fake:784-10", 0.01, 1, 2000, "");                /* another recipe: 0.4 */
    corpus_curve(f, "fake-c", "", 0.05, 1, 2000, "");                           /* the network not named */
    corpus_curve(f, "fake-d", "fake:784-10", 0.05, 1, 2000, "\"momentum\":0,"); /* without momentum: 0.4 */
    corpus_curve(f, "fake-d", "fake:784-10", 0.05, 2, 4000, "\"momentum\":0,"); /* ... 0.8 */
    fclose(f);
    double lo_seed = 1.6, hi_seed = 3.2;
    for (int k = 0; k < 3; k++) {
        static const char *const db_name[] = {"seeds.db", "seeds-other.db", "seeds-sgd.db"};
        scv_store *db = open_db(db_name[k]);
        fake g = new_fake();
        g.tau = 10000, g.acc_c = 0.5, g.acc_gap = 0.1414, g.target = 0.9;
        snprintf(g.job.arch, sizeof g.job.arch, "fake:784-10");
        snprintf(g.job.dataset, sizeof g.job.dataset, "synthetic:10000");
        scv_job_driver d = driver_of(&g);
        scv_run_params p = params(db, "job-seeds");
        p.target_epochs = 0, p.target_batch = 0, p.target_accuracy = 0.9, p.curve_corpus = path;
        /* the built-in recipe (lr 0.05, base batch 64, momentum 0.9), another lr, no momentum */
        p.job_json = k == 1 ? "{\"lr\":\"0.02\"}" : k == 2 ? "{\"momentum\":\"0\"}" : NULL;
        if (k == 2) lo_seed = 0.4, hi_seed = 0.8;
        scv_run_result res;
        scv_err e = {0};
        CHECK_MSG(scv_run(&p, &d, NULL, &res, &e) == SCV_OK, "%s", e.msg);
        if (k == 1) {
            CHECK_MSG(res.target_source != SCV_TARGET_CORPUS, "%s", res.target_note);
        } else {
            CHECK_MSG(res.target_source == SCV_TARGET_CORPUS && res.target_batch == 32, "%s", res.target_note);
            CHECK_MSG(fabs(res.target_epochs - sqrt(lo_seed * hi_seed)) < 0.1, "%g: %s", res.target_epochs,
                      res.target_note);
            CHECK_MSG(res.target_epochs_lo <= lo_seed + 0.05 && res.target_epochs_hi >= hi_seed - 0.05, "%g-%g: %s",
                      res.target_epochs_lo, res.target_epochs_hi, res.target_note);
            CHECK_MSG(strstr(res.target_note, "2 curves") != NULL, "%s", res.target_note);
        }
        scv_run_result_free(&res);
        scv_store_close(db);
    }
}

/* Stored runs read on their path (issue 37 item 2): a first run that warmed up and searched
 * at B=32 and trained at another batch reached its target on that path, not at one
 * configuration from its start; a second run counts its progress segment by segment at the
 * batch it ran (the fake's law: reference samples B (1 + 32/Bn) / (1 + B/Bn) a step) and
 * predicts every configuration of its plan from the start: the fake's truth there, 2 tau
 * (1 + B/Bn) / (1 + 32/Bn) samples plus the rule's lag, inside each point's band and within
 * 5% of its point. */
static void t_stored_path(void)
{
    scv_store *db = open_db("path.db");
    scv_run_result res;
    scv_err e = {0};
    scv_run_params p = params(db, "job-path");
    p.target_epochs = 0, p.target_batch = 0, p.target_accuracy = 0.9, p.curve_corpus = NULL; /* the reruns' band */
    for (int k = 0; k < 2; k++) {
        fake f = new_fake();
        f.tau = 10000, f.acc_c = 0.5, f.acc_gap = 0.1414, f.target = 0.9;
        scv_job_driver d = driver_of(&f);
        CHECK_MSG(scv_run(&p, &d, NULL, &res, &e) == SCV_OK, "%s", e.msg);
        CHECK(res.reached);
        if (!k) { /* the first run's path: more than one batch */
            scv_run_step *steps;
            size_t n = 0, other = 0;
            CHECK_EQ_INT(scv_store_load_steps(db, res.run_id, &steps, &n, &e), SCV_OK);
            for (size_t i = 0; i < n; i++) other += steps[i].batch != steps[0].batch;
            CHECK_MSG(other > 0, "%zu steps, all at B=%d", n, n ? steps[0].batch : 0);
            free(steps);
        } else {
            CHECK_MSG(res.target_source == SCV_TARGET_LEARNT, "%s", res.target_note);
            const scv_plan_result *pl = res.decision;
            CHECK(pl && pl->n_points > 0);
            double lag = p.policy.target_window * p.policy.eval_every_epochs / 2 * f.job.n_train;
            for (size_t i = 0; pl && i < pl->n_points; i++) {
                const scv_plan_point *pt = &pl->points[i];
                double B = pt->batch,
                       truth = (fake_pow_crossing(&f, 0.9) * (1 + B / f.b_noise) / (1 + 32 / f.b_noise) + lag) / B;
                double lo = pt->iterations * pt->time_lo_s / pt->time_s,
                       hi = pt->iterations * pt->time_hi_s / pt->time_s;
                CHECK_MSG(pt->time_lo_s > 0 && lo <= truth && truth <= hi,
                          "K=%d B=%d: %.0f iterations (band %.0f-%.0f), "
                          "from the start %.0f: %s",
                          pt->workers, pt->batch, pt->iterations, lo, hi, truth, res.target_note);
                /* and near it: the fake's law is exact (its samples all counted at B=64, as if
                 * the path were one configuration, the points stand 26% above) */
                CHECK_MSG(fabs(pt->iterations / truth - 1) < 0.05, "K=%d B=%d: %.0f iterations, from the start %.0f",
                          pt->workers, pt->batch, pt->iterations, truth);
            }
        }
        scv_run_result_free(&res);
    }
    scv_store_close(db);
}

static const scv_test tests[] = {
    {"recipe_identity", t_recipe_identity},
    {"corpus_seeds", t_corpus_seeds},
    {"stored_path", t_stored_path},
    {"first_run_absolute", t_first_run_absolute},
    {"loss_target", t_loss_target},
    {"stored_target_carried", t_stored_target_carried},
    {"stored_loss_target_carried", t_stored_loss_target_carried},
    {"stored_target_spacing", t_stored_target_spacing},
    {"stored_target_unreached", t_stored_target_unreached},
    {"nominal_labels", t_nominal_labels},
    {"calibrated_band", t_calibrated_band},
    {"learnt_band", t_learnt_band},
    {"stored_refused", t_stored_refused},
};
LOOP_TEST_MAIN(tests, "target")
