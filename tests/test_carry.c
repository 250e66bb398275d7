/*
 * test_carry.c - the batch carry-over through whole runs with the fake driver of loop_fake.h
 * (src/search/carryread.c, src/model/carry.c): the progress model counting a probe's read,
 * the carry learnt from the corpus's curves of the job, a rule's exponent from other jobs
 * with its band, the probe and the run's own read, AdaScale's measured law. The noise floor's
 * carry has its own file, test_floor.c.
 */
#include "loop_fake.h"
#include "corpus_fixtures.h"
#include "../src/io/io.h"

/* The run's own carry read from a probe (scv_carry_law's run fields), as the progress model
 * counts the samples so far: a sample at the read's batch b counts at its rate on the
 * reference batch's curve, an evaluation there is moved by its level onto that curve (a
 * curve y = 0.2 + 2 / sqrt(u) traced at B=64, B=256 at half the rate and 0.05 lower, B=64
 * again, forecasts its crossing where the curve does), and a crossing of the target at b
 * stands for the reference curve's crossing when that is later. Another reference batch
 * carries by gamma. */
static double probe_curve(double u) { return 0.2 + 2 / sqrt(u); }

/* The curve traced at 64, 256 (from 1000 to 2000 samples: half the rate, `level` off) and
 * 64 again, evaluated every 100 samples to 3000. */
static void probe_progress(progress *g, double level)
{
    CHECK_EQ_INT(progress_segment(g, 0, 64), SCV_OK);
    CHECK_EQ_INT(progress_segment(g, 1000, 256), SCV_OK);
    CHECK_EQ_INT(progress_segment(g, 2000, 64), SCV_OK);
    for (double x = 100; x <= 3000 + 1e-9; x += 100) {
        double u = x <= 1000 ? x : x <= 2000 ? 1000 + 0.5 * (x - 1000) : 1500 + (x - 2000);
        CHECK_EQ_INT(progress_eval_add(g, x, probe_curve(u) + (x > 1000 && x <= 2000 ? level : 0), NAN, NAN), SCV_OK);
    }
}

static void t_progress_run_read(void)
{
    progress g = {0};
    probe_progress(&g, -0.05);
    scv_carry_law law = {.b_noise = NAN,
                         .gamma = 0.5,
                         .run_b0 = 64,
                         .run_b = 256,
                         .run_rate = 0.5,
                         .run_level = -0.05,
                         .run_cross0 = 1900,
                         .run_until = INFINITY};
    CHECK_EQ_INT(progress_batch_at(&g, 1500), 256);
    CHECK(fabs(progress_ref_samples(&g, 2500, 64, law) - 2000) < 1e-9);
    CHECK(fabs(progress_crossing_samples(&g, 2500, 64, law) - 2000) < 1e-9); /* at b0: its position */
    CHECK(fabs(progress_crossing_samples(&g, 1500, 64, law) - 1900) < 1e-9); /* at b: the curve's, later */
    law.run_cross0 = 1100;
    CHECK(fabs(progress_crossing_samples(&g, 1500, 64, law) - 1250) < 1e-9); /* ... its own when later */
    /* another reference batch: the exponent, (32 / 256)^0.5 a sample at 256, (32 / 64)^0.5 at 64 */
    CHECK(fabs(progress_ref_samples(&g, 2500, 32, law) - (1500 * sqrt(0.5) + 1000 * sqrt(0.125))) < 1e-6);
    /* read at 1500 samples: the samples at 256 after it carry by the exponent (0.25 here), and
     * a crossing there by its position */
    scv_carry_law upto = law;
    upto.gamma = 0.25, upto.run_until = 1500, upto.run_cross0 = 1900;
    CHECK(fabs(progress_ref_samples(&g, 2500, 64, upto) - (1000 + 250 + 500 * pow(0.25, 0.25) + 500)) < 1e-6);
    CHECK(fabs(progress_crossing_samples(&g, 1800, 64, upto) - (1000 + 250 + 300 * pow(0.25, 0.25))) < 1e-6);
    /* the forecast from the probed curve, moved by the level, is the unprobed curve's; not
     * moved, it is not */
    double target = probe_curve(4000);
    progress clean = {0};
    probe_progress(&clean, 0);
    progress_pred pr, pc, pn;
    progress_predict(&g, SCV_METRIC_LOSS, target, 64, law, 1, NULL, 60000, NULL, 1e6, &pr);
    scv_carry_law flat = law;
    flat.run_level = 0;
    progress_predict(&clean, SCV_METRIC_LOSS, target, 64, flat, 1, NULL, 60000, NULL, 1e6, &pc);
    progress_predict(&g, SCV_METRIC_LOSS, target, 64, flat, 1, NULL, 60000, NULL, 1e6, &pn);
    CHECK_MSG(pr.ok && pc.ok && pn.ok && fabs(pr.x_now - 2500) < 1e-6, "%s %s", pr.why, pc.why);
    CHECK_MSG(fabs(pr.x_star / pc.x_star - 1) < 0.01 && fabs(pn.x_star / pc.x_star - 1) > 0.05,
              "crossing %g, unprobed %g, the level not moved %g", pr.x_star, pc.x_star, pn.x_star);
    progress_free(&g);
    progress_free(&clean);
}

