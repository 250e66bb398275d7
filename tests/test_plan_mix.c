/*
 * test_plan_mix.c - the planner on mixed clusters and with communication options: the
 * dynamic-batching split against its closed form, the slowest link, the price over the
 * types, their specs (`cluster up --vm`); Top-k and SelSync against their closed forms, the
 * dense points unchanged by them, the assumed iterations, the front without compression,
 * their lists.
 */
#define _POSIX_C_SOURCE 200809L
#include "scv.h"
#include "model/model.h"
#include "io/io.h"
#include "scv_test.h"
#include "core/util.h"
#include "plan_fixtures.h"

/* ---- mixed clusters ---- */

/* Types of one provider: m4 (the measured type), m4b (as fast, cheaper), m16 (4x the
 * vCPUs, a faster link), m4slow (a 10x slower link), m1 (one vCPU, link unknown), gpu1. */
static scv_catalog *mix_catalog(void)
{
    static scv_vm_type vms[] = {
        {.provider = "aws", .name = "m4", .vcpus = 4, .mem_gib = 8, .ondemand = 0.20, .net_gbps = 10},
        {.provider = "aws", .name = "m4b", .vcpus = 4, .mem_gib = 8, .ondemand = 0.16, .net_gbps = 10},
        {.provider = "aws", .name = "m16", .vcpus = 16, .mem_gib = 32, .ondemand = 0.70, .net_gbps = 20},
        {.provider = "aws", .name = "m4slow", .vcpus = 4, .mem_gib = 8, .ondemand = 0.10, .net_gbps = 1},
        {.provider = "aws", .name = "m1", .vcpus = 1, .mem_gib = 2, .ondemand = 0.05, .net_gbps = NAN},
        {.provider = "aws", .name = "gpu1", .vcpus = 8, .gpus = 1, .mem_gib = 61, .ondemand = 3.06, .net_gbps = 25},
    };
    static scv_catalog c = {.vms = vms, .n = 6};
    return &c;
}

static const scv_plan_point *find_mix(const scv_plan_result *r, int mix, int B)
{
    for (size_t i = 0; r && i < r->n_points; i++)
        if (r->points[i].mix == mix && r->points[i].batch == B) return &r->points[i];
    return NULL;
}

static scv_vm_mix mix_of(int n, const int *vm, const int *count)
{
    scv_vm_mix m = {.n = n};
    for (int i = 0; i < n; i++) m.vm[i] = vm[i], m.count[i] = count[i];
    return m;
}

/* The prediction of a mix: equal to the homogeneous point where the types are alike, the
 * dynamic-batching split of the closed form between fast and slow types (a type too slow to
 * keep up held at b = 1), the slowest link for communication, the price summed over the
 * types, and types that cannot be predicted leaving the mix out. */
