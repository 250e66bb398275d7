/*
 * test_floor.c - the batch carry-over from the noise floor (src/model/floor.c): the law on
 * curves made by it, and whole runs with the fake driver of loop_fake.h whose training loss
 * follows it (loop_refresh_floor, src/search/carryread.c).
 */
#include "loop_fake.h"

/* The noise floor's carry (floor.c) on curves made by its own law: b0 = 64, b = 256 under
 * sqrt scaling (s = 1/2, the floor halved), b0's loss f0(u) = 0.2 + F0 + 1.5 exp(-u / 8000)
 * with F0 from the trace, b's 0.2 + F0 / 2 + 1.5 exp(-u / 16000). A target near b0's floor is
 * reached sooner at b (gamma < 0), one far above it later (gamma near -ln s / ln 4 = 1/2); each
 * point within 0.03 of the truth and inside its band, read on the evaluations or, past them,
 * on the fitted curve; a measured rate in place of the rule's. AdaScale, no trace or too few
 * evaluations: none. */
static void t_floor_law(void)
{
    enum { N = 40 };
    double x[N], loss[N], trace = 70, tau = 8000;
    scv_floor_in in = {.metric = SCV_METRIC_LOSS,
                       .x = x,
                       .y = loss,
                       .n = N,
                       .trace = trace,
                       .lr = 0.05,
                       .momentum = 0.9,
                       .base_batch = 64,
                       .b0 = 64,
                       .b = 256,
                       .lr_scaling = SCV_LR_SCALE_SQRT,
                       .horizon = 400000};
    double F0 = scv_floor_level(&in, 64), Fb = scv_floor_level(&in, 256);
    CHECK_MSG(fabs(F0 - 0.05 / 0.1 * 70 / 256) < 1e-12 && fabs(Fb - F0 / 2) < 1e-12, "F0 %g Fb %g", F0, Fb);
    for (int i = 0; i < N; i++) x[i] = 2000.0 * (i + 1), loss[i] = 0.2 + F0 + 1.5 * exp(-x[i] / tau);
    const struct {
        double above; /* the target's height over b0's floor */
        size_t n;     /* the evaluations known */
        int sign;
    } cases[] = {{0.002, N, -1}, {0.4, N, 1}, {0.05, 10, 1}};
    for (size_t k = 0; k < sizeof cases / sizeof cases[0]; k++) {
        double L = 0.2 + F0 + cases[k].above, u0 = -tau * log((L - 0.2 - F0) / 1.5);
        double truth = log(-2 * tau * log((L - 0.2 - Fb) / 1.5) / u0) / log(4);
        scv_carry c;
        in.target = L, in.n = cases[k].n;
        CHECK_EQ_INT(scv_carry_floor(&in, NULL, &c), SCV_OK);
        CHECK_MSG(fabs(c.gamma - truth) < 0.03, "target %g (%zu evaluations): gamma %g, truth %g", L, in.n, c.gamma,
                  truth);
        CHECK(c.per_log && c.q_lo < 0 && c.q_hi > 0 && c.gamma + c.q_lo <= truth && truth <= c.gamma + c.q_hi);
        CHECK_MSG(cases[k].sign * c.gamma > 0 && fabs(c.run_rate - 0.5) < 1e-12 &&
                      fabs(c.run_level - (Fb - F0)) < 1e-12,
                  "gamma %g", c.gamma);
    }
    scv_carry c;
    /* a measured rate in place of the rule's (scv_floor_in.rate): b at a quarter of b0's
     * progress per sample, its curve 0.2 + Fb + 1.5 exp(-u / (4 tau)) */
    double L = 0.2 + F0 + 0.4, u0 = -tau * log((L - 0.2 - F0) / 1.5);
    double truth = log(-4 * tau * log((L - 0.2 - Fb) / 1.5) / u0) / log(4);
    in.rate = 0.25, in.target = L, in.n = N;
    CHECK_EQ_INT(scv_carry_floor(&in, NULL, &c), SCV_OK);
    CHECK_MSG(fabs(c.gamma - truth) < 0.03 && c.run_rate == 0.25, "measured rate: gamma %g, truth %g", c.gamma, truth);
    in.rate = 0;
    in.target = 0.2 + F0 + 0.002, in.n = N;
    in.lr_scaling = SCV_LR_SCALE_ADASCALE;
    CHECK_EQ_INT(scv_carry_floor(&in, NULL, &c), SCV_ENOTFOUND);
    in.lr_scaling = SCV_LR_SCALE_SQRT, in.trace = NAN;
    CHECK_EQ_INT(scv_carry_floor(&in, NULL, &c), SCV_ENOTFOUND);
    in.trace = trace, in.n = 3;
    CHECK_EQ_INT(scv_carry_floor(&in, NULL, &c), SCV_ENOTFOUND);
    CHECK(isnan(c.gamma));
    in.n = N, in.target = 0.2 + F0 - 0.01; /* under b0's floor: nothing to carry */
    CHECK_EQ_INT(scv_carry_floor(&in, NULL, &c), SCV_ENOTFOUND);
}