/* The batch carry-over learnt from a corpus of the job's curves at three batches (tau of
 * the GNS law with noise scale 400, the fake's own 100): the run carries by the learnt one,
 * says so, and widens the band of a batch it did not predict at; another base learning
 * rate matches no curve and the measured noise scale carries. */
static void t_carry_learnt_run(void)
{
    char path[600];
    snprintf(path, sizeof path, "%s/carry-corpus.jsonl", tmp);
    FILE *f = fopen(path, "w");
    static const int B[] = {32, 64, 128};
    for (int c = 0; c < 12; c++) {
        double tau = 10000 * (B[c % 3] + 400.0) / (32 + 400.0) * (0.9 + 0.05 * (c / 3));
        write_curve(f, &(fake_curve){.job = "fake",
                                     .rule = "sqrt",
                                     .batch = B[c % 3],
                                     .base_batch = 32,
                                     .seed = 1 + c / 3,
                                     .lr = 0.05,
                                     .tau = tau});
    }
    fclose(f);
    for (int other_lr = 0; other_lr < 2; other_lr++) {
        scv_store *db = open_db(other_lr ? "carry2.db" : "carry.db");
        fake g = new_fake();
        snprintf(g.job.model, sizeof g.job.model, "exec");
        snprintf(g.job.dataset, sizeof g.job.dataset, "synthetic:10000");
        g.job.lr = other_lr ? 0.1 : 0.05, g.job.base_batch = 32, g.job.lr_scaling = SCV_LR_SCALE_SQRT;
        g.tau = 10000, g.acc_c = 0.5, g.acc_gap = 0.1414, g.target = 0.9;
        scv_job_driver d = driver_of(&g);
        scv_run_params p = params(db, "job-carry");
        p.target_epochs = 0, p.target_batch = 0, p.target_accuracy = 0.9, p.curve_corpus = path;
        scv_run_result res;
        scv_err e = {0};
        rec r = {0};
        scv_run_observer obs = {.ctx = &r, .on_event = on_event};
        CHECK_MSG(scv_run(&p, &d, &obs, &res, &e) == SCV_OK, "%s", e.msg);
        if (other_lr) {
            CHECK(res.carry_learnt != 1 && !noted(&r, SCV_NOTE_CARRY_CORPUS));
        } else {
            CHECK_MSG(res.carry_learnt && NOTED_NUMS(&r, SCV_NOTE_CARRY_CORPUS, 3), "%.3000s", r.notes); /* 3 batches */
            CHECK_MSG(res.carry_noise_scale >= 400 / sqrt(2) && res.carry_noise_scale <= 400 * sqrt(2), "%g",
                      res.carry_noise_scale);
            CHECK(res.carry_q_lo <= 0 && res.carry_q_hi >= 0);
            if (res.batch != res.target_batch && isfinite(res.predicted_hi_s) && res.target_epochs > 0)
                CHECK(res.predicted_hi_s / res.predicted_time_s >= res.target_epochs_hi / res.target_epochs - 1e-9);
        }
        scv_run_result_free(&res);
        scv_store_close(db);
    }
}

/* A job the corpus does not hold: the band of its carry is its rule's exponent's spread over
 * three other jobs' curves under sqrt (exponents -0.8, 0.3 and 1.4: a wide band), said and
 * reported; a re-plan after the chosen configuration slows 3x switches only where the switch
 * saves more than it costs, and says both. */
