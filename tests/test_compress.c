/*
 * test_compress.c - the pure parts of communication efficiency (src/train/compress.c): Top-k
 * selection against a brute-force sort (ties, zeros, NaN, every k), error feedback that loses
 * no gradient mass over steps, the alpha-beta choice of the sparse collective on scripted
 * alpha and beta (scv_sparse_cost and scv_sparse_choose, the parallel model's: scv.h,
 * src/model/perf.c), GraVAC's factor on scripted gains and throughputs, and SelSync's flag.
 */
#include "scv_test.h"
#include "train/compress.h"
#include "train/train.h"
#include "model/model.h"

#include <stdint.h>

static uint64_t rng = 88172645463325252ull;
static double unif(void)
{
    rng ^= rng << 13, rng ^= rng >> 7, rng ^= rng << 17;
    return (double)(rng >> 11) / 9007199254740992.0;
}

/* brute force: the k first of the order (|x| descending, NaN largest, lower index first) */
static int first_of(const float *x, uint32_t a, uint32_t b)
{
    float ma = x[a] != x[a] ? INFINITY : fabsf(x[a]), mb = x[b] != x[b] ? INFINITY : fabsf(x[b]);
    return ma > mb || (ma == mb && a < b);
}

static void t_topk_matches_sort(void)
{
    enum { N = 1000 };
    float x[N];
    uint32_t idx[N], work[N], ref[N];
    int bad = 0;
    for (int trial = 0; trial < 60 && !bad; trial++) {
        size_t n = 1 + (size_t)(unif() * N);
        for (size_t i = 0; i < n; i++) {
            double u = unif();
            /* kinds: many ties (small integers), zeros, a NaN now and then, plain floats */
            x[i] = trial % 3 == 0 ? (float)((int)(u * 7) - 3) : (float)(u * 2 - 1);
            if (trial % 5 == 1 && i % 17 == 3) x[i] = 0;
            if (trial % 7 == 2 && i == n / 2) x[i] = NAN;
        }
        for (size_t i = 0; i < n; i++) ref[i] = (uint32_t)i; /* insertion sort by the order */
        for (size_t i = 1; i < n; i++)
            for (size_t j = i; j > 0 && first_of(x, ref[j], ref[j - 1]); j--) {
                uint32_t t = ref[j];
                ref[j] = ref[j - 1], ref[j - 1] = t;
            }
        size_t ks[] = {1, 2, n / 10 + 1, n / 2, n > 1 ? n - 1 : 1, n};
        for (size_t q = 0; q < sizeof ks / sizeof ks[0] && !bad; q++) {
            size_t k = ks[q] > n ? n : ks[q];
            scv_topk_indices(x, n, k, idx, work);
            char in[N] = {0};
            for (size_t i = 0; i < k; i++) in[ref[i]] = 1;
            for (size_t i = 0; i < k && !bad; i++)
                if (!in[idx[i]] || (i && idx[i] <= idx[i - 1])) {
                    bad = 1;
                    CHECK_MSG(0, "trial %d n %zu k %zu: idx[%zu] = %u not the k-th set or not ascending", trial, n, k,
                              i, idx[i]);
                }
        }
    }
    CHECK_EQ_INT(scv_topk_count(1000, 10), 100);
    CHECK_EQ_INT(scv_topk_count(1000, 1), 1000);
    CHECK_EQ_INT(scv_topk_count(1000, 1e9), 1);
    CHECK_EQ_INT(scv_topk_count(61706, 100), 617);
}

/* The sampled-threshold path (large n, k <= n/8) against a full sort, on smooth values, heavy
 * ties (a few distinct values, many zeros) and a NaN. */
