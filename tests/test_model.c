/*
 * test_model.c - gradients of every model against central finite differences, layer by
 * layer (each layer with parameters directly; parameter-free layers through the layers
 * below them), plus determinism and the n = 0 case.
 */
#include "scv.h"
#include "train/train.h"
#include "scv_test.h"
#include "core/util.h"
#include "train/dnn.h"
#include "train/net_internal.h"

static scv_dataset *g_data;

static double loss_at(scv_net *m, int n)
{
    double loss = 0;
    int64_t correct = 0;
    scv_net_eval(m, g_data->x, g_data->y, n, &loss, &correct, NULL);
    return loss / n;
}

/* For each layer with parameters: central differences on its 6 parameters with the
 * largest gradients and 10 random ones, against the analytic gradient, within 2% plus the
 * float rounding of the loss (~5e-8) over the step. */
static void grad_check(const char *name, const char *hidden)
{
    scv_net_spec spec = {.name = name, .in_c = 1, .in_h = 28, .in_w = 28, .n_classes = 10};
    if (hidden) CHECK(scv_net_parse_hidden(hidden, &spec, NULL) == SCV_OK);
    scv_net *m = NULL;
    scv_err err = {0};
    CHECK_MSG(scv_net_new(&spec, &m, &err) == SCV_OK, "%s", err.msg);
    if (!m) return;
    scv_net_init(m, 7);
    const int n = 6;
    double loss = 0;
    int64_t correct = 0;
    CHECK(scv_net_train_step(m, g_data->x, g_data->y, n, 1.0f / n, &loss, &correct, &err) == SCV_OK);
    CHECK_NEAR(loss / n, loss_at(m, n), 1e-5, 1e-6); /* train and inference forward agree */
    float *w = scv_net_params(m), *g = scv_net_grads(m);
    scv_rng r;
    scv_rng_seed(&r, 3);
    int checked_layers = 0;
    for (int li = 0; li < scv_net_layer_count(m); li++) {
        size_t off, cnt, pick[16];
        const char *kind = scv_net_layer_info(m, li, &off, &cnt);
        if (!cnt) continue;
        int np = 0;
        for (int t = 0; t < 6; t++) { /* the largest |g| not yet picked */
            size_t best = off;
            double bv = -1;
            for (size_t j = off; j < off + cnt; j++) {
                int seen = 0;
                for (int q = 0; q < np; q++) seen |= pick[q] == j;
                if (!seen && fabs(g[j]) > bv) bv = fabs(g[j]), best = j;
            }
            pick[np++] = best;
        }
        while (np < 16) pick[np++] = off + (size_t)scv_rng_below(&r, cnt);
        double gmax = fabs(g[pick[0]]);
        for (int q = 0; q < np; q++) {
            size_t j = pick[q];
            float keep = w[j];
            /* ReLU and max-pool make the loss piecewise smooth, with many small kinks for
             * early conv weights: a step that straddles kinks misjudges the slope. A correct
             * gradient matches at one of four steps at least; a wrong one matches at none. */
            double best_fd = 0, best_eps = 0, best_gap = INFINITY;
            for (double eps = 1e-3; eps >= 2e-5; eps /= 3.1623) {
                w[j] = keep + (float)eps;
                double lp = loss_at(m, n);
                w[j] = keep - (float)eps;
                double lm = loss_at(m, n);
                w[j] = keep;
                double fd = (lp - lm) / (2 * eps);
                double gap = fabs(fd - g[j]) - (2e-2 * fabs(g[j]) + 5e-8 / eps);
                if (gap < best_gap) best_gap = gap, best_fd = fd, best_eps = eps;
            }
            CHECK_MSG(best_gap <= 0,
                      "%s layer %d (%s) parameter %zu: analytic %.6g, finite difference %.6g "
                      "(best of 4 steps, %.1g)", name, li, kind, j - off, g[j], best_fd, best_eps);
        }
        CHECK_MSG(gmax > 1e-6, "%s layer %d (%s): gradient is zero", name, li, kind);
        checked_layers++;
    }
    CHECK(checked_layers >= 1);
    scv_net_free(m);
}

static void t_grad_logreg(void) { grad_check("logreg", NULL); }
static void t_grad_mlp(void) { grad_check("mlp", "32,16"); }
static void t_grad_lenet(void) { grad_check("lenet", NULL); }
static void t_grad_resnet(void) { grad_check("resnet", NULL); }