static void t_carry_rule_run(void)
{
    char path[600];
    snprintf(path, sizeof path, "%s/rule-corpus.jsonl", tmp);
    FILE *f = fopen(path, "w");
    static const int B[] = {32, 64, 128};
    static const double G[] = {-0.8, 0.3, 1.4};
    for (int c = 0; c < 9; c++) {
        double tau = 10000 * pow(B[c % 3] / 32.0, G[c / 3]);
        char job[32], data[32];
        snprintf(job, sizeof job, "j%d", c / 3), snprintf(data, sizeof data, "synthetic:1%d000", 1 + c / 3);
        write_curve(f, &(fake_curve){.job = job,
                                     .dataset = data,
                                     .rule = "sqrt",
                                     .batch = B[c % 3],
                                     .base_batch = 32,
                                     .seed = 1,
                                     .lr = 0.05,
                                     .tau = tau});
    }
    fclose(f);
    int K0 = 0, B0 = 0;
    int64_t train_from = 1; /* the first training iteration of the first pass: the drift starts there */
    for (int drifted = 0; drifted < 2; drifted++) {
        scv_store *db = open_db(drifted ? "rule2.db" : "rule1.db");
        fake g = new_fake();
        snprintf(g.job.model, sizeof g.job.model, "exec");
        snprintf(g.job.dataset, sizeof g.job.dataset, "synthetic:10000");
        g.job.lr = 0.05, g.job.base_batch = 32, g.job.lr_scaling = SCV_LR_SCALE_SQRT;
        g.tau = 10000, g.acc_c = 0.5, g.acc_gap = 0.1414, g.target = 0.9;
        g.need_e0 = 30;
        g.idle_per_segment = 0.01;
        if (drifted) g.drift_K = K0, g.drift_B = B0, g.drift_factor = 3, g.drift_after = train_from;
        scv_job_driver d = driver_of(&g);
        scv_run_params p = params(db, "job-rule");
        p.target_epochs = 0, p.target_batch = 0, p.target_accuracy = 0.9, p.curve_corpus = path, p.max_epochs = 100;
        /* the run trains at the batch it warmed up at (the first run's choice), without a probe:
         * its curve is at one batch, and the carry it switches on is the corpus rule's */
        p.policy.carry_probe_epochs = 0;
        p.start_workers = 1, p.start_batch = 32;
        scv_run_result res;
        scv_err e = {0};
        rec r = {0};
        scv_run_observer obs = {.ctx = &r, .on_event = on_event};
        CHECK_MSG(scv_run(&p, &d, &obs, &res, &e) == SCV_OK, "%s", e.msg);
        CHECK_EQ_INT(res.carry_learnt, 2);
        CHECK_MSG(fabs(res.carry_gamma - 0.3) < 0.05 && res.carry_noise_scale > 0, "gamma %g", res.carry_gamma);
        CHECK(res.carry_q_lo < -0.5 && res.carry_q_hi > 0.5);
        CHECK_MSG(NOTED_NUMS(&r, SCV_NOTE_CARRY_RULE, NAN, 3), "%.2000s", r.notes); /* from 3 other jobs' curves */
        if (!drifted) {
            const scv_plan_result *pl = res.decision ? res.decision : res.plan;
            CHECK(pl != NULL);
            if (pl) K0 = pl->points[pl->chosen].workers, B0 = pl->points[pl->chosen].batch;
            for (size_t i = 0; i < res.n_steps && strcmp(res.steps[i].phase, "train"); i++)
                train_from += res.steps[i].iterations;
            /* every point carries the run's band: the target's at its batch, wider at another */
            const scv_plan_result *ab = res.first_absolute ? res.first_absolute : pl;
            int wider = 0;
            for (size_t i = 0; ab && i < ab->n_points; i++) {
                const scv_plan_point *pt = &ab->points[i];
                CHECK_MSG(pt->time_lo_s > 0 && pt->time_lo_s <= pt->time_s && pt->time_hi_s >= pt->time_s, "%g %g %g",
                          pt->time_lo_s, pt->time_s, pt->time_hi_s);
                wider += pt->batch != res.target_batch && pt->time_s / pt->time_lo_s > 1.5 * (1 + 1e-9);
            }
            CHECK(wider > 0);
        } else {
            /* every re-plan either keeps the configuration or saves more than the switch costs */
            for (int i = 0; i < r.n_nt; i++) {
                const char *why = r.nt[i].str[0], *saves = strstr(why, ": saves ");
                int k, b;
                double gain, cost;
                if (r.nt[i].code != SCV_NOTE_REPLAN || sscanf(why, "switch to K=%d, B=%d", &k, &b) != 2) continue;
                CHECK_MSG(saves && sscanf(saves, ": saves %lf s > its cost %lf s", &gain, &cost) == 2 && gain > cost,
                          "%s", why);
            }
            CHECK_MSG(noted(&r, SCV_NOTE_REPLAN), "%.3000s", r.notes);
        }
        scv_run_result_free(&res);
        scv_store_close(db);
    }
}