static const float *g_sort_x;
static int cmp_order(const void *a, const void *b)
{
    uint32_t i = *(const uint32_t *)a, j = *(const uint32_t *)b;
    return first_of(g_sort_x, i, j) ? -1 : first_of(g_sort_x, j, i) ? 1 : 0;
}
static void t_topk_large(void)
{
    enum { N = 70000 };
    float *x = malloc(N * sizeof *x);
    uint32_t *idx = malloc(N * sizeof *idx), *work = malloc(N * sizeof *work), *ref = malloc(N * sizeof *ref);
    char *in = malloc(N);
    if (!x || !idx || !work || !ref || !in) {
        CHECK(0);
        return;
    }
    for (int kind = 0; kind < 3; kind++) {
        for (size_t i = 0; i < N; i++) {
            double u = unif();
            x[i] = kind == 0 ? (float)((u - 0.5) * exp(4 * unif())) : kind == 1 ? (float)((int)(u * 5) - 2) * 0.5f
                                                                            : (i % 3 ? 0.0f : (float)(u - 0.5));
        }
        if (kind == 2) x[12345] = NAN;
        for (size_t i = 0; i < N; i++) ref[i] = (uint32_t)i;
        g_sort_x = x;
        qsort(ref, N, sizeof *ref, cmp_order);
        const size_t ks[] = {1, 7, 700, 7000, N / 8};
        for (size_t q = 0; q < sizeof ks / sizeof ks[0]; q++) {
            size_t k = ks[q];
            scv_topk_indices(x, N, k, idx, work);
            memset(in, 0, N);
            for (size_t i = 0; i < k; i++) in[ref[i]] = 1;
            int ok = 1;
            for (size_t i = 0; i < k && ok; i++) ok = in[idx[i]] && (!i || idx[i] > idx[i - 1]);
            CHECK_MSG(ok, "kind %d k %zu: not the first k in ascending order", kind, k);
        }
    }
    free(x), free(idx), free(work), free(ref), free(in);
}

/* Over 50 steps of random gradients: the values sent plus the residual equal the gradients'
 * sum entry by entry (nothing lost), and each step's gain is in (0, 1]. */
static void t_error_feedback_keeps_mass(void)
{
    enum { N = 500, STEPS = 50 };
    float e[N] = {0}, g[N], val[N];
    double sum_g[N] = {0}, sum_sent[N] = {0};
    uint32_t idx[N], work[N];
    int gain_ok = 1;
    for (int s = 0; s < STEPS; s++) {
        for (int i = 0; i < N; i++) g[i] = (float)(unif() - 0.5) * (i % 10 == 0 ? 10.0f : 1.0f), sum_g[i] += g[i];
        double sq_ef = scv_ef_accumulate(e, g, N);
        size_t k = scv_topk_count(N, s % 2 ? 10 : 100);
        scv_topk_indices(e, N, k, idx, work);
        double sq_sent = scv_ef_take(e, idx, k, val);
        for (size_t i = 0; i < k; i++) sum_sent[idx[i]] += val[i];
        double gain = sq_sent / sq_ef;
        gain_ok &= gain > 0 && gain <= 1;
    }
    double worst = 0;
    for (int i = 0; i < N; i++) worst = fmax(worst, fabs(sum_sent[i] + e[i] - sum_g[i]));
    CHECK_MSG(worst < 1e-4, "largest |sent + residual - sum g| = %g", worst);
    CHECK(gain_ok);
}

/* The fused error feedback and selection gives what the two calls give, step after step: the
 * same |g_ef|^2 to the bit, the same indices, the same residual; through a factor that
 * changes (the guess then misses: too few or too many pass it), a NaN, and its first step
 * (no guess). The guess is used on most steps (checked through its factor moving). */
