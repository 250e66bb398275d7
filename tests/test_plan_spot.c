/*
 * test_plan_spot.c - the planner under spot prices: the preemption risk priced into time and
 * cost, the on-demand and spot modes, the capacity a preemption takes, and the spot rates'
 * file read strictly.
 */
#define _POSIX_C_SOURCE 200809L
#include "scv.h"
#include "model/model.h"
#include "io/io.h"
#include "scv_test.h"
#include "core/util.h"
#include "plan_fixtures.h"

/* The planner on spot with the risk (scv_plan_request.spot_risk, SCV_PRICE_SPOT): every point's
 * time is T0 / (1 - rho) and its cost (K p T - N R p) / 3600 against the same plan at spot's
 * bare price, the points preempted faster than they progress are left out (the note says so),
 * and the fastest choice moves to fewer workers (on the bare price: the most). */
static void t_plan_spot_risk(void)
{
    scv_catalog *cat = load_cat();
    if (!cat) return;
    int vm = (int)(scv_catalog_find(cat, "c5.xlarge") - cat->vms);
    int workers[16], batches[1] = {512};
    for (int i = 0; i < 16; i++) workers[i] = i + 1;
    scv_perf_model perf = {.topology = SCV_TOPO_RING,
                           .c0 = 1e-3,
                           .c1 = 5e-3,
                           .alpha = 1e-3,
                           .beta = 1e-10,
                           .model_bytes = 1e7,
                           .mare = 0.03};
    scv_stat_model st = {.kind = SCV_STAT_GNS, .n_train = 50000, .b_simple = 500, .s_min = 2000};
    scv_job_info job = {.n_params = 2.5e6, .act_bytes = 2e5, .input_floats = 3072, .n_train = 50000};
    scv_plan_request r = {.catalog = cat,
                          .vms = &vm,
                          .n_vms = 1,
                          .measured_vm = vm,
                          .workers = workers,
                          .n_workers = 16,
                          .batches = batches,
                          .n_batches = 1,
                          .pricing = SCV_PRICE_SPOT,
                          .perf = &perf,
                          .stat = &st,
                          .job = &job,
                          .objective = SCV_OBJ_TIME};
    scv_plan_result *bare = NULL, *res = NULL;
    scv_err err = {0};
    CHECK_EQ_INT(scv_plan(&r, &bare, &err), SCV_OK);
    /* 3 preemptions per VM-hour, restart 80 s + 50 iterations, replacement 120 s: rho =
     * 3 K (80 + 50 t_iter + 120 c) / 3600, c = 1 - thr(K-1)/thr(K) (about 1/K: compute-bound),
     * >= 1 from K = 15 */
    scv_spot_policy pol = scv_spot_policy_default();
    scv_spot_rates rates = {.all = 3};
    scv_spot_risk risk = {.pol = &pol, .rates = &rates, .recovery = SCV_SPOT_RESTART};
    r.spot_risk = &risk;
    CHECK_EQ_INT(scv_plan(&r, &res, &err), SCV_OK);
    if (!bare || !res) goto out;
    CHECK_EQ_INT(bare->points[bare->chosen].workers, 16);
    CHECK_MSG(res->points[res->chosen].workers < 14, "K=%d", res->points[res->chosen].workers);
    size_t kept = 0;
    for (size_t i = 0; i < bare->n_points; i++) {
        const scv_plan_point *b = &bare->points[i];
        /* thr(K-1)/thr(K) at the same B: the bare plan's own step at K - 1 (no evaluation) */
        double thr_less = 0;
        for (size_t k = 0; k < bare->n_points; k++)
            if (bare->points[k].workers == b->workers - 1) thr_less = fmin(1, b->t_iter / bare->points[k].t_iter);
        double rho = scv_spot_rho(&pol, SCV_SPOT_RESTART, b->t_iter, thr_less, 3.0 * b->workers);
        const scv_plan_point *q = NULL;
        for (size_t k = 0; k < res->n_points; k++)
            if (res->points[k].workers == b->workers) q = &res->points[k];
        if (rho >= 1) {
            CHECK_MSG(!q, "K=%d kept at rho %g", b->workers, rho);
            continue;
        }
        kept++;
        CHECK_MSG(q != NULL, "K=%d left out at rho %g", b->workers, rho);
        if (!q) continue;
        double T = b->time_s / (1 - rho), N = 3.0 * b->workers * T / 3600;
        CHECK_NEAR(q->time_s, T, 1e-12, 0);
        double u = pol.replace_s - pol.replace_s * pol.replace_s / (2 * T); /* unbilled per preemption */
        CHECK_NEAR(q->cost, (b->workers * b->price_hr * T - N * u * b->price_hr) / 3600, 1e-12, 0);
    }
    CHECK(kept == res->n_points && kept >= 10 && kept < 16);
    CHECK_MSG(strstr(res->note, "spot times and costs are expected ones") &&
                  strstr(res->note, "left out: preempted faster than they progress"),
              "%s", res->note);
    scv_plan_result_free(res);
    res = NULL;
    /* on-demand pricing: the risk does not apply */
    r.pricing = SCV_PRICE_ONDEMAND;
    CHECK_EQ_INT(scv_plan(&r, &res, &err), SCV_OK);
    CHECK(res && res->n_points == 16 && !strstr(res->note, "spot times"));
    /* every point preempted faster than it progresses: an error that says so */
    r.pricing = SCV_PRICE_SPOT;
    rates.all = 1000;
    scv_plan_result_free(res);
    res = NULL;
    CHECK_EQ_INT(scv_plan(&r, &res, &err), SCV_EINFEASIBLE);
    CHECK_MSG(strstr(err.msg, "no configuration can finish on spot"), "%s", err.msg);
out:
    scv_plan_result_free(bare);
    scv_plan_result_free(res);
    scv_catalog_free(cat);
}