static void t_plan_mix(void)
{
    scv_catalog *cat = mix_catalog();
    int vms[] = {0, 1, 2}, workers[] = {1, 2, 3, 4}, batches[] = {8, 256};
    double c0 = 2e-3, c1 = 1e-4;
    scv_perf_model perf = {
        .topology = SCV_TOPO_RING, .c0 = c0, .c1 = c1, .alpha = 1e-4, .beta = 1e-9, .model_bytes = 4e6, .mare = 0.05};
    scv_stat_model st = {.kind = SCV_STAT_GNS, .n_train = 50000, .b_simple = 200, .s_min = 1000};
    scv_job_info job = {.n_params = 2.5e5, .act_bytes = 1e4, .input_floats = 784, .n_train = 50000};
    enum { SAME, ONE, FAST_SLOW, TOO_SLOW, SLOW_LINK, FAST_LINK, UNKNOWN_LINK, GPU, N_MIX };
    scv_vm_mix mixes[N_MIX] = {
        [SAME] = mix_of(2, (int[]){0, 1}, (int[]){2, 2}),         /* m4:2+m4b:2, alike */
        [ONE] = mix_of(1, (int[]){2}, (int[]){3}),                /* m16:3 */
        [FAST_SLOW] = mix_of(2, (int[]){0, 2}, (int[]){2, 1}),    /* m4:2+m16:1 */
        [TOO_SLOW] = mix_of(2, (int[]){2, 4}, (int[]){2, 1}),     /* m16:2+m1:1 */
        [SLOW_LINK] = mix_of(2, (int[]){0, 3}, (int[]){2, 1}),    /* m4:2+m4slow:1 */
        [FAST_LINK] = mix_of(2, (int[]){0, 1}, (int[]){2, 1}),    /* m4:2+m4b:1 */
        [UNKNOWN_LINK] = mix_of(2, (int[]){4, 0}, (int[]){1, 1}), /* m1:1+m4:1 */
        [GPU] = mix_of(2, (int[]){0, 5}, (int[]){1, 1}),          /* m4:1+gpu1:1 */
    };
    /* Amdahl with f = 0.9 from the 4 measured threads */
    double f = 0.9, s16 = (0.1 + f / 16) / (0.1 + f / 4), s1 = (0.1 + f / 1) / (0.1 + f / 4);
    scv_plan_request r = {.catalog = cat,
                          .vms = vms,
                          .n_vms = 3,
                          .measured_vm = 0,
                          .workers = workers,
                          .n_workers = 4,
                          .batches = batches,
                          .n_batches = 2,
                          .perf = &perf,
                          .stat = &st,
                          .job = &job,
                          .objective = SCV_OBJ_TIME,
                          .measured_threads = 4,
                          .parallel_fraction = f,
                          .mixes = mixes,
                          .n_mixes = N_MIX};
    scv_plan_result *res = NULL;
    scv_err err = {0};
    CHECK_MSG(scv_plan(&r, &res, &err) == SCV_OK, "%s", err.msg);
    if (!res) return;
    for (size_t i = 0; i < res->n_points; i++) { /* homogeneous points are marked so */
        const scv_plan_point *p = &res->points[i];
        CHECK((p->mix < 0) == (p->mix_types.n == 0));
        if (p->mix < 0) CHECK(p->mix == -1 && p->comm_scale == 1);
    }
    /* (a) alike types: the homogeneous point of the same K and B */
    const scv_plan_point *a = find_mix(res, SAME, 256), *h = find(res, 0, 4, 256);
    CHECK(a && h && a->workers == 4);
    if (a && h) {
        CHECK_NEAR(a->t_iter, h->t_iter, 1e-9, 0);
        CHECK_NEAR(a->time_s, h->time_s, 1e-9, 0);
        CHECK_NEAR(a->mix_batch[0], 64, 1e-12, 0);
        CHECK_NEAR(a->mix_batch[1], 64, 1e-12, 0);
        CHECK(a->comm_scale == 1 && a->extrap == SCV_EXTRAP_SAME_THREADS && a->extrapolated);
    }
    /* one type, links faster than the measured one: never faster than the same unmixed */
    const scv_plan_point *o = find_mix(res, ONE, 256), *h16 = find(res, 2, 3, 256);
    CHECK(o && h16 && o->comm_scale == 1);
    if (o && h16) {
        CHECK_NEAR(o->time_s, h16->time_s, 1e-9, 0);
        CHECK_NEAR(o->cost, h16->cost, 1e-9, 0);
        CHECK(o->extrap == SCV_EXTRAP_AMDAHL);
    }
    /* (b) fast and slow: T_c = (c1 B + c0 K) / sum_t count_t / s_t, every worker done at T_c */
    const scv_plan_point *m = find_mix(res, FAST_SLOW, 256);
    const scv_plan_point *slow = find(res, 0, 3, 256), *fast = find(res, 2, 3, 256);
    CHECK(m && slow && fast);
    if (m && slow && fast) {
        double tm = scv_perf_comm(&perf, 3), tc = m->t_iter - tm;
        double closed = (c1 * 256 + c0 * 3) / (2 / 1.0 + 1 / s16);
        CHECK_NEAR(tc, closed, 1e-12, 0);
        CHECK(tc < slow->t_iter - tm && tc > fast->t_iter - tm);
        CHECK(m->time_s < slow->time_s && m->time_s > fast->time_s);
        CHECK_NEAR(2 * m->mix_batch[0] + m->mix_batch[1], 256, 1e-12, 0);
        CHECK(m->mix_batch[1] > m->mix_batch[0]); /* the faster type takes more */
        CHECK_NEAR(1.0 * (c0 + c1 * m->mix_batch[0]), closed, 1e-12, 0);
        CHECK_NEAR(s16 * (c0 + c1 * m->mix_batch[1]), closed, 1e-12, 0);
        CHECK_NEAR(m->compute_scale, closed / (c0 + c1 * 256 / 3.0), 1e-12, 0);
        CHECK(m->extrap == SCV_EXTRAP_AMDAHL && m->workers == 3 && m->vm == 0);
        /* (d) the price: the sum over the types; price_hr their mean per worker */
        CHECK_NEAR(m->cost, (2 * 0.20 + 1 * 0.70) * m->time_s / 3600, 1e-12, 0);
        CHECK_NEAR(m->price_hr, (2 * 0.20 + 0.70) / 3, 1e-12, 0);
        CHECK_NEAR(scv_cost_usd(m->workers, m->time_s, m->price_hr), m->cost, 1e-12, 0);
    }
    /* a type too slow to keep up: held at b = 1, and it sets the compute time */
    const scv_plan_point *t = find_mix(res, TOO_SLOW, 8);
    CHECK(t != NULL);
    if (t) {
        CHECK_NEAR(t->mix_batch[1], 1, 1e-12, 0);
        CHECK_NEAR(t->mix_batch[0], 3.5, 1e-12, 0); /* the rest of B over the others */
        CHECK_NEAR(t->t_iter - scv_perf_comm(&perf, 3), s1 * (c0 + c1), 1e-12, 0);
        CHECK_MSG(strstr(res->note, "too slow to keep up") != NULL, "%s", res->note);
    }
    /* B = 256: the slow type's equal-finish batch is under the trainer's floor, 0.02 B = 5.12
     * (scv_plan_policy.mix_min_share): held there, it sets the compute time */
    const scv_plan_point *t2 = find_mix(res, TOO_SLOW, 256);
    CHECK(t2 != NULL);
    if (t2) {
        CHECK_NEAR(t2->mix_batch[1], 0.02 * 256, 1e-12, 0);
        CHECK_NEAR(t2->t_iter - scv_perf_comm(&perf, 3), s1 * (c0 + c1 * 0.02 * 256), 1e-12, 0);
        CHECK(s1 * (c0 + c1 * t2->mix_batch[1]) > s16 * (c0 + c1 * t2->mix_batch[0]));
    }
    /* (c) the slowest link: 10x slower, the bandwidth term 10x; compute the same */
    const scv_plan_point *sl = find_mix(res, SLOW_LINK, 256), *fl = find_mix(res, FAST_LINK, 256);
    CHECK(sl && fl);
    if (sl && fl && slow) {
        double bw = 2.0 * (2.0 / 3) * 4e6 * 1e-9; /* the bandwidth term at K = 3 */
        CHECK(sl->comm_scale == 10 && fl->comm_scale == 1 && sl->vm == 3);
        CHECK_NEAR(sl->t_iter - fl->t_iter, 9 * bw, 1e-9, 0);
        CHECK_NEAR(fl->t_iter, slow->t_iter, 1e-12, 0);
        CHECK_NEAR(scv_perf_comm_scaled(&perf, 3, 10) - scv_perf_comm(&perf, 3), 9 * bw, 1e-12, 0);
    }
    const scv_plan_point *ul = find_mix(res, UNKNOWN_LINK, 256); /* m1's link unknown: as measured */
    CHECK(ul && ul->comm_scale == 1 && ul->vm == 0);
    /* a GPU type without an assumed speed-up leaves its mix out, counted and said */
    CHECK_EQ_INT(res->n_excluded_mix, 1);
    CHECK(find_mix(res, GPU, 256) == NULL);
    CHECK_MSG(strstr(res->note, "1 mix(es) left out") != NULL, "%s", res->note);
    /* the fastest point may be a mix: it takes part in the front and the choice */
    double tmin = INFINITY;
    for (size_t i = 0; i < res->n_points; i++) tmin = fmin(tmin, res->points[i].time_s);
    CHECK(res->points[res->chosen].time_s == tmin);
    scv_plan_result_free(res);
    /* with a speed-up: included, marked by its least certain type */
    r.gpu_speedup = 10;
    CHECK(scv_plan(&r, &res, &err) == SCV_OK);
    if (res) {
        const scv_plan_point *g = find_mix(res, GPU, 256);
        CHECK(g && g->extrap == SCV_EXTRAP_GPU_ASSUMED && res->n_excluded_mix == 0);
        scv_plan_result_free(res);
    }
    r.gpu_speedup = 0;
    /* a mix is named in why: the cheapest m4 K=1, the mix m16:1 faster */
    int one[] = {1}, b256[] = {256};
    scv_vm_mix m16 = mix_of(1, (int[]){2}, (int[]){1});
    r.vms = vms, r.n_vms = 1, r.workers = one, r.n_workers = 1, r.batches = b256, r.n_batches = 1;
    r.mixes = &m16, r.n_mixes = 1, r.objective = SCV_OBJ_COST;
    CHECK(scv_plan(&r, &res, &err) == SCV_OK);
    if (res) {
        CHECK(res->points[res->chosen].mix == -1 && res->n_front == 2);
        CHECK_MSG(strstr(res->why, "m16:1 B=256 would save") != NULL, "%s", res->why);
        scv_plan_result_free(res);
    }
    /* mixes alone (no homogeneous type) */
    r.n_vms = 0, r.objective = SCV_OBJ_TIME;
    CHECK(scv_plan(&r, &res, &err) == SCV_OK && res && res->n_points == 1 && res->points[0].mix == 0);
    scv_plan_result_free(res);
    /* memory: every type's batch must fit its VM */
    job.act_bytes = 1e12;
    CHECK(scv_plan(&r, &res, &err) == SCV_EINFEASIBLE && !res);
    CHECK_MSG(strstr(err.msg, "memory: 1 excluded") != NULL, "%s", err.msg);
    job.act_bytes = 1e4;
    /* a malformed mix is refused */
    scv_vm_mix bad = mix_of(1, (int[]){99}, (int[]){1});
    r.mixes = &bad;
    CHECK(scv_plan(&r, &res, &err) == SCV_EINVAL && !res);
    CHECK_MSG(strstr(err.msg, "plan: mix 0") != NULL, "%s", err.msg);
    /* n_mixes without mixes: none */
    r.mixes = NULL, r.n_vms = 1;
    CHECK(scv_plan(&r, &res, &err) == SCV_OK && res && res->n_points == 1 && res->points[0].mix == -1);
    scv_plan_result_free(res);
    /* the link factor leaves communication as fitted at 1 (ring and ps) */
    for (int K = 1; K <= 9; K += 4) {
        CHECK(scv_perf_comm_scaled(&perf, K, 1) == scv_perf_comm(&perf, K));
        scv_perf_model ps = perf;
        ps.topology = SCV_TOPO_PS;
        CHECK(scv_perf_comm_scaled(&ps, K, 1) == scv_perf_comm(&ps, K));
        if (K > 1) CHECK_NEAR(scv_perf_comm_scaled(&ps, K, 3) - scv_perf_comm(&ps, K), 2 * 1e-9 * K, 1e-9, 0);
    }
}