/* Where the run reads its carry after the probe: at the evaluation that tells, within the
 * segment back at the choice (evaluations there before the read, and after it in the same
 * segment: the live forecast resumes there, not at the segment's end). */
typedef struct probe_rec {
    rec r;
    int back, read, evals_before, evals_after, ended_after;
} probe_rec;

static void on_event_probe(void *ctx, const scv_run_event *ev)
{
    probe_rec *x = ctx;
    on_event(&x->r, ev);
    if (ev->kind == SCV_EV_NOTE && ev->code == SCV_NOTE_PROBE_DONE) x->back = 1;
    if (ev->kind == SCV_EV_NOTE && ev->code == SCV_NOTE_CARRY_READ && ev->n_str &&
        !strcmp(ev->str[0], "this run's own curve"))
        x->read = 1;
    if (ev->kind == SCV_EV_EVAL && x->back && !x->ended_after) x->read ? x->evals_after++ : x->evals_before++;
    if (ev->kind == SCV_EV_SEGMENT_END && x->read) x->ended_after = 1;
}

/* The probe and the run's own carry: with the rule's wide band (the corpus of carry_rule_run)
 * and the choice at the warm-up's batch, the first training segment probes the best
 * configuration at another batch; the run then learns the carry from its own curve at the two
 * batches (scv_carry_shift). The fake's curve follows the noise-scale law (100, from B = 32):
 * its exponent is 0.48 between the warm-up's 64 and the probe's 128. */