/* Spot with the risk of preemption (model/spot.c): on scripted rates and prices the mode is
 * spot when spot is cheap and rarely preempted, on-demand when preemptions are frequent and
 * the deadline tight (spot at its bare price would be 3.7x cheaper), and spot falling back to
 * on-demand at the hand-worked time t* otherwise. K = 4, T0 = 1 h, $1/h on-demand and
 * $0.30/h spot per worker; restart 60 s, 100 iterations between checkpoints of 1.2 s each,
 * replacement 120 s, a compute-bound job (thr(3)/thr(4) = 3/4): L = 60 + 50 x 1.2 = 120 s,
 * d = 120 + 120 (1 - 3/4) = 150 s. */
static void t_spot_modes(void)
{
    scv_spot_policy pol = scv_spot_policy_default();
    pol.restart_s = 60, pol.ckpt_every = 100, pol.replace_s = 120, pol.mix_ondemand_share = 0.25;
    scv_spot_in in = {.pol = &pol,
                      .recovery = SCV_SPOT_RESTART,
                      .workers = 4,
                      .homogeneous = 1,
                      .t0_s = 3600,
                      .t_iter = 1.2,
                      .thr_less = 0.75,
                      .price_od = 4.0,
                      .price_spot = 1.2,
                      .objective = SCV_OBJ_KNEE};
    scv_spot_result r;
    scv_err err = {0};
    /* cheap spot, 0.01 preemptions per VM-hour: spot */
    in.lam = 0.04;
    CHECK_EQ_INT(scv_spot_eval(&in, &r, &err), SCV_OK);
    CHECK_NEAR(r.delay_s, 150, 1e-12, 0);
    CHECK_NEAR(r.mode[SCV_SPOT_SPOT].time_s, 3600 / (1 - 0.04 * 150 / 3600), 1e-12, 0);
    CHECK_NEAR(r.mode[SCV_SPOT_SPOT].preemptions, 0.04 * r.mode[SCV_SPOT_SPOT].time_s / 3600, 1e-12, 0);
    CHECK_MSG(r.best == SCV_SPOT_SPOT && r.meets, "best %s", scv_spot_mode_name(r.best));
    CHECK(r.mode[SCV_SPOT_MIX].ok && r.mode[SCV_SPOT_MIX].n_ondemand == 1 && r.mode[SCV_SPOT_MIX].n_spot == 3);
    CHECK(isnan(r.fallback_s) && !r.mode[SCV_SPOT_FALLBACK].ok);
    /* 5 preemptions per VM-hour: spot loses 83% of its time and costs more than on-demand
     * even without a deadline; with a tight one (3700 s) there is no room to try it */
    in.lam = 20;
    CHECK_EQ_INT(scv_spot_eval(&in, &r, &err), SCV_OK);
    CHECK_NEAR(r.mode[SCV_SPOT_SPOT].time_s, 21600, 1e-12, 0);
    CHECK_MSG(r.best == SCV_SPOT_ONDEMAND, "best %s", scv_spot_mode_name(r.best));
    in.deadline_s = 3700;
    CHECK_EQ_INT(scv_spot_eval(&in, &r, &err), SCV_OK);
    CHECK_MSG(r.best == SCV_SPOT_ONDEMAND && r.meets && r.fallback_s == 0 && !r.mode[SCV_SPOT_FALLBACK].ok,
              "best %s, fallback %g", scv_spot_mode_name(r.best), r.fallback_s);
    /* the fallback by hand: 0.25 per VM-hour, rho = 1 x 150 / 3600 = 1/24, D = 4000 s;
     * S = 120 + 60 = 180, M = S + d = 330; t* = (4000 - 3600 - 330) x 24 = 1680 s; the work
     * left there 3600 - (23/24) 1680 = 1990 s, on-demand with S: the end at 1680 + 1990 + 180 =
     * 3850 = D - d; cost (1.2 x 1680 - (1680/3600) x u x 0.3) / 3600 + 4 x 2170 / 3600, u = 120 -
     * 120^2 / (2 x 1680) the seconds a preempted VM goes unbilled within the 1680 s on spot.
     * Spot alone (3756.5 s) and the mix (3716.1 s) leave less than M before D. */
    in.lam = 1, in.deadline_s = 4000;
    CHECK_EQ_INT(scv_spot_eval(&in, &r, &err), SCV_OK);
    CHECK_NEAR(r.margin_s, 330, 1e-12, 0);
    CHECK_NEAR(r.fallback_s, 1680, 1e-9, 0);
    const scv_spot_price *fb = &r.mode[SCV_SPOT_FALLBACK];
    CHECK(fb->ok);
    CHECK_NEAR(fb->time_s, 3850, 1e-9, 0);
    CHECK_NEAR(fb->cost, (1.2 * 1680 - (1680.0 / 3600) * (120 - 120.0 * 120 / 3360) * 0.3) / 3600 + 4.0 * 2170 / 3600,
               1e-9, 0);
    CHECK_MSG(r.best == SCV_SPOT_FALLBACK && r.meets, "best %s", scv_spot_mode_name(r.best));
    /* a roomy deadline: spot ends in time at its expected progress, the fallback is not
     * expected, and spot+fallback (the safer of equal prices) is chosen at spot's price */
    in.deadline_s = 8000;
    CHECK_EQ_INT(scv_spot_eval(&in, &r, &err), SCV_OK);
    CHECK(r.fallback_s > r.mode[SCV_SPOT_SPOT].time_s && r.best == SCV_SPOT_FALLBACK);
    CHECK_NEAR(r.mode[SCV_SPOT_FALLBACK].cost, r.mode[SCV_SPOT_SPOT].cost, 1e-12, 0);
    /* objective time: on-demand, never slowed by preemptions */
    in.objective = SCV_OBJ_TIME;
    CHECK_EQ_INT(scv_spot_eval(&in, &r, &err), SCV_OK);
    CHECK(r.best == SCV_SPOT_ONDEMAND);
    /* in place: the measured idle replaces the restart and the lost work */
    in.recovery = SCV_SPOT_INPLACE;
    CHECK_EQ_INT(scv_spot_eval(&in, &r, &err), SCV_OK);
    CHECK_NEAR(r.lost_s, pol.inplace_idle_s, 1e-12, 0);
}