/* (e) mix specs: the syntax of `cluster up --vm`; errors name the part at fault */
/* ---- a slow worker: absorb, drop or replace (model/hetero.c) ---- */

/* A compute-heavy job: K = 4, B = 256, 1 ms per sample, a 1 ms step, a ring allreduce. */
static scv_perf_model hetero_perf(void)
{
    return (scv_perf_model){
        .topology = SCV_TOPO_RING, .c0 = 1e-3, .c1 = 1e-3, .alpha = 1e-3, .beta = 5e-9, .model_bytes = 1e6};
}

/* The model's choice on scripted numbers: a mildly slow worker is absorbed, a very slow
 * one dropped, and with a spare VM and much work left replaced (with little work left the
 * replacement's idle is not worth it: dropped). */
static void t_hetero_choice(void)
{
    const scv_perf_model m = hetero_perf();
    const scv_hetero_policy pol = scv_hetero_policy_default();
    scv_hetero_case c = {.perf = &m,
                         .K = 4,
                         .B = 256,
                         .r = 0.9,
                         .iters_left = 1000,
                         .balanced = 1,
                         .drop_idle_s = NAN,
                         .replace_idle_s = NAN};
    scv_hetero_pred p;
    scv_err err = {0};
    CHECK(scv_hetero_predict(&c, &pol, &p, &err) == SCV_OK);
    CHECK_EQ_INT(p.choice, SCV_HETERO_ABSORB);
    CHECK(p.absorb_s < p.drop_s && isinf(p.replace_s)); /* no spare: no replacement */
    /* closed form: T = (c1 B + K c0) / (K - 1 + r), t_comm (1 + d (1/r - 1)) */
    double tc = 6 * 1e-3 + 1.5 * 1e6 * 5e-9, T = (0.256 + 4e-3) / 3.9;
    CHECK_NEAR(p.t_iter_absorb, T + tc * (1 + pol.comm_drag * (1 / 0.9 - 1)), 1e-9, 0);
    CHECK_NEAR(p.drop_s, pol.drop_idle_s + 1000 * scv_perf_iter(&m, 3, 256), 1e-9, 0);
    c.r = 0.2; /* very slow: the allreduce's drag and its step outweigh its share */
    CHECK(scv_hetero_predict(&c, &pol, &p, &err) == SCV_OK);
    CHECK_EQ_INT(p.choice, SCV_HETERO_DROP);
    c.spare = 1, c.iters_left = 10000; /* a spare and much work left */
    CHECK(scv_hetero_predict(&c, &pol, &p, &err) == SCV_OK);
    CHECK_EQ_INT(p.choice, SCV_HETERO_REPLACE);
    CHECK_NEAR(p.replace_s, pol.replace_idle_s + 10000 * scv_perf_iter(&m, 4, 256), 1e-9, 0);
    c.iters_left = 20; /* little left: the replacement's idle costs more than it wins */
    CHECK(scv_hetero_predict(&c, &pol, &p, &err) == SCV_OK);
    CHECK_EQ_INT(p.choice, SCV_HETERO_DROP);
    c.replace_idle_s = 0.01, c.iters_left = 1000; /* a measured idle is used */
    CHECK(scv_hetero_predict(&c, &pol, &p, &err) == SCV_OK);
    CHECK_NEAR(p.replace_idle_s, 0.01, 0, 0);
    c.K = 1; /* refused, naming the inputs */
    CHECK(scv_hetero_predict(&c, &pol, &p, &err) == SCV_EINVAL && strstr(err.msg, "K = 1"));
}