/* Runs of a fake whose loss follows the floor's law (loss 10 x^-0.5 over F(32), sqrt scaling
 * from 32: at 128 half the progress per sample over half the floor), measured at K = 2 (the
 * trace), the space B in {32, 128}, a sample costing the same at both: a target near 32's
 * floor (0.07 over F(32) = 0.04: 11.1 epochs at 32, 8.0 at 128) carries with gamma < 0 and
 * chooses 128, one far above it (0.05 over 0.01: 6.25 and 9.9 epochs) with gamma > 0 and
 * chooses 32, each by the floor (carry_learnt 5, its note), its band holding the fake's
 * exponent. A run of an accuracy target whose evaluations state no training loss does not read
 * it. */
static void t_floor_run(void)
{
    const double targets[2] = {0.07, 0.05};
    for (int k = 0; k < 3; k++) {
        scv_store *db = open_db(k == 0 ? "floor1.db" : k == 1 ? "floor2.db" : "floor3.db");
        fake f = new_fake();
        f.job.lr = 0.05, f.job.base_batch = 32, f.job.lr_scaling = SCV_LR_SCALE_SQRT;
        f.b_noise = k == 1 ? 0.0256 : 0.1024; /* tr(Sigma) 2.56 or 10.24: F(32) = 0.01 or 0.04 */
        f.tau = 10000, f.acc_max = 0.97, f.acc_gap = 0.5, f.floor_law = 1;
        f.c0 = 0.0001, f.alpha = 0; /* a sample costs the same at 32 and 128: the carry chooses */
        f.by_loss = k < 2, f.loss_b = 10, f.loss_c = 0.5, f.target = k < 2 ? targets[k] : 0.9;
        scv_job_driver d = driver_of(&f);
        scv_run_params p = params(db, "job-floor");
        p.target_epochs = 0, p.target_batch = 0, p.target_accuracy = k < 2 ? 0 : 0.9,
        p.target_loss = k < 2 ? f.target : 0;
        p.max_epochs = 20;
        CHECK_EQ_INT(scv_run_params_set(&p, "workers", "2", NULL), SCV_OK);
        CHECK_EQ_INT(scv_run_params_set(&p, "batch", "32,128", NULL), SCV_OK);
        scv_run_result res;
        scv_err e = {0};
        rec r = {0};
        scv_run_observer obs = {.ctx = &r, .on_event = on_event};
        CHECK_MSG(scv_run(&p, &d, &obs, &res, &e) == SCV_OK, "%s", e.msg);
        if (k == 2) { /* no training loss: no floor */
            CHECK_MSG(res.carry_learnt != 5 && !noted(&r, SCV_NOTE_CARRY_FLOOR), "%d", res.carry_learnt);
            scv_run_result_free(&res);
            scv_store_close(db);
            continue;
        }
        double F32 = fake_floor(&f, 32), F128 = fake_floor(&f, 128);
        double u32 = pow(f.loss_b / (f.target - F32), 1 / f.loss_c) / fake_floor_rate(&f, 32);
        double u128 = pow(f.loss_b / (f.target - F128), 1 / f.loss_c) / fake_floor_rate(&f, 128);
        double truth = log(u128 / u32) / log(4);
        CHECK_MSG(fabs(F32 - (k ? 0.01 : 0.04)) < 1e-12 && (k ? truth > 0.2 : truth < -0.2), "F32 %g truth %g", F32,
                  truth);
        CHECK_MSG(res.carry_learnt == 5 && noted(&r, SCV_NOTE_CARRY_FLOOR), "%d %.2000s", res.carry_learnt, r.notes);
        CHECK_MSG(res.carry_gamma + res.carry_q_lo <= truth && truth <= res.carry_gamma + res.carry_q_hi &&
                      res.carry_gamma * truth > 0,
                  "target %g: gamma %g (%+g..%+g), the fake's %g", f.target, res.carry_gamma, res.carry_q_lo,
                  res.carry_q_hi, truth);
        /* the choice: the batch that needs fewer samples */
        const scv_plan_result *pl = res.decision ? res.decision : res.plan;
        CHECK(pl && pl->points[pl->chosen].batch == (k ? 32 : 128));
        CHECK(res.reached);
        int trained = res.n_steps ? res.steps[res.n_steps - 1].batch : 0;
        scv_run_result_free(&res);
        if (k == 0) {
            /* a second run reads the first one's crossing at B=128, where the floor's lower
             * level helped it, at B=128: carried to B=32 it would stand for a crossing of
             * B=32's curve, which takes u32 (3x as many samples here) */
            CHECK_EQ_INT(trained, 128);
            rec r2 = {0};
            scv_run_observer obs2 = {.ctx = &r2, .on_event = on_event};
            CHECK_MSG(scv_run(&p, &d, &obs2, &res, &e) == SCV_OK, "%s", e.msg);
            CHECK_MSG(res.target_source == SCV_TARGET_LEARNT && res.target_batch == 128, "%s B=%d: %s",
                      scv_target_source_name(res.target_source), res.target_batch, res.target_note);
            CHECK_MSG(fabs(res.target_epochs * f.job.n_train / u128 - 1) < 0.25, "%g epochs at %d: u128 %g, u32 %g",
                      res.target_epochs, res.target_batch, u128 / f.job.n_train, u32 / f.job.n_train);
            scv_run_result_free(&res);
        }
        scv_store_close(db);
    }
}

static const scv_test tests[] = {
    {"floor_law", t_floor_law},
    {"floor_run", t_floor_run},
};

LOOP_TEST_MAIN(tests, "floor")