/* The capacity a preemption takes until its replacement arrives comes from the performance
 * model at K - 1 workers and the same B (the elastic driver keeps B): a communication-bound
 * job, whose K - 1 workers step as fast as K, loses none of it (d = L); a compute-bound one
 * loses about replace_s / K. bench spot's case (K = 3, about 24 preemptions per VM-hour, in
 * place with 1 s idle, the trace's 90 s from notice to restore, T0 150 s) made the former
 * R / K charge predict 395 s against the 148 s measured; the model now says about 152 s. */
static void t_spot_capacity(void)
{
    scv_catalog *cat = load_cat();
    if (!cat) return;
    int vm = (int)(scv_catalog_find(cat, "c5.xlarge") - cat->vms), workers[3] = {1, 2, 3}, batches[1] = {192};
    /* communication-bound: 1 us per sample, a 20 ms latency per ring step */
    scv_perf_model comm = {.topology = SCV_TOPO_RING,
                           .c0 = 1e-3,
                           .c1 = 1e-6,
                           .alpha = 0.02,
                           .beta = 1e-10,
                           .model_bytes = 1e6,
                           .mare = 0.03};
    /* compute-bound: 5 ms per sample, the network all but free */
    scv_perf_model comp = {
        .topology = SCV_TOPO_RING, .c0 = 0, .c1 = 5e-3, .alpha = 1e-7, .beta = 1e-13, .model_bytes = 1e6, .mare = 0.03};
    scv_stat_model st = {.kind = SCV_STAT_GNS, .n_train = 50000, .b_simple = 500, .s_min = 2000};
    scv_job_info job = {.n_params = 2.5e5, .act_bytes = 2e5, .input_floats = 784, .n_train = 50000};
    scv_spot_policy pol = scv_spot_policy_default();
    pol.replace_s = 90;
    scv_spot_rates rates = {.all = 24};
    scv_spot_risk risk = {.pol = &pol, .rates = &rates, .recovery = SCV_SPOT_INPLACE};
    scv_plan_request r = {.catalog = cat,
                          .vms = &vm,
                          .n_vms = 1,
                          .measured_vm = vm,
                          .workers = workers,
                          .n_workers = 3,
                          .batches = batches,
                          .n_batches = 1,
                          .pricing = SCV_PRICE_SPOT,
                          .perf = &comm,
                          .stat = &st,
                          .job = &job,
                          .objective = SCV_OBJ_TIME};
    scv_plan_result *bare = NULL, *res = NULL;
    scv_err err = {0};
    for (int bound = 0; bound < 2; bound++) { /* 0: communication-bound, 1: compute-bound */
        r.perf = bound ? &comp : &comm;
        r.spot_risk = NULL;
        CHECK_EQ_INT(scv_plan(&r, &bare, &err), SCV_OK);
        r.spot_risk = &risk;
        CHECK_EQ_INT(scv_plan(&r, &res, &err), SCV_OK);
        if (!bare || !res) break;
        const scv_plan_point *b3 = NULL, *q3 = NULL;
        for (size_t i = 0; i < bare->n_points; i++)
            if (bare->points[i].workers == 3) b3 = &bare->points[i];
        for (size_t i = 0; i < res->n_points; i++)
            if (res->points[i].workers == 3) q3 = &res->points[i];
        CHECK(b3 && q3);
        if (!b3 || !q3) break;
        double thr = scv_plan_thr_less(&r, b3, &risk), lam = 3 * 24.0;
        CHECK_NEAR(scv_plan_thr_less(&r, &bare->points[0], &risk), 0, 0, 0); /* K = 1: the job stands */
        double c_want = bound ? 1.0 / 3 : 0; /* compute-bound: t_iter ~ B / K, so c = 1 - 2/3 */
        CHECK_MSG(fabs(scv_spot_cap_lost(thr) - c_want) < 1e-3, "bound %d: c = %g", bound, scv_spot_cap_lost(thr));
        double d = pol.inplace_idle_s + pol.replace_s * scv_spot_cap_lost(thr), T = b3->time_s / (1 - lam * d / 3600);
        CHECK_NEAR(q3->time_s, T, 1e-9, 0);
        double T_want = b3->time_s / (1 - lam * (pol.inplace_idle_s + pol.replace_s * c_want) / 3600);
        CHECK_MSG(fabs(q3->time_s / T_want - 1) < 1e-3, "bound %d: T %g, want %g", bound, q3->time_s, T_want);
        /* the spot comparison of `plan` prices the same */
        scv_spot_in in = {.pol = &pol,
                          .recovery = SCV_SPOT_INPLACE,
                          .workers = 3,
                          .homogeneous = 1,
                          .t0_s = b3->time_s,
                          .t_iter = b3->t_iter,
                          .thr_less = thr,
                          .lam = lam,
                          .price_od = 3 * 0.17,
                          .price_spot = 3 * 0.07,
                          .objective = SCV_OBJ_COST};
        scv_spot_result sr;
        CHECK_EQ_INT(scv_spot_eval(&in, &sr, &err), SCV_OK);
        CHECK_NEAR(sr.delay_s, d, 1e-6, 0);
        CHECK_NEAR(sr.mode[SCV_SPOT_SPOT].time_s, q3->time_s, 1e-9, 0);
        CHECK_NEAR(sr.mode[SCV_SPOT_SPOT].preemptions, lam * q3->time_s / 3600, 1e-9, 0);
        scv_plan_result_free(bare);
        scv_plan_result_free(res);
        bare = res = NULL;
    }
    /* bench spot's figures: a communication-bound K = 3 job, T0 150 s: about 152 s expected
     * and 3 preemptions (measured 147.8 s and 3), where R / K said 395 s and 8 */
    scv_spot_in b = {.pol = &pol,
                     .recovery = SCV_SPOT_INPLACE,
                     .workers = 3,
                     .homogeneous = 1,
                     .t0_s = 150,
                     .t_iter = 0.07,
                     .thr_less = 1.0,
                     .lam = 72,
                     .price_od = 0.51,
                     .price_spot = 0.21,
                     .objective = SCV_OBJ_COST};
    scv_spot_result br;
    CHECK_EQ_INT(scv_spot_eval(&b, &br, &err), SCV_OK);
    CHECK_MSG(br.mode[SCV_SPOT_SPOT].time_s < 155 && br.mode[SCV_SPOT_SPOT].preemptions < 3.2, "T %g, N %g",
              br.mode[SCV_SPOT_SPOT].time_s, br.mode[SCV_SPOT_SPOT].preemptions);
    /* the planner's default 120 s replacement on a 10 s job (bench spot --smoke priced it at
     * -$0.0036): a preempted VM goes unbilled T/2 on average, never more than the job lasts */
    b.t0_s = 10, b.lam = 300, b.thr_less = 1;
    CHECK_EQ_INT(scv_spot_eval(&b, &br, &err), SCV_OK);
    const scv_spot_price *sp = &br.mode[SCV_SPOT_SPOT];
    CHECK_MSG(sp->cost > 0, "cost %g", sp->cost);
    CHECK_NEAR(sp->cost, (0.21 * sp->time_s - sp->preemptions * (sp->time_s / 2) * 0.07) / 3600, 1e-12, 0);
    CHECK_NEAR(scv_spot_unbilled_s(120, 240), 90, 1e-12, 0);
    b.thr_less = NAN; /* not known: an error, not a guess */
    CHECK_EQ_INT(scv_spot_eval(&b, &br, &err), SCV_EINVAL);
    scv_plan_result_free(bare);
    scv_plan_result_free(res);
    scv_catalog_free(cat);
}

