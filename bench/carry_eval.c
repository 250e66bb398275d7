/*
 * carry_eval.c - the learnt batch carry-over (src/model/carry.c) on a curve corpus: for each
 * job (model, dataset, base learning rate and batch) and learning-rate rule of the corpus,
 * and each metric, the noise scale fitted to its curves at several batches and the error of
 * carrying a crossing to a batch left out of the fit, beside the same law fitted to the
 * job's curves of every rule (what knowing the rule is worth).
 *
 *   cc -std=c11 -O2 -Iinclude -Isrc bench/carry_eval.c build/libscv.a -lcjson -lsqlite3 -lm -o build/carry_eval
 *   build/carry_eval data/curves.jsonl
 */
#include "scv.h"
#include "model/model.h"
#include "io/io.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

static const char *RULES[] = {"none", "linear", "sqrt"};

int main(int argc, char **argv)
{
    if (argc != 2) {
        fprintf(stderr, "usage: carry_eval CURVES.jsonl\n");
        return 2;
    }
    scv_lcurve_set set;
    scv_err err = {0};
    if (scv_lcurves_load(argv[1], &set, &err)) {
        fprintf(stderr, "carry_eval: %s\n", err.msg);
        return 1;
    }
    printf("| job | rule | metric | batches | Bn_eff | error left out (median) | 80%% band | rule-blind Bn | "
           "rule-blind error |\n|---|---|---|---|---|---|---|---|---|\n");
    double sum[2] = {0, 0};
    int n = 0;
    for (size_t i = 0; i < set.n; i++) {
        const scv_lcurve *c = &set.c[i];
        size_t j = 0; /* each job once: its first curve */
        while (j < i && strcmp(set.c[j].job, c->job)) j++;
        if (j < i) continue;
        char key[64];
        scv_calib_key(c->model, c->dataset, key, sizeof key);
        for (int r = 0; r < 3; r++)
            for (int m = 0; m < 2; m++) {
                scv_carry_job job = {.lr = c->lr, .base_batch = c->base_batch, .lr_scaling = (scv_lr_scaling)r};
                scv_carry_policy blind = scv_carry_policy_default();
                blind.any_rule = 1;
                scv_carry a, b, f;
                scv_metric metric = m ? SCV_METRIC_LOSS : SCV_METRIC_ACCURACY;
                if (scv_carry_learn(&set, key, &job, metric, NULL, 0.8, &a)) continue;
                /* the rule-blind law (its noise scale fitted to every rule's curves) judged on this rule's */
                scv_carry_learn(&set, key, &job, metric, &blind, 0.8, &b);
                scv_carry_policy fixed = scv_carry_policy_default();
                fixed.fixed_b_noise = b.b_noise;
                scv_carry_learn(&set, key, &job, metric, &fixed, 0.8, &f);
                printf("| %s | %s | %s | %d | %.0f | %.0f%% | x%.2f-x%.2f | %.0f | %.0f%% |\n", c->job, RULES[r],
                       m ? "loss" : "accuracy", a.n_batches, a.b_noise, 100 * (exp(a.med_abs) - 1), exp(a.q_lo),
                       exp(a.q_hi), b.b_noise, 100 * (exp(f.med_abs) - 1));
                b = f;
                sum[0] += a.med_abs, sum[1] += b.med_abs, n++;
            }
    }
    if (n) printf("\nmean of the median errors over %d (job, rule, metric): rule-aware %.0f%%, rule-blind %.0f%%\n", n,
                  100 * (exp(sum[0] / n) - 1), 100 * (exp(sum[1] / n) - 1));
    scv_lcurve_set_free(&set);
    return 0;
}