static void t_fused_topk_matches(void)
{
    enum { N = 80000, STEPS = 40 };
    float *e1 = calloc(N, sizeof(float)), *e2 = calloc(N, sizeof(float)), *g = malloc(N * sizeof(float));
    uint32_t *i1 = malloc(N * sizeof(uint32_t)), *i2 = malloc(N * sizeof(uint32_t)), *work = malloc(N * sizeof(uint32_t));
    float *val = malloc(N * sizeof(float));
    scv_topk_guess guess = {0, 0};
    int same_sq = 1, same_idx = 1, same_e = 1, used = 0, g_zero = 1;
    for (int s = 0; s < STEPS; s++) {
        for (int i = 0; i < N; i++) g[i] = (float)(unif() - 0.5) * (i % 7 == 0 ? 4.0f : 1.0f);
        if (s == 25) g[123] = NAN;
        const size_t k = scv_topk_count(N, s < 20 ? 100 : s < 30 ? 10 : 1000);
        double a = scv_ef_accumulate(e1, g, N);
        scv_topk_indices(e1, N, k, i1, work);
        const float tau_before = guess.tau;
        double b = scv_ef_accumulate_topk(e2, g, N, k, &guess, i2, work);
        for (int i = 0; i < N; i++) g_zero &= g[i] == 0;
        used += tau_before > 0;
        same_sq &= (a == b) || (isnan(a) && isnan(b));
        same_idx &= memcmp(i1, i2, k * sizeof *i1) == 0;
        scv_ef_take(e1, i1, k, val);
        scv_ef_take(e2, i2, k, val);
        for (int i = 0; i < N; i++) same_e &= memcmp(&e1[i], &e2[i], sizeof(float)) == 0;
        if (s == 25) e1[123] = e2[123] = 0; /* the NaN was taken (the largest): start clean */
    }
    CHECK(same_sq);
    CHECK(same_idx);
    CHECK(same_e);
    CHECK(g_zero); /* the gradient was moved into the residual */
    CHECK_MSG(used >= STEPS - 2, "the guess was used on %d of %d steps", used, STEPS);
    free(e1), free(e2), free(g), free(i1), free(i2), free(work), free(val);
}

/* AR-Topk: worker r's indices, every worker's values there, summed (the allreduce), equal the
 * dense sum of the error-fed gradients restricted to those indices. */
static void t_artopk_equals_dense_on_indices(void)
{
    enum { K = 4, N = 300 };
    float e[K][N] = {{0}}, g[K][N], val[K][N], ref[N];
    uint32_t idx[N], work[N];
    for (int step = 0; step < 3; step++) {
        for (int k = 0; k < K; k++)
            for (int i = 0; i < N; i++) g[k][i] = (float)(unif() - 0.5);
        for (int k = 0; k < K; k++) scv_ef_accumulate(e[k], g[k], N);
        for (int i = 0; i < N; i++) {
            ref[i] = 0;
            for (int k = 0; k < K; k++) ref[i] += e[k][i];
        }
        const int root = step % K; /* STAR: round robin */
        size_t kk = scv_topk_count(N, 10);
        scv_topk_indices(e[root], N, kk, idx, work);
        for (int k = 0; k < K; k++) scv_ef_take(e[k], idx, kk, val[k]);
        for (size_t j = 0; j < kk; j++) {
            float sum = 0;
            for (int k = 0; k < K; k++) sum += val[k][j];
            CHECK_NEAR(sum, ref[idx[j]], 1e-6, 1e-6);
            for (int k = 0; k < K; k++) CHECK(e[k][idx[j]] == 0);
        }
    }
}

/* The cheaper collective on scripted alpha, beta: latency-bound (large alpha) favours the
 * fewest messages, bandwidth-bound at many workers favours AR-Topk over Allgather. */