/* --preempt-rate's values: one rate, per type, and the errors naming the bad part. */
static void t_spot_rates_parse(void)
{
    scv_catalog *cat = load_cat();
    scv_spot_policy pol = scv_spot_policy_default();
    scv_spot_rates u;
    scv_err err = {0};
    int c5 = (int)(scv_catalog_find(cat, "c5.xlarge") - cat->vms), user;
    CHECK_EQ_INT(scv_spot_rates_parse("0.5", cat, &u, &err), SCV_OK);
    CHECK(u.all == 0.5 && scv_spot_rate(&pol, &u, cat, c5, &user) == 0.5 && user);
    CHECK_EQ_INT(scv_spot_rates_parse("c5.xlarge=0.2,c5.2xlarge=0", cat, &u, &err), SCV_OK);
    CHECK(u.n == 2 && scv_spot_rate(&pol, &u, cat, c5, &user) == 0.2 && user);
    CHECK_EQ_INT(scv_spot_rates_parse("c5.2xlarge=1", cat, &u, &err), SCV_OK);
    CHECK(scv_spot_rate(&pol, &u, cat, c5, &user) == pol.rate_aws && !user); /* aws's default */
    struct {
        const char *spec, *msg;
        int rc;
    } bad[] = {
        {"-1", "'-1': expected a rate", SCV_EINVAL},
        {"fast", "'fast': expected a rate", SCV_EINVAL},
        {"c5.xlarge=abc", "c5.xlarge='abc': expected a rate", SCV_EINVAL},
        {"nosuch=0.1", "'nosuch': not a VM type", SCV_ENOTFOUND},
        {"=0.1", "'=0.1': expected TYPE=R", SCV_EINVAL},
        {"c5.xlarge=0.1,c5.xlarge=0.2", "'c5.xlarge': given twice", SCV_EINVAL},
        {"", "empty", SCV_EINVAL},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        int rc = scv_spot_rates_parse(bad[i].spec, cat, &u, &err);
        CHECK_MSG(rc == bad[i].rc && strstr(err.msg, bad[i].msg), "'%s': %d %s", bad[i].spec, rc, err.msg);
    }
    scv_catalog_free(cat);
}

static const scv_test tests[] = {
    {"spot_modes", t_spot_modes},
    {"plan_spot_risk", t_plan_spot_risk},
    {"spot_capacity", t_spot_capacity},
    {"spot_rates_parse", t_spot_rates_parse},
};
SCV_TEST_MAIN(tests)