/* The thresholds the job acts on give the model's choice at every r; the ratio of the
 * straggler rule (over the median) is the speed at K >= 3, 2x / (1 + x) at K = 2. */
static void t_hetero_thresholds(void)
{
    const scv_perf_model m = hetero_perf();
    const scv_hetero_policy pol = scv_hetero_policy_default();
    scv_err err = {0};
    for (int spare = 0; spare < 2; spare++)
        for (int bal = 0; bal < 2; bal++)
            for (double n = 20; n <= 20000; n *= 10) {
                scv_hetero_case c = {.perf = &m,
                                     .K = 4,
                                     .B = 256,
                                     .iters_left = n,
                                     .spare = spare,
                                     .balanced = bal,
                                     .drop_idle_s = NAN,
                                     .replace_idle_s = NAN};
                double drop = -1, rep = -1;
                CHECK(scv_hetero_thresholds(&c, &pol, &drop, &rep, &err) == SCV_OK);
                CHECK(drop > 0 && drop <= 1 && rep >= 0 && rep <= 1);
                CHECK(spare || rep == 0);
                for (double r = 0.01; r <= 1; r += 0.01) {
                    if (fabs(r - drop) < 1e-3 || fabs(r - rep) < 1e-3) continue;
                    c.r = r;
                    scv_hetero_pred p;
                    CHECK(scv_hetero_predict(&c, &pol, &p, &err) == SCV_OK);
                    scv_hetero_choice by = r < rep    ? SCV_HETERO_REPLACE
                                           : r < drop ? SCV_HETERO_DROP
                                                      : SCV_HETERO_ABSORB;
                    CHECK_MSG(by == p.choice, "spare %d balanced %d n %g r %.2f: thresholds %s, model %s", spare, bal,
                              n, r, scv_hetero_choice_name(by), scv_hetero_choice_name(p.choice));
                }
            }
    /* nothing left to do: no change is worth its idle, whatever the speed */
    scv_hetero_case done = {
        .perf = &m, .K = 4, .B = 256, .iters_left = 0, .spare = 1, .drop_idle_s = 0, .replace_idle_s = 0};
    double drop = -1, rep = -1;
    CHECK(scv_hetero_thresholds(&done, &pol, &drop, &rep, &err) == SCV_OK);
    CHECK_MSG(drop == 0 && rep == 0, "drop under %g, replace under %g with no work left", drop, rep);
    CHECK_NEAR(scv_hetero_speed_of_ratio(0.5, 3), 0.5, 0, 0);
    CHECK_NEAR(scv_hetero_speed_of_ratio(2 * 0.25 / 1.25, 2), 0.25, 1e-12, 0);
    for (double x = 0.05; x <= 1; x += 0.05) /* and back */
        CHECK_NEAR(scv_hetero_speed_of_ratio(scv_hetero_ratio_of_speed(x, 2), 2), x, 1e-12, 0);
}

/* The slow VM's drag against docs/BENCHMARKS.md's heterogeneous cluster: K = 3, B = 192,
 * one VM at H = 4 (r = 0.25); the H = 1 iteration ~22 ms, 42% compute (9.3 ms), the rest the
 * allreduce and the step (12.7 ms; latency-bound links). Measured: even 2.95x the H = 1 time,
 * dynamic batching 1.82x, 1.62x between them; dropping the slow VM (K = 2) faster than both. */
static void t_hetero_benchmark(void)
{
    const scv_perf_model m = {.topology = SCV_TOPO_RING, .c1 = 9.3e-3 / 64, .alpha = 12.7e-3 / 4};
    const scv_hetero_policy pol = scv_hetero_policy_default();
    double h1 = scv_perf_iter(&m, 3, 192), even = scv_hetero_t_absorb(&m, 3, 192, 0.25, 0, &pol),
           dyn = scv_hetero_t_absorb(&m, 3, 192, 0.25, 1, &pol);
    CHECK_NEAR(even / dyn, 1.62, 0.05, 0);
    CHECK_NEAR(dyn / h1, 1.82, 0.05, 0);
    CHECK_NEAR(even / h1, 2.95, 0.05, 0);
    scv_hetero_case c = {.perf = &m,
                         .K = 3,
                         .B = 192,
                         .r = 0.25,
                         .iters_left = 600,
                         .balanced = 1,
                         .drop_idle_s = NAN,
                         .replace_idle_s = NAN};
    scv_hetero_pred p;
    CHECK(scv_hetero_predict(&c, &pol, &p, NULL) == SCV_OK);
    CHECK_EQ_INT(p.choice, SCV_HETERO_DROP);
}