static void t_collective_choice(void)
{
    const double M = 4 * 269322.0, c = 0.01; /* the MLP's gradient at 100x */
    /* bandwidth-bound, N = 8: Allgather sends 2 Mc (N-1) = 14 Mc bytes per worker */
    scv_sparse_coll h = scv_sparse_choose(1e-6, 1e-7, M, c, 8);
    CHECK(h != SCV_SPARSE_ALLGATHER);
    CHECK(scv_sparse_cost(h, 1e-6, 1e-7, M, c, 8) <= scv_sparse_cost(SCV_SPARSE_ALLGATHER, 1e-6, 1e-7, M, c, 8));
    /* latency-bound: alpha 10 ms, tiny messages: Allgather's log2 N messages win */
    CHECK_EQ_INT(scv_sparse_choose(1e-2, 1e-10, M, c, 8), SCV_SPARSE_ALLGATHER);
    /* N = 2: AG = alpha + 2 Mc beta; ring = 3 alpha + 2 Mc beta; tree = 3 alpha + 3 Mc beta */
    CHECK_NEAR(scv_sparse_cost(SCV_SPARSE_ALLGATHER, 1, 1, 1, 1, 2), 3, 1e-12, 0);
    CHECK_NEAR(scv_sparse_cost(SCV_SPARSE_AR_RING, 1, 1, 1, 1, 2), 5, 1e-12, 0);
    CHECK_NEAR(scv_sparse_cost(SCV_SPARSE_AR_TREE, 1, 1, 1, 1, 2), 6, 1e-12, 0);
    CHECK_EQ_INT(scv_sparse_choose(1, 1, 1, 1, 2), SCV_SPARSE_ALLGATHER);
    /* the crossing of ring against tree at N = 16 (alpha/beta against Mc, Eq. 5a) */
    double lg = 4, thr = 1000.0 * (lg - 15.0 / 16) / (15 - lg); /* Mc = 1000 bytes */
    CHECK(scv_sparse_cost(SCV_SPARSE_AR_RING, 0.5 * thr, 1, 1000, 1, 16) <
          scv_sparse_cost(SCV_SPARSE_AR_TREE, 0.5 * thr, 1, 1000, 1, 16));
    CHECK(scv_sparse_cost(SCV_SPARSE_AR_RING, 2 * thr, 1, 1000, 1, 16) >
          scv_sparse_cost(SCV_SPARSE_AR_TREE, 2 * thr, 1, 1000, 1, 16));
}

/* GraVAC on scripted gains: each factor's gain and its throughput (samples/s) */
static double run_gravac(scv_gravac_state *s, double (*gain_of)(double), double (*tput_of)(double), int windows)
{
    for (int i = 0; i < windows * s->pol.window; i++) {
        double cf = s->cf;
        double g = gain_of(cf), t = 256.0 / tput_of(cf);
        scv_gravac_step(s, cf, g, t, 256);
    }
    return s->cf;
}
static double gain_falls(double cf) { return cf <= 1 ? 0.95 : cf <= 10 ? 0.95 : cf <= 40 ? 0.8 : 0.5; }
static double tput_grows(double cf) { return cf <= 1 ? 1000 : 1000 + 50 * cf; }
static double gain_low(double cf) { return cf <= 10 ? 0.3 : 0.1; }
static double tput_flat(double cf) { return cf <= 1 ? 1000 : 1500; }
static double gain_high(double cf) { (void)cf; return 0.99; }

static void t_gravac(void)
{
    scv_gravac_policy pol = scv_gravac_policy_default();
    scv_gravac_state s;
    /* feasible up to 40x (gain 0.8 >= 0.7), 80x falls to 0.5: keeps 40x, the best throughput */
    scv_gravac_init(&s, &pol);
    CHECK_EQ_INT((int)s.cf, 10);
    CHECK_EQ_INT((int)run_gravac(&s, gain_falls, tput_grows, 6), 40);
    CHECK(s.settled);
    /* holds it while feasible */
    CHECK_EQ_INT((int)run_gravac(&s, gain_falls, tput_grows, 5), 40);
    /* no factor keeps the gain: dense */
    scv_gravac_init(&s, &pol);
    CHECK_EQ_INT((int)run_gravac(&s, gain_low, tput_grows, 3), 1);
    /* throughput no better past the first: the lower factor is kept */
    scv_gravac_init(&s, &pol);
    CHECK_EQ_INT((int)run_gravac(&s, gain_high, tput_flat, 4), 10);
    /* always feasible and faster: up to cf_max (10 .. 640; 1280 > 1000) */
    scv_gravac_init(&s, &pol);
    CHECK_EQ_INT((int)run_gravac(&s, gain_high, tput_grows, 12), 640);
    /* dense, then cf_min's probe reaches eps: explores again */
    scv_gravac_init(&s, &pol);
    run_gravac(&s, gain_low, tput_grows, 3);
    CHECK_EQ_INT((int)run_gravac(&s, gain_falls, tput_grows, 1), 10);
    CHECK(!s.settled);
    /* a step measured at another factor (before a change took effect) does not count */
    scv_gravac_init(&s, &pol);
    for (int i = 0; i < 3 * pol.window; i++) scv_gravac_step(&s, 20, 0.1, 0.1, 256);
    CHECK_EQ_INT((int)s.cf, 10);
    CHECK_EQ_INT(s.steps, 0);
}