static void t_carry_run(void)
{
    char path[600];
    snprintf(path, sizeof path, "%s/rule-corpus.jsonl", tmp); /* written by carry_rule_run */
    FILE *f = fopen(path, "r");
    if (!f) {
        t_carry_rule_run();
        f = fopen(path, "r");
    }
    CHECK(f != NULL);
    if (f) fclose(f);
    scv_store *db = open_db("carry-run.db");
    fake g = new_fake();
    snprintf(g.job.model, sizeof g.job.model, "exec");
    snprintf(g.job.dataset, sizeof g.job.dataset, "synthetic:10000");
    g.job.lr = 0.05, g.job.base_batch = 32, g.job.lr_scaling = SCV_LR_SCALE_SQRT;
    g.tau = 10000, g.acc_c = 0.5, g.acc_gap = 0.1414, g.target = 0.97;
    scv_job_driver d = driver_of(&g);
    scv_run_params p = params(db, "job-carry-run");
    p.target_epochs = 0, p.target_batch = 0, p.target_accuracy = 0.97, p.curve_corpus = path, p.max_epochs = 100;
    p.start_workers = 2, p.start_batch = 64; /* the warm-up at the knee's batch: the choice's carry is measured */
    scv_run_result res;
    scv_err e = {0};
    probe_rec pr = {0};
    scv_run_observer obs = {.ctx = &pr, .on_event = on_event_probe};
    CHECK_MSG(scv_run(&p, &d, &obs, &res, &e) == SCV_OK, "%s", e.msg);
    const rec r = pr.r;
    CHECK_MSG(pr.read && pr.evals_before >= 1 && pr.evals_before <= 4 && pr.evals_after > 0,
              "read %d after %d evaluations back at the choice, %d after it in the segment", pr.read, pr.evals_before,
              pr.evals_after);
    CHECK_MSG(noted(&r, SCV_NOTE_PROBE), "%.3000s", r.notes);
    CHECK_MSG(noted_with(&r, SCV_NOTE_CARRY_READ, 0, NULL, "this run's own curve"), "%.3000s", r.notes);
    CHECK_EQ_INT(res.carry_learnt, 3);
    /* the law's exponent between the warm-up's B = 64 and the probe's 128: ln(228 / 164) / ln 2 */
    double law = log(228.0 / 164.0) / log(2);
    CHECK_MSG(
        res.carry_gamma > 0.2 && res.carry_gamma + res.carry_q_lo <= law && law <= res.carry_gamma + res.carry_q_hi,
        "the run's exponent %g, band %+g..%+g (the law's %g)", res.carry_gamma, res.carry_q_lo, res.carry_q_hi, law);
    char *js = scv_run_report_json(&p, &res);
    CHECK(js && strstr(js, "\"method\":\"run\""));
    free(js);
    /* the forecast at the decision goes through the probe (its segment at its point's time,
     * a switch back, the choice's rest less the probe's share): at the probe's K and B, and
     * the run's total it gives agrees within 3% with the one at the probe's end (the
     * choice's rest from the samples trained then: 4.8% apart when it was counted from the
     * decision's) and within 15% with the actual (the fake's curve is exact) */
    const scv_plan_point *ch = &res.decision->points[res.decision->chosen];
    const struct scv_run_forecast *f0 = &res.forecasts[0];
    int after = -1; /* the first at the choice: the probe's end, the probe's samples counted */
    for (int i = 1; i < res.n_forecasts && after < 0; i++)
        if (res.forecasts[i].workers == ch->workers && res.forecasts[i].batch == ch->batch) after = i;
    CHECK_MSG((f0->workers != ch->workers || f0->batch != ch->batch) && after > 0, "first forecast at K=%d B=%d",
              f0->workers, f0->batch);
    if (after > 0) {
        double t0 = f0->at_s + f0->remaining_s, t1 = res.forecasts[after].at_s + res.forecasts[after].remaining_s;
        CHECK_MSG(fabs(t0 / t1 - 1) < 0.03 && fabs(t0 / res.actual_time_s - 1) < 0.15,
                  "the total forecast at the decision %.1f s, after the probe %.1f s, actual %.1f s", t0, t1,
                  res.actual_time_s);
        CHECK(f0->remaining_lo_s < f0->remaining_s && f0->remaining_s < f0->remaining_hi_s);
    }
    double gamma1 = res.carry_gamma;
    int most_b = 0; /* the batch the first run trained most samples at */
    double most = 0;
    for (size_t i = 0; i < res.n_steps; i++) {
        double n = 0;
        for (size_t j = 0; j < res.n_steps; j++)
            if (res.steps[j].batch == res.steps[i].batch) n += (double)res.steps[j].iterations * res.steps[j].batch;
        if (n > most) most = n, most_b = res.steps[i].batch;
    }
    scv_run_result_free(&res);
    /* a second run of the job reads the carry from the first one's probe, and plans with it
     * from its first plan on, without a probe of its own */
    fake g2 = new_fake();
    g2.job = g.job, g2.tau = g.tau, g2.acc_c = g.acc_c, g2.acc_gap = g.acc_gap, g2.target = g.target;
    d = driver_of(&g2);
    rec r2 = {0};
    obs.ctx = &r2, obs.on_event = on_event;
    CHECK_MSG(scv_run(&p, &d, &obs, &res, &e) == SCV_OK, "%s", e.msg);
    CHECK_MSG(noted_with(&r2, SCV_NOTE_CARRY_READ, 0, NULL, "stored run "), "%.3000s", r2.notes);
    CHECK(!noted(&r2, SCV_NOTE_PROBE));
    CHECK_EQ_INT(res.carry_learnt, 3);
    CHECK_MSG(fabs(res.carry_gamma - gamma1) < 0.2, "%g against the first run's %g", res.carry_gamma, gamma1);
    /* its target's band takes on the carry of the first run's samples at other batches than
     * the target's, and a plan point's the carry of those at other batches than its own: the
     * narrowest at the batch the first run trained most at, not carried twice through B0 */
    CHECK_MSG(res.target_source == SCV_TARGET_LEARNT && res.target_carried_share > 0, "%s", res.target_note);
    CHECK_MSG(most_b != res.target_batch, "the first run trained most at B=%d, its target's batch", most_b);
    double w_most = NAN, w_b0 = NAN;
    for (size_t i = 0; res.decision && i < res.decision->n_points; i++) {
        const scv_plan_point *pt = &res.decision->points[i];
        double w = log(pt->time_hi_s / pt->time_lo_s);
        if (pt->batch == most_b) w_most = w;
        if (pt->batch == res.target_batch) w_b0 = w;
    }
    CHECK_MSG(w_most > 0 && w_most < w_b0, "band widths (log hi/lo): %g at B=%d, %g at B=%d", w_most, most_b, w_b0,
              res.target_batch);
    scv_run_result_free(&res);
    scv_store_close(db);
}

