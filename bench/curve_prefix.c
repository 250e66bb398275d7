/*
 * curve_prefix.c - how well the learning-curve module predicts the target's crossing from
 * the first part of a real run. Reads a trainer metrics file (periodic evaluations), fits
 * scv_curve_fit on the evaluations up to each prefix (0.25 .. 3 epochs), predicts where
 * the smoothed accuracy (mean of 3) reaches the target, and prints it beside the crossing
 * measured on the whole run. With a fourth argument "loss", the curve is the period-mean
 * training loss ("train_loss" of the evaluations) and the target a loss.
 *
 *   scavenger train --model lenet --batch 64 --epochs 7 --eval-every-epochs 0.05 \
 *                   --eval-subset 2000 --metrics lenet.jsonl
 *   cc -std=c11 -O2 -Iinclude -Isrc bench/curve_prefix.c build/libscv.a -lcjson -lsqlite3 -lm \
 *      -o build/curve_prefix && build/curve_prefix lenet.jsonl 0.885 60000
 */
#include "scv.h"
#include "model/model.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int main(int argc, char **argv)
{
    if (argc != 4 && !(argc == 5 && !strcmp(argv[4], "loss"))) {
        fprintf(stderr, "usage: curve_prefix METRICS.jsonl TARGET N_TRAIN [loss]\n");
        return 2;
    }
    FILE *f = fopen(argv[1], "r");
    if (!f) {
        perror(argv[1]);
        return 1;
    }
    double target = atof(argv[2]), n_train = atof(argv[3]);
    const scv_metric metric = argc == 5 ? SCV_METRIC_LOSS : SCV_METRIC_ACCURACY;
    const char *key = metric == SCV_METRIC_LOSS ? "\"train_loss\":" : "\"test_accuracy\":";
    static double x[100000], y[100000];
    char line[8192];
    size_t n = 0;
    while (fgets(line, sizeof line, f) && n < 100000) {
        const char *e = strstr(line, "\"epoch_progress\":"), *a = strstr(line, key);
        if (!strstr(line, "\"type\":\"eval\"") || !strstr(line, "\"role\":\"periodic\"") || !e || !a ||
            !strncmp(a + strlen(key), "null", 4))
            continue;
        x[n] = atof(e + 17) * n_train;
        y[n++] = atof(a + strlen(key));
    }
    fclose(f);
    long first = scv_target_first_reached(metric, y, n, target, 3);
    printf("| prefix (epochs) | evaluations | form | asymptote | predicted crossing (epochs) | band | share of bootstrap fits reaching it |\n"
           "|---|---|---|---|---|---|---|\n");
    const double pre[] = {0.25, 0.5, 1, 2, 3};
    for (int i = 0; i < 5; i++) {
        size_t m = 0;
        while (m < n && x[m] <= pre[i] * n_train) m++;
        scv_curve c;
        scv_curve_prediction p;
        scv_err err = {0};
        if (scv_curve_fit(metric, x, y, m, NULL, &c, &err) ||
            scv_curve_predict(&c, x, y, m, target, 1, NULL, &p, &err)) {
            printf("| %.2f | %zu | - | - | %s | - | - |\n", pre[i], m, err.msg);
            continue;
        }
        printf("| %.2f | %zu | %s | %.4f | %.2f | %.2f-%.2f | %.2f |\n", pre[i], m, scv_curve_form_name(c.form), c.a,
               p.x_star / n_train, p.lo / n_train, p.hi / n_train, p.p_reach);
    }
    printf("\nmeasured: the mean of 3 evaluations first reaches %.4f at %.2f epochs (%zu evaluations)\n", target,
           first >= 0 ? x[first] / n_train : NAN, n);
    return 0;
}