static void t_same_seed_same_result(void)
{
    scv_net_spec spec = {.name = "lenet", .in_c = 1, .in_h = 28, .in_w = 28, .n_classes = 10};
    scv_net *a = NULL, *b = NULL;
    CHECK(scv_net_new(&spec, &a, NULL) == SCV_OK);
    CHECK(scv_net_new(&spec, &b, NULL) == SCV_OK);
    if (!a || !b) return;
    scv_net_init(a, 11);
    scv_net_init(b, 11);
    double la = 0, lb = 0;
    int64_t ca = 0, cb = 0;
    scv_net_train_step(a, g_data->x, g_data->y, 16, 1.0f / 16, &la, &ca, NULL);
    scv_net_train_step(b, g_data->x, g_data->y, 16, 1.0f / 16, &lb, &cb, NULL);
    CHECK(la == lb);
    CHECK(memcmp(scv_net_grads(a), scv_net_grads(b), scv_net_nparams(a) * sizeof(float)) == 0);
    /* an empty share of the batch gives a zero gradient */
    scv_net_train_step(a, g_data->x, g_data->y, 0, 1.0f, &la, &ca, NULL);
    double sq = 0;
    for (size_t j = 0; j < scv_net_nparams(a); j++) sq += scv_net_grads(a)[j];
    CHECK(sq == 0);
    scv_net_free(a);
    scv_net_free(b);
}

/* Summing the gradients of two halves (scale 1/B each) equals the full-batch gradient:
 * the identity that data parallelism relies on. */
static void t_split_gradient_sums(void)
{
    scv_net_spec spec = {.name = "resnet", .in_c = 1, .in_h = 28, .in_w = 28, .n_classes = 10};
    scv_net *m = NULL;
    CHECK(scv_net_new(&spec, &m, NULL) == SCV_OK);
    if (!m) return;
    scv_net_init(m, 5);
    size_t np = scv_net_nparams(m);
    float *full = malloc(np * sizeof(float)), *half = malloc(np * sizeof(float));
    double l = 0;
    int64_t c = 0;
    scv_net_train_step(m, g_data->x, g_data->y, 8, 1.0f / 8, &l, &c, NULL);
    memcpy(full, scv_net_grads(m), np * sizeof(float));
    scv_net_train_step(m, g_data->x, g_data->y, 3, 1.0f / 8, &l, &c, NULL);
    memcpy(half, scv_net_grads(m), np * sizeof(float));
    scv_net_train_step(m, g_data->x + 3 * 784, g_data->y + 3, 5, 1.0f / 8, &l, &c, NULL);
    double num = 0, den = 0;
    for (size_t j = 0; j < np; j++) {
        double s = (double)half[j] + scv_net_grads(m)[j];
        num += (s - full[j]) * (s - full[j]);
        den += (double)full[j] * full[j];
    }
    CHECK_MSG(sqrt(num / den) < 1e-5, "relative difference %.3g", sqrt(num / den));
    free(full);
    free(half);
    scv_net_free(m);
}

static void t_bad_specs(void)
{
    scv_net *m = NULL;
    scv_err err = {0};
    scv_net_spec spec = {.name = "vgg", .in_c = 1, .in_h = 28, .in_w = 28, .n_classes = 10};
    CHECK(scv_net_new(&spec, &m, &err) == SCV_EINVAL);
    CHECK(strstr(err.msg, "unknown model 'vgg'") != NULL);
    CHECK(m == NULL);
    CHECK(scv_net_parse_hidden("12,x", &spec, &err) == SCV_EINVAL);
    CHECK(scv_net_parse_hidden("", &spec, &err) == SCV_EINVAL);
    CHECK(scv_net_parse_hidden("0", &spec, &err) == SCV_EINVAL);
    CHECK(scv_net_parse_hidden("64,32", &spec, &err) == SCV_OK && spec.n_hidden == 2);
}

static const scv_test tests[] = {
    {"grad_logreg", t_grad_logreg},       {"grad_mlp", t_grad_mlp},
    {"grad_lenet", t_grad_lenet},         {"grad_resnet", t_grad_resnet},
    {"deterministic", t_same_seed_same_result}, {"split_gradient_sums", t_split_gradient_sums},
    {"bad_specs", t_bad_specs},
};

int main(int argc, char **argv)
{
    scv_compute_threads(1);
    if (scv_dataset_load("synthetic:64", 0, &g_data, NULL) != SCV_OK) return 1;
    int rc = scv_test_main(tests, (int)(sizeof tests / sizeof tests[0]), argc, argv);
    scv_dataset_free(g_data);
    return rc;
}