static void t_mix_parse(void)
{
    scv_catalog *cat = mix_catalog();
    scv_vm_mix m;
    scv_err err = {0};
    char buf[128];
    CHECK(scv_vm_mix_parse(cat, "m4:2,m16:1", &m, &err) == SCV_OK);
    CHECK(m.n == 2 && m.vm[0] == 0 && m.vm[1] == 2 && m.count[0] == 2 && m.count[1] == 1);
    CHECK_EQ_INT(scv_vm_mix_workers(&m), 3);
    CHECK_EQ_INT(scv_vm_mix_format(cat, &m, buf, sizeof buf), 10);
    CHECK_MSG(!strcmp(buf, "m4:2+m16:1"), "%s", buf);
    CHECK(scv_vm_mix_format(cat, &m, buf, 4) == 10 && !strcmp(buf, "m4:")); /* truncated, as snprintf */
    CHECK(scv_vm_mix_parse(cat, "m4b", &m, &err) == SCV_OK && m.n == 1 && m.vm[0] == 1 && m.count[0] == 1);
    CHECK(scv_vm_mix_parse(cat, "m4:1,m16:2,m4:2", &m, &err) == SCV_OK && m.n == 2 && m.count[0] == 3);
    CHECK(scv_vm_mix_parse(cat, "m4:1000,m16:24", &m, &err) == SCV_OK && scv_vm_mix_workers(&m) == 1024);
    static const struct {
        const char *spec;
        int code;
        const char *want;
    } bad[] = {
        {"m4:2,nope:1", SCV_ENOTFOUND, "mix 'm4:2,nope:1': 'nope' is not a VM type"},
        {"m4:x", SCV_EINVAL, "count 'x' of m4: expected an integer in 1..1024"},
        {"m4:0", SCV_EINVAL, "count '0' of m4"},
        {"m4:-2", SCV_EINVAL, "count '-2' of m4"},
        {"m4:2.5", SCV_EINVAL, "count '2.5' of m4"},
        {"m4:", SCV_EINVAL, "count '' of m4"},
        {"m4:1025", SCV_EINVAL, "count '1025' of m4"},
        {"m4:2,,m16:1", SCV_EINVAL, "an empty entry"},
        {"m4:2,", SCV_EINVAL, "an empty entry"},
        {"", SCV_EINVAL, "no VM type"},
        {":3", SCV_EINVAL, "an entry without a VM type"},
        {"m4,m4b,m16,m4slow,m1", SCV_EINVAL, "'m1' is a VM type too many (at most 4 types)"},
        {"m4:1000,m16:25", SCV_EINVAL, "1025 workers in all by m16, at most 1024"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        int rc = scv_vm_mix_parse(cat, bad[i].spec, &m, &err);
        CHECK_MSG(rc == bad[i].code, "'%s': status %d", bad[i].spec, rc);
        CHECK_MSG(strstr(err.msg, bad[i].want) != NULL, "'%s': '%s' lacks '%s'", bad[i].spec, err.msg, bad[i].want);
    }
}

/* ---- communication options: the planner's compression dimension ---- */

static const scv_plan_point *find_opt(const scv_plan_result *r, int mix, int K, int B, int comm)
{
    for (size_t i = 0; r && i < r->n_points; i++) {
        const scv_plan_point *p = &r->points[i];
        if (p->mix == mix && p->workers == K && p->batch == B && p->comm == comm) return p;
    }
    return NULL;
}

/* Options priced by their closed forms on a scripted ring model (alpha 1e-4 s, beta 1e-9
 * s/byte, M = 40 MB: bandwidth-bound, so Top-k wins at K = 8), the dense points unchanged by
 * them, iterations times the assumed factor, and the front without compression from the
 * dense points alone. */
static void t_plan_compress(void)
{
    scv_catalog *cat = mix_catalog();
    int vms[] = {0}, workers[] = {1, 2, 4, 8}, batches[] = {64, 256};
    const double c0 = 2e-3, c1 = 1e-4, al = 1e-4, be = 1e-9, M = 4e7;
    scv_perf_model perf = {
        .topology = SCV_TOPO_RING, .c0 = c0, .c1 = c1, .alpha = al, .beta = be, .model_bytes = M, .mare = 0.05};
    scv_stat_model st = {.kind = SCV_STAT_GNS, .n_train = 50000, .b_simple = 200, .s_min = 1000};
    scv_job_info job = {.n_params = 1e7, .act_bytes = 1e4, .input_floats = 784, .n_train = 50000};
    scv_vm_mix slow = mix_of(2, (int[]){0, 3}, (int[]){2, 2}); /* m4:2+m4slow:2: g = 10 */
    scv_plan_request r = {.catalog = cat,
                          .vms = vms,
                          .n_vms = 1,
                          .measured_vm = 0,
                          .workers = workers,
                          .n_workers = 4,
                          .batches = batches,
                          .n_batches = 2,
                          .perf = &perf,
                          .stat = &st,
                          .job = &job,
                          .objective = SCV_OBJ_TIME,
                          .measured_threads = 4,
                          .mixes = &slow,
                          .n_mixes = 1};
    enum { O_AG, O_DENSE, O_ARTOPK, O_AUTO, O_SEL0, O_SEL9, O_SLOWER, N_OPT };
    scv_plan_comm opts[N_OPT] = {
        [O_AG] = {.kind = SCV_PLAN_TOPK, .cf = 100, .collective = SCV_COLL_ALLGATHER}, /* iter_factor 0: 1 */
        [O_DENSE] = {.kind = SCV_PLAN_DENSE},
        [O_ARTOPK] = {.kind = SCV_PLAN_TOPK, .cf = 100, .collective = SCV_COLL_ARTOPK, .iter_factor = 1},
        [O_AUTO] = {.kind = SCV_PLAN_TOPK, .cf = 10, .iter_factor = 1},
        [O_SEL0] = {.kind = SCV_PLAN_SELSYNC, .lssr = 0, .iter_factor = 1},
        [O_SEL9] = {.kind = SCV_PLAN_SELSYNC, .lssr = 0.9, .iter_factor = 1},
        [O_SLOWER] = {.kind = SCV_PLAN_TOPK, .cf = 100, .iter_factor = 1.5},
    };
    scv_plan_result *base = NULL, *res = NULL;
    scv_err err = {0};
    CHECK_MSG(scv_plan(&r, &base, &err) == SCV_OK, "%s", err.msg);
    r.comms = opts, r.n_comms = N_OPT;
    CHECK_MSG(scv_plan(&r, &res, &err) == SCV_OK, "%s", err.msg);
    if (!base || !res) goto out;
    /* (a) no options: every point dense (comm -1), the dense front and choice the plan's */
    CHECK(base->comm_note[0] == 0 && base->chosen_dense == base->chosen);
    CHECK_EQ_INT(base->n_front_dense, base->n_front);
    for (size_t i = 0; i < base->n_front && i < base->n_front_dense; i++) CHECK(base->front_dense[i] == base->front[i]);
    for (size_t i = 0; i < base->n_points; i++) {
        const scv_plan_point *q = &base->points[i];
        CHECK(q->comm == -1 && q->comm_opt.kind == SCV_PLAN_DENSE && q->comm_opt.iter_factor == 1);
        if (q->mix < 0) CHECK(q->t_comm == scv_perf_comm(&perf, q->workers));
    }
    /* with options: the dense points are the plan without them, in order, to the bit */
    CHECK_EQ_INT(res->n_points, base->n_points * N_OPT);
    size_t j = 0;
    for (size_t i = 0; i < res->n_points; i++) {
        const scv_plan_point *p = &res->points[i], *q = j < base->n_points ? &base->points[j] : NULL;
        if (p->comm_opt.kind != SCV_PLAN_DENSE) continue;
        j++;
        CHECK(p->comm == O_DENSE && q);
        if (q)
            CHECK_MSG(p->vm == q->vm && p->workers == q->workers && p->batch == q->batch && p->mix == q->mix &&
                          p->t_iter == q->t_iter && p->iterations == q->iterations && p->time_s == q->time_s &&
                          p->cost == q->cost && p->price_hr == q->price_hr && p->err_rel == q->err_rel &&
                          p->extrap == q->extrap && p->compute_scale == q->compute_scale &&
                          p->comm_scale == q->comm_scale && p->mix_batch[0] == q->mix_batch[0] &&
                          p->mix_batch[1] == q->mix_batch[1] && p->t_comm == q->t_comm,
                      "dense point %zu differs from the plan without options", i);
    }
    CHECK_EQ_INT(j, base->n_points);
    /* (b) Top-k at CF = 100 (c = 0.01), K = 8, B = 256: the closed forms */
    double c = 0.01, tc8 = c0 + c1 * 256 / 8.0;
    double ag = al * 3 + 2 * M * c * be * 7;                   /* 3.0e-4 + 5.6e-3 */
    double ring = al * (14 + 3) + M * c * be * (14.0 / 8 + 3); /* 1.7e-3 + 1.9e-3 */
    double tree = 3 * al * 3 + 3 * M * c * be * 3;             /* 9.0e-4 + 3.6e-3 */
    const scv_plan_point *p = find_opt(res, -1, 8, 256, O_AG), *d = find_opt(res, -1, 8, 256, O_DENSE);
    CHECK(p && d);
    if (p && d) {
        CHECK_NEAR(p->t_comm, ag, 1e-12, 0);
        CHECK_NEAR(p->t_iter, tc8 + ag, 1e-12, 0);
        CHECK(p->comm_coll == SCV_SPARSE_ALLGATHER && p->comm_opt.kind == SCV_PLAN_TOPK && p->comm_opt.cf == 100);
        CHECK(p->iterations == d->iterations && p->comm_opt.iter_factor == 1); /* iter_factor 0 is 1 */
        CHECK_NEAR(p->time_s, p->iterations * p->t_iter, 1e-12, 0);
        CHECK(p->time_s < d->time_s); /* 6 ms against 71 ms of allreduce */
    }
    p = find_opt(res, -1, 8, 256, O_ARTOPK); /* AR-Topk: the cheaper of ring and tree (ring here) */
    CHECK(p && ring < tree);
    if (p) {
        CHECK(p->comm_coll == SCV_SPARSE_AR_RING);
        CHECK_NEAR(p->t_comm, ring, 1e-12, 0);
    }
    /* (c) auto: the cheapest of the three; at CF = 10 that is AR-Topk's ring */
    p = find_opt(res, -1, 8, 256, O_AUTO);
    double ag10 = al * 3 + 2 * M * 0.1 * be * 7, ring10 = al * 17 + M * 0.1 * be * 4.75,
           tree10 = 9 * al + 9 * M * 0.1 * be;
    CHECK(p && ring10 < ag10 && ring10 < tree10);
    if (p) {
        CHECK(p->comm_coll == SCV_SPARSE_AR_RING);
        CHECK_NEAR(p->t_comm, ring10, 1e-12, 0);
    }
    scv_plan_comm au = {.kind = SCV_PLAN_TOPK, .cf = 100};
    scv_perf_model lat = perf, bw = perf;
    lat.alpha = 1e-2, lat.beta = 1e-12; /* latency-bound: Allgather's log2 K messages */
    bw.alpha = 1e-6, bw.beta = 1e-7;    /* bandwidth-bound: AR-Topk */
    scv_sparse_coll h;
    CHECK_NEAR(scv_perf_comm_option(&lat, 8, &au, 1, &h), 3e-2 + 2 * M * c * 1e-12 * 7, 1e-12, 0);
    CHECK(h == SCV_SPARSE_ALLGATHER);
    scv_perf_comm_option(&bw, 8, &au, 1, &h);
    CHECK(h != SCV_SPARSE_ALLGATHER);
    for (int K = 2; K <= 64; K *= 2)
        for (int m = 0; m < 3; m++) {
            const scv_perf_model *pm = m == 0 ? &perf : m == 1 ? &lat : &bw;
            double t = scv_perf_comm_option(pm, K, &au, 1, &h), best = INFINITY;
            for (int k = SCV_SPARSE_ALLGATHER; k <= SCV_SPARSE_AR_TREE; k++)
                best = fmin(best, scv_sparse_cost((scv_sparse_coll)k, pm->alpha, pm->beta, M, c, K));
            CHECK_MSG(t == best && scv_sparse_cost(h, pm->alpha, pm->beta, M, c, K) == best, "K=%d model %d", K, m);
        }
    /* (d) SelSync: LSSR 0 is synchronous SGD (the gradient's M bytes) and the flags' latency
     * term 2(K-1) alpha on every step; LSSR 0.9 synchronises a tenth of the steps, averaging
     * parameters and momenta (2M) */
    scv_perf_model two = perf;
    two.model_bytes = 2 * M;
    double sync8 = 14 * al + 2 * (7.0 / 8) * 2 * M * be;
    p = find_opt(res, -1, 8, 256, O_SEL0);
    CHECK(p);
    if (p) CHECK_NEAR(p->t_comm, scv_perf_comm(&perf, 8) + 14 * al, 1e-12, 0);
    p = find_opt(res, -1, 8, 256, O_SEL9);
    CHECK(p);
    if (p) {
        CHECK_NEAR(p->t_comm, 0.1 * scv_perf_comm(&two, 8) + 14 * al, 1e-12, 0);
        CHECK_NEAR(p->t_comm, 0.1 * sync8 + 14 * al, 1e-12, 0);
    }
    for (int o = 0; o < N_OPT; o++) { /* one worker: nothing to communicate */
        p = find_opt(res, -1, 1, 64, o);
        CHECK(p && p->t_comm == 0);
    }
    /* (d') probed latency: Top-k's messages and SelSync's flags cost alpha_msg, not the dense
     * fit's alpha (its dense allreduce keeps alpha) */
    scv_perf_model pr = perf;
    pr.alpha_msg = 3e-6;
    CHECK_NEAR(scv_perf_comm_option(&pr, 8, &au, 1, &h), scv_sparse_cost(h, 3e-6, be, M, c, 8), 1e-15, 0);
    CHECK(h == scv_sparse_choose(3e-6, be, M, c, 8));
    CHECK(scv_perf_comm_option(&pr, 8, &opts[O_DENSE], 1, NULL) == scv_perf_comm(&perf, 8));
    CHECK_NEAR(scv_perf_comm_option(&pr, 8, &opts[O_SEL9], 1, NULL), 0.1 * sync8 + 3 * 3e-6, 1e-15, 0);
    scv_perf_model ps = {.topology = SCV_TOPO_PS, .alpha = 1e-3, .beta = 5e-4};
    scv_plan_comm s5 = {.kind = SCV_PLAN_SELSYNC, .lssr = 0.5};
    CHECK_NEAR(scv_perf_comm_option(&ps, 4, &s5, 1, NULL), 0.5 * (1e-3 + 2 * 5e-4 * 4) + 1e-3, 1e-12, 0);
    CHECK(isnan(scv_perf_comm_option(&ps, 4, &au, 1, NULL))); /* Top-k: not priced by the PS form */
    /* (e) iterations: the statistical model's times the assumed factor */
    p = find_opt(res, -1, 4, 64, O_SLOWER), d = find_opt(res, -1, 4, 64, O_DENSE);
    CHECK(p && d);
    if (p && d) {
        CHECK(p->iterations == d->iterations * 1.5 && p->comm_opt.iter_factor == 1.5);
        CHECK_NEAR(p->time_s, 1.5 * d->iterations * p->t_iter, 1e-12, 0);
        CHECK_NEAR(p->cost, scv_cost_usd(4, p->time_s, p->price_hr), 1e-12, 0);
    }
    /* mixes too: Top-k at the slowest link (beta x 10), K = 4 */
    p = find_opt(res, 0, 4, 256, O_AG);
    CHECK(p && p->comm_scale == 10);
    if (p) CHECK_NEAR(p->t_comm, al * 2 + 2 * M * c * be * 10 * 3, 1e-12, 0);
    /* (f) the front without compression: the dense points' own front, and its choice */
    size_t nd = 0;
    for (size_t i = 0; i < res->n_front_dense; i++)
        CHECK(res->points[res->front_dense[i]].comm_opt.kind == SCV_PLAN_DENSE);
    for (size_t i = 0; i < res->n_points; i++) { /* a dense point is on it or dominated by one on it */
        const scv_plan_point *q = &res->points[i];
        if (q->comm_opt.kind != SCV_PLAN_DENSE) continue;
        nd++;
        int on = 0, dominated = 0;
        for (size_t f = 0; f < res->n_front_dense; f++) {
            const scv_plan_point *e = &res->points[res->front_dense[f]];
            on |= res->front_dense[f] == i;
            dominated |= e->time_s <= q->time_s && e->cost <= q->cost && (e->time_s < q->time_s || e->cost < q->cost);
            if (res->front_dense[f] != i)
                CHECK(!(q->time_s <= e->time_s && q->cost <= e->cost && (q->time_s < e->time_s || q->cost < e->cost)));
        }
        CHECK(on != dominated);
    }
    CHECK_EQ_INT(nd, base->n_points);
    CHECK_EQ_INT(res->n_front_dense, base->n_front);
    CHECK(res->chosen_dense == (long)res->front_dense[0]); /* time: the fastest dense point */
    if (res->chosen_dense >= 0) CHECK(res->points[res->chosen_dense].time_s == base->points[base->chosen].time_s);
    CHECK(res->chosen >= 0 && res->points[res->chosen].comm_opt.kind != SCV_PLAN_DENSE); /* compression is faster */
    CHECK(res->points[res->chosen].time_s < res->points[res->chosen_dense].time_s);
    CHECK_MSG(strstr(res->why, "iterations assumed x1.0 of dense: not measured") != NULL, "%s", res->why);
    CHECK_MSG(strstr(res->comm_note, "iterations assumed relative to dense, not measured: topk:100:allgather x1.0") &&
                  strstr(res->comm_note, "topk:100 x1.5") &&
                  strstr(res->comm_note, "compression kernel time not included (none measured)"),
              "%s", res->comm_note);
    scv_plan_result_free(res);
    res = NULL;
    /* a measured kernel time goes on Top-k steps; measured iteration times on dense points
     * only, where its compute (twice the fit's here) carries to every variant at K = 8 */
    opts[O_SLOWER].iter_factor = 1;
    scv_config_stats meas = {.workers = 8, .batch = 256, .t_iter = 0.03, .t_comm = 0.03 - 2 * tc8};
    r.t_compress = 2e-3, r.measured = &meas, r.n_measured = 1;
    CHECK_MSG(scv_plan(&r, &res, &err) == SCV_OK, "%s", err.msg);
    if (!res) goto out;
    p = find_opt(res, -1, 8, 256, O_AG), d = find_opt(res, -1, 8, 256, O_DENSE);
    CHECK(p && d && d->t_iter == 0.03);
    if (p) CHECK_NEAR(p->t_iter, 2 * tc8 + ag + 2e-3, 1e-12, 0);
    p = find_opt(res, -1, 8, 256, O_SEL0);
    if (p) CHECK_NEAR(p->t_iter, 2 * tc8 + scv_perf_comm(&perf, 8) + 14 * al, 1e-12, 0);
    CHECK_MSG(strstr(res->comm_note, "iterations assumed x1.0 of dense: not measured (topk:100:allgather, "
                                     "topk:100:artopk, topk:10, selsync:0, selsync:0.9, topk:100)") &&
                  strstr(res->comm_note, "compression kernels 2 ms per Top-k step (measured)"),
              "%s", res->comm_note);
    r.t_compress = 0, r.measured = NULL, r.n_measured = 0;
    scv_plan_result_free(res);
    res = NULL;
    /* (g) bad options are refused, named */
    static const struct {
        scv_plan_comm o;
        int ps;
        const char *want;
    } bad[] = {
        {{.kind = SCV_PLAN_TOPK, .cf = 1}, 0, "option 1 (topk:1): the factor must be > 1"},
        {{.kind = SCV_PLAN_TOPK, .cf = 10, .collective = (scv_coll_pref)9}, 0, "unknown collective 9"},
        {{.kind = SCV_PLAN_TOPK, .cf = 10}, 1, "option 1 (topk:10): Top-k is priced with the ring model"},
        {{.kind = SCV_PLAN_SELSYNC, .lssr = 1}, 0, "option 1 (selsync:1): the share of local steps must be in [0, 1)"},
        {{.kind = SCV_PLAN_SELSYNC, .lssr = 0.5, .iter_factor = -1}, 0, "iterations relative to dense -1"},
        {{.kind = (scv_plan_comm_kind)7}, 0, "option 1: unknown kind 7"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        scv_plan_comm two_opts[2] = {{.kind = SCV_PLAN_DENSE}, bad[i].o};
        scv_plan_result *x = NULL;
        perf.topology = bad[i].ps ? SCV_TOPO_PS : SCV_TOPO_RING;
        r.comms = two_opts, r.n_comms = 2;
        CHECK_MSG(scv_plan(&r, &x, &err) == SCV_EINVAL && !x, "case %zu", i);
        CHECK_MSG(strstr(err.msg, bad[i].want) != NULL, "case %zu: '%s' lacks '%s'", i, err.msg, bad[i].want);
        scv_plan_result_free(x);
    }
    perf.topology = SCV_TOPO_RING;
    /* SelSync under the parameter-server form is priced */
    perf.topology = SCV_TOPO_PS;
    scv_plan_comm sel_only = {.kind = SCV_PLAN_SELSYNC, .lssr = 0.5};
    r.comms = &sel_only, r.n_comms = 1, r.n_mixes = 0;
    CHECK_MSG(scv_plan(&r, &res, &err) == SCV_OK, "%s", err.msg);
    if (res) {
        p = find_opt(res, -1, 4, 64, 0), d = find_opt(res, -1, 4, 64, -1); /* no dense option: dense is -1 */
        CHECK(p && d && d->comm_opt.kind == SCV_PLAN_DENSE);
        if (p && d) CHECK_NEAR(p->t_comm, 0.5 * (al + 2 * be * 4) + al, 1e-12, 0);
    }
    perf.topology = SCV_TOPO_RING;
out:
    scv_plan_result_free(base);
    scv_plan_result_free(res);
}

/* Option lists as people write them: dense first, always; errors name the part at fault. */
static void t_plan_comm_parse(void)
{
    scv_plan_comm o[SCV_PLAN_MAX_COMMS + 1];
    size_t n = 0;
    scv_err err = {0};
    char buf[64];
    CHECK(scv_plan_comm_parse("topk:100,selsync:0.9", 1.25, o, 8, &n, &err) == SCV_OK && n == 3);
    CHECK(o[0].kind == SCV_PLAN_DENSE && o[0].iter_factor == 1); /* added, first */
    CHECK(o[1].kind == SCV_PLAN_TOPK && o[1].cf == 100 && o[1].collective == SCV_COLL_AUTO && o[1].iter_factor == 1.25);
    CHECK(o[2].kind == SCV_PLAN_SELSYNC && o[2].lssr == 0.9 && o[2].iter_factor == 1.25);
    CHECK(scv_plan_comm_parse("topk:10:artopk,none,topk:10:allgather,dense", 1, o, 8, &n, &err) == SCV_EINVAL);
    CHECK_MSG(strstr(err.msg, "'dense': named twice") != NULL, "%s", err.msg);
    CHECK(scv_plan_comm_parse("topk:10:artopk,none,topk:10:allgather", 1, o, 8, &n, &err) == SCV_OK && n == 3);
    CHECK(o[0].kind == SCV_PLAN_DENSE && o[1].collective == SCV_COLL_ARTOPK && o[2].collective == SCV_COLL_ALLGATHER);
    CHECK_EQ_INT(scv_plan_comm_format(&o[1], buf, sizeof buf), 14);
    CHECK_MSG(!strcmp(buf, "topk:10:artopk"), "%s", buf);
    CHECK(scv_plan_comm_format(&o[0], buf, sizeof buf) == 5 && !strcmp(buf, "dense"));
    scv_plan_comm s = {.kind = SCV_PLAN_SELSYNC, .lssr = 0.95};
    CHECK(scv_plan_comm_format(&s, buf, sizeof buf) == 12 && !strcmp(buf, "selsync:0.95"));
    CHECK(scv_plan_comm_format(NULL, buf, sizeof buf) == 5 && !strcmp(buf, "dense"));
    static const struct {
        const char *list, *want;
    } bad[] = {
        {"topk:1", "'topk:1': the factor must be > 1"},
        {"none,topk:0.5", "'topk:0.5': the factor must be > 1"},
        {"topk:2e6", "'topk:2e6': the factor must be at most 1e6"},
        {"topk", "'topk': expected topk:CF[:auto|allgather|artopk]"},
        {"topk:x", "'topk:x': expected topk:CF"},
        {"topk:nan", "'topk:nan': expected topk:CF"},
        {"topk:10:ring", "'topk:10:ring': collective 'ring': expected auto, allgather or artopk"},
        {"selsync:1", "'selsync:1': the share of local steps must be in [0, 1)"},
        {"selsync:-0.1", "'selsync:-0.1': the share of local steps must be in [0, 1)"},
        {"selsync", "'selsync': expected selsync:LSSR"},
        {"gravac", "'gravac': expected none, topk:CF[:auto|allgather|artopk] or selsync:LSSR"},
        {"none:1", "'none:1': none takes no value"},
        {"topk:10,,selsync:0.5", "an empty entry"},
        {"topk:10,", "an empty entry"},
        {"", "no option"},
        {"topk:10,topk:10.0", "'topk:10.0': named twice (as topk:10)"},
        {"topk:10:auto,topk:10", "'topk:10': named twice"},
        {"topk:2,topk:3,topk:4", "'topk:4': an option too many (at most 2 besides dense)"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        int rc = scv_plan_comm_parse(bad[i].list, 1, o, 3, &n, &err);
        CHECK_MSG(rc == SCV_EINVAL, "'%s': status %d", bad[i].list, rc);
        CHECK_MSG(strstr(err.msg, bad[i].want) != NULL, "'%s': '%s' lacks '%s'", bad[i].list, err.msg, bad[i].want);
    }
    CHECK(scv_plan_comm_parse("topk:10", 0, o, 8, &n, &err) == SCV_EINVAL);
    CHECK_MSG(strstr(err.msg, "expected a factor > 0") != NULL, "%s", err.msg);
}

static const scv_test tests[] = {
    {"plan_mix", t_plan_mix},
    {"hetero_choice", t_hetero_choice},
    {"hetero_thresholds", t_hetero_thresholds},
    {"hetero_benchmark", t_hetero_benchmark},
    {"mix_parse", t_mix_parse},
    {"plan_compress", t_plan_compress},
    {"plan_comm_parse", t_plan_comm_parse},
};
SCV_TEST_MAIN(tests)