static void t_selsync(void)
{
    scv_selsync_policy pol = scv_selsync_policy_default();
    scv_selsync_state s;
    /* delta = 0: every step synchronises */
    pol.delta = 0;
    scv_selsync_init(&s, &pol);
    int all = 1;
    for (int i = 0; i < 100; i++) all &= scv_selsync_change(&s, 1 + 0.001 * (i % 3)) >= pol.delta;
    CHECK(all);
    /* delta = 0.3: a steady norm stays local; a jump (x10) asks for a synchronisation */
    pol.delta = 0.3;
    scv_selsync_init(&s, &pol);
    CHECK(scv_selsync_change(&s, 1.0) >= pol.delta); /* the first step */
    int any = 0;
    for (int i = 0; i < 50; i++) any |= scv_selsync_change(&s, 1.0 + 0.01 * (i % 2)) >= pol.delta;
    CHECK(!any);
    CHECK(scv_selsync_change(&s, 10.0) >= pol.delta); /* EWMA moves by 2/26 x 9 = 0.69 > 0.3 */
    s.local_steps = 30, s.sync_steps = 10;
    CHECK_NEAR(scv_selsync_lssr(&s), 0.75, 1e-12, 0);
    /* a target share of local steps: the first history/2 steps synchronise; then, on changes
     * drawn from any spread (here: 4 workers, log-uniform over three decades, drifting down
     * tenfold), the share of local steps comes within 0.05 of the target; two states fed the
     * same changes decide alike (every rank must) */
    const double targets[] = {0.5, 0.9, 0.95};
    for (int t = 0; t < 3; t++) {
        pol = scv_selsync_policy_default();
        pol.lssr = targets[t];
        scv_selsync_state a, b;
        scv_selsync_init(&a, &pol), scv_selsync_init(&b, &pol);
        int early = 1, same = 1, local = 0;
        const int N = 4000;
        for (int i = 0; i < N; i++) {
            float ch[4];
            for (int k = 0; k < 4; k++) ch[k] = (float)(pow(10, -3 * unif()) * pow(10, -(double)i / N));
            if (i == 7) ch[2] = INFINITY; /* a worker's first step: no previous value */
            const int da = scv_selsync_decide(&a, ch, 4), db = scv_selsync_decide(&b, ch, 4);
            same &= da == db;
            if (i < pol.history / 2) early &= da;
            else local += !da;
        }
        const double share = (double)local / (N - pol.history / 2);
        CHECK(early && same);
        CHECK_MSG(fabs(share - targets[t]) < 0.05, "target %.2f: share of local steps %.3f", targets[t], share);
    }
}

static const scv_test tests[] = {
    {"topk_matches_sort", t_topk_matches_sort},
    {"topk_large", t_topk_large},
    {"error_feedback_keeps_mass", t_error_feedback_keeps_mass},
    {"fused_topk_matches", t_fused_topk_matches},
    {"artopk_equals_dense_on_indices", t_artopk_equals_dense_on_indices},
    {"collective_choice", t_collective_choice},
    {"gravac", t_gravac},
    {"selsync", t_selsync},
};
SCV_TEST_MAIN(tests)