/* AdaScale (issue 37 item 3): a job the corpus holds no curves of, under --lr-scaling
 * adascale, carries by the noise-scale law with the noise scale the run measures (times the
 * corpus's factor), its band from the other jobs' AdaScale curves that name their measured
 * noise scale (carry 4, "adascale" in the report), not by a rule's exponent; the same job
 * under sqrt, with only AdaScale curves in the corpus, has no rule to carry by. */
static void t_carry_adascale(void)
{
    char path[600];
    snprintf(path, sizeof path, "%s/adascale.jsonl", tmp);
    FILE *f = fopen(path, "w");
    static const int B[] = {32, 64, 128, 256};
    static const double BN[] = {50, 150, 400};
    for (int c = 0; c < 12; c++) {
        double bn = BN[c / 4], tau = 10000 * (B[c % 4] + bn) / (32 + bn); /* the law, exactly */
        char job[32], data[32], ns[48];
        snprintf(job, sizeof job, "j%d", c / 4), snprintf(data, sizeof data, "synthetic:1%d000", 1 + c / 4);
        snprintf(ns, sizeof ns, "\"noise_scale\":%g,", bn);
        write_curve(f, &(fake_curve){.job = job,
                                     .dataset = data,
                                     .rule = "adascale",
                                     .extra = ns,
                                     .batch = B[c % 4],
                                     .base_batch = 32,
                                     .seed = 1,
                                     .lr = 0.05,
                                     .tau = tau});
    }
    fclose(f);
    for (int sqrt_rule = 0; sqrt_rule < 2; sqrt_rule++) {
        scv_store *db = open_db(sqrt_rule ? "ada-sqrt.db" : "ada.db");
        fake g = new_fake();
        snprintf(g.job.model, sizeof g.job.model, "exec");
        snprintf(g.job.dataset, sizeof g.job.dataset, "synthetic:10000");
        g.job.lr = 0.05, g.job.base_batch = 32;
        g.job.lr_scaling = sqrt_rule ? SCV_LR_SCALE_SQRT : SCV_LR_SCALE_ADASCALE;
        g.tau = 10000, g.acc_c = 0.5, g.acc_gap = 0.1414, g.target = 0.9;
        scv_job_driver d = driver_of(&g);
        scv_run_params p = params(db, "job-ada");
        p.target_epochs = 0, p.target_batch = 0, p.target_accuracy = 0.9, p.curve_corpus = path;
        p.policy.carry_probe_epochs = 0; /* the corpus's carry, not a probe's read */
        scv_run_result res;
        scv_err e = {0};
        rec r = {0};
        scv_run_observer obs = {.ctx = &r, .on_event = on_event};
        CHECK_MSG(scv_run(&p, &d, &obs, &res, &e) == SCV_OK, "%s", e.msg);
        if (!sqrt_rule) {
            CHECK_EQ_INT(res.carry_learnt, 4);
            CHECK_MSG(isnan(res.carry_gamma) && res.carry_noise_scale > 0, "gamma %g, Bn %g", res.carry_gamma,
                      res.carry_noise_scale);
            CHECK_MSG(fabs(res.carry_q_lo) < 0.15 && fabs(res.carry_q_hi) < 0.15, "band %g %g", res.carry_q_lo,
                      res.carry_q_hi); /* the corpus's curves follow the law with their measured Bn */
            CHECK_MSG(NOTED_NUMS(&r, SCV_NOTE_CARRY_MEASURED, 3), "%.2000s", r.notes); /* 3 other jobs */
            CHECK(!noted(&r, SCV_NOTE_CARRY_RULE));
        } else {
            CHECK_MSG(res.carry_learnt != 4 && !noted(&r, SCV_NOTE_CARRY_MEASURED), "%d", res.carry_learnt);
        }
        CHECK(res.reached);
        scv_run_result_free(&res);
        scv_store_close(db);
    }
}

static const scv_test tests[] = {
    {"progress_run_read", t_progress_run_read}, {"carry_learnt_run", t_carry_learnt_run},
    {"carry_rule_run", t_carry_rule_run},       {"carry_run", t_carry_run},
    {"carry_adascale", t_carry_adascale},
};
LOOP_TEST_MAIN(tests, "carry")
