/*
 * test_curves.c - the learning-curve corpus (data/curves.jsonl, `bench/bench.py corpus`) and
 * its reader (scv_lcurves_load, src/io/curves.c): the shipped corpus loads and holds the
 * jobs it was generated with, over batches 32..512 and the three learning-rate rules, every
 * curve training (accuracy up, loss down from its start to its end); a valid file with
 * blank lines and null measurements loads as written; and each bad input (written to a
 * temporary directory) is refused with SCV_EPARSE naming its file, line and field, the set
 * left empty.
 */
#define _POSIX_C_SOURCE 200809L
#include "scv.h"
#include "io/io.h"
#include "model/model.h"
#include "scv_test.h"

#include <unistd.h>

static char tmp[256];

/* the jobs `bench/bench.py corpus` measured (CORPUS_JOBS) and the curves each has at least */
typedef struct {
    const char *job, *model, *dataset;
    size_t min_curves;
} corpus_job;
static const corpus_job JOBS[] = {
    {"lenet-lr0.05", "lenet", "fashion-mnist", 11},
    {"mlp256x128-lr0.05", "mlp", "fashion-mnist", 14},
    {"logreg-lr0.01", "logreg", "fashion-mnist", 15},
    {"mlp-synthetic-lr0.01", "mlp", "synthetic:20000", 14},
    {"mlp64-sgd-lr0.1", "mlp", "fashion-mnist", 16},
    {"lenet-lr0.02-wd0", "lenet", "fashion-mnist", 14},
    {"logreg-sgd-lr0.1", "logreg", "fashion-mnist", 16},
    {"mlp512x256-lr0.02", "mlp", "fashion-mnist", 16},
    {"mlp128-synthetic50000-lr0.05", "mlp", "synthetic:50000", 16},
    {"lenet-sgd-lr0.05", "lenet", "fashion-mnist", 16},
    {"resnet-lr0.01", "resnet", "fashion-mnist", 11},
};

/* the mean of the first (from_end 0) or last 5 measured values of y */
static double mean5(const double *y, size_t n, int from_end)
{
    double s = 0;
    int k = 0;
    for (size_t j = 0; j < n && k < 5; j++) {
        double v = y[from_end ? n - 1 - j : j];
        if (!isnan(v)) s += v, k++;
    }
    return k ? s / k : NAN;
}

static void t_shipped_corpus(void)
{
    char buf[4096];
    const char *path = scv_data_file("curves.jsonl", buf, sizeof buf);
    scv_lcurve_set s;
    scv_err err = {0};
    int rc = scv_lcurves_load(path, &s, &err);
    CHECK_MSG(rc == SCV_OK, "%s: %s", path, err.msg);
    if (rc) return;
    for (size_t j = 0; j < sizeof JOBS / sizeof JOBS[0]; j++) {
        size_t n = 0, seed2 = 0;
        int rules = 0, b32 = 0, b512 = 0;
        for (size_t i = 0; i < s.n; i++) {
            const scv_lcurve *c = &s.c[i];
            if (strcmp(c->job, JOBS[j].job)) continue;
            n++;
            CHECK_MSG(!strcmp(c->model, JOBS[j].model) && !strcmp(c->dataset, JOBS[j].dataset), "%s: %s on %s",
                      c->job, c->model, c->dataset);
            rules |= 1 << c->lr_scaling;
            b32 |= c->batch == 32, b512 |= c->batch == 512;
            seed2 += c->seed == 2;
        }
        CHECK_MSG(n >= JOBS[j].min_curves, "%s: %zu curves, expected %zu", JOBS[j].job, n, JOBS[j].min_curves);
        CHECK_MSG(rules == 15, "%s: the rules none|linear|sqrt|adascale as bits: %d", JOBS[j].job, rules);
        CHECK_MSG(b32 && b512, "%s: B=32 %d, B=512 %d", JOBS[j].job, b32, b512);
        CHECK_MSG(seed2 >= 1, "%s: no second seed", JOBS[j].job);
    }
    for (size_t i = 0; i < s.n; i++) {
        const scv_lcurve *c = &s.c[i];
        CHECK_MSG(c->n >= 20 && c->workers == 1 && c->base_batch == 64 && c->lr > 0 && c->n_train > 0,
                  "%s B=%d: %zu points, K=%d, B0=%d, lr %g, n_train %g", c->job, c->batch, c->n, c->workers,
                  c->base_batch, c->lr, c->n_train);
        int mono = 1;
        for (size_t k = 1; k < c->n; k++) mono &= c->samples[k] >= c->samples[k - 1];
        CHECK_MSG(mono && c->samples[0] > 0, "%s B=%d seed %d: samples decrease or start at 0", c->job, c->batch,
                  c->seed);
        double a0 = mean5(c->accuracy, c->n, 0), a1 = mean5(c->accuracy, c->n, 1);
        double l0 = mean5(c->loss, c->n, 0), l1 = mean5(c->loss, c->n, 1);
        CHECK_MSG(a1 > a0 && l1 < l0, "%s B=%d rule %d seed %d: accuracy %.4f -> %.4f, loss %.4f -> %.4f", c->job,
                  c->batch, (int)c->lr_scaling, c->seed, a0, a1, l0, l1);
        /* fixed-epoch runs, the shortest 5 epochs long: the last evaluation at 4.5 epochs or later */
        double ep = c->samples[c->n - 1] / c->n_train;
        CHECK_MSG(ep >= 4.5, "%s B=%d: the last point at %.2f epochs", c->job, c->batch, ep);
    }
    scv_lcurve_set_free(&s);
}

/* writes text to tmp/name; the path in path */
static void write_file(const char *name, const char *text, size_t len, char *path, size_t cap)
{
    snprintf(path, cap, "%s/%s", tmp, name);
    FILE *f = fopen(path, "w");
    CHECK(f != NULL);
    if (!f) return;
    CHECK(fwrite(text, 1, len, f) == len);
    fclose(f);
}

#define GOOD                                                                                                 \
    "{\"job\":\"j\",\"model\":\"mlp\",\"dataset\":\"synthetic:100\",\"batch\":64,\"base_batch\":64,"         \
    "\"lr_scaling\":\"sqrt\",\"lr\":0.05,\"workers\":1,\"seed\":1,\"n_train\":100,\"epochs\":2,"             \
    "\"command\":\"build/scavenger train\",\"date\":\"2026-11-25\",\"machine\":\"m\","                      \
    "\"points\":[[64,0.5,2.0],[128,null,1.5],[128,0.75,null],[200,0.8,1.0]]}"
/* GOOD's job again (seed 2) without momentum: another recipe under the same name */
#define GOOD_SGD                                                                                                       \
    "{\"job\":\"j\",\"model\":\"mlp\",\"dataset\":\"synthetic:100\",\"batch\":64,\"base_batch\":64,"                   \
    "\"lr_scaling\":\"sqrt\",\"lr\":0.05,\"workers\":1,\"seed\":2,\"n_train\":100,\"epochs\":2,"                       \
    "\"command\":\"build/scavenger train\",\"date\":\"2026-11-25\",\"machine\":\"m\",\"momentum\":0,"                  \
    "\"points\":[[64,0.5,2.0]]}"

static void t_valid(void)
{
    char path[512];
    const char *text = "\n" GOOD "\n  \n" GOOD "\n";
    char two[2048];
    /* the second curve: another seed of the same job */
    snprintf(two, sizeof two, "%s", text);
    char *s2 = strstr(strstr(two, "\"seed\":1") + 1, "\"seed\":1");
    s2[7] = '2';
    write_file("valid.jsonl", two, strlen(two), path, sizeof path);
    scv_lcurve_set s;
    scv_err err = {0};
    int rc = scv_lcurves_load(path, &s, &err);
    CHECK_MSG(rc == SCV_OK, "%s", err.msg);
    if (rc) return;
    CHECK_EQ_INT(s.n, 2);
    const scv_lcurve *c = &s.c[0];
    CHECK(!strcmp(c->job, "j") && !strcmp(c->model, "mlp") && !strcmp(c->dataset, "synthetic:100"));
    CHECK(c->batch == 64 && c->base_batch == 64 && c->lr_scaling == SCV_LR_SCALE_SQRT && c->lr == 0.05);
    CHECK(c->workers == 1 && c->seed == 1 && c->n_train == 100 && s.c[1].seed == 2);
    CHECK_EQ_INT(c->n, 4);
    CHECK(c->samples[1] == 128 && isnan(c->accuracy[1]) && c->loss[1] == 1.5);
    CHECK(c->accuracy[2] == 0.75 && isnan(c->loss[2]) && c->samples[3] == 200);
    scv_lcurve_set_free(&s);
    CHECK(s.n == 0 && s.c == NULL);
}

/* GOOD with from replaced by to (from must occur in GOOD) */
static void subst(char *out, size_t cap, const char *from, const char *to)
{
    const char *at = strstr(GOOD, from);
    if (!at) {
        snprintf(out, cap, "%s", GOOD);
        CHECK_MSG(0, "'%s' is not in GOOD", from);
        return;
    }
    snprintf(out, cap, "%.*s%s%s", (int)(at - GOOD), GOOD, to, at + strlen(from));
}

typedef struct {
    const char *from, *to; /* the fault in GOOD (from NULL: text is the whole file) */
    const char *text;
    int line;
    const char *says;      /* what the message holds after "FILE:LINE: " */
} bad_case;

static const bad_case BAD[] = {
    {"\"batch\":64,", "", NULL, 1, "field 'batch': missing"},
    {"\"batch\":64", "\"batch\":0", NULL, 1, "field 'batch': expected an integer in 1.."},
    {"\"batch\":64", "\"batch\":1.5", NULL, 1, "field 'batch': expected an integer"},
    {"\"batch\":64", "\"batch\":\"64\"", NULL, 1, "field 'batch': expected an integer"},
    {"\"base_batch\":64", "\"base_batch\":-64", NULL, 1, "field 'base_batch': expected an integer in 1.."},
    {"\"workers\":1", "\"workers\":0", NULL, 1, "field 'workers': expected an integer in 1.."},
    {"\"workers\":1", "\"workers\":1e10", NULL, 1, "field 'workers': expected an integer in 1.."},
    {"\"n_train\":100", "\"n_train\":0", NULL, 1, "field 'n_train': expected a finite number > 0"},
    {"\"lr\":0.05", "\"lr\":1e999", NULL, 1, "field 'lr': expected a finite number > 0"},
    {"\"epochs\":2", "\"epochs\":null", NULL, 1, "field 'epochs': expected a number"},
    {"\"sqrt\"", "\"cubic\"", NULL, 1,
     "field 'lr_scaling': learning-rate rule 'cubic': expected none, linear, sqrt or adascale"},
    {"\"mlp\"", "\"vgg\"", NULL, 1, "field 'model': 'vgg': expected logreg, mlp, lenet, resnet or exec"},
    {"\"job\":\"j\"", "\"job\":\"\"", NULL, 1, "field 'job': empty"},
    {"\"job\":\"j\"", "\"job\":\"jjjjjjjjjjjjjjjjjjjjjjjjjjjjjjjjjjjjjjjjjjjjjjjjjjjjjjjjjjjjjjjjjjjjjjj\"", NULL, 1,
     "field 'job': longer than 63 characters"},
    {"\"command\":\"build/scavenger train\"", "\"command\":7", NULL, 1, "field 'command': expected a string"},
    {"\"date\":\"2026-11-25\",", "", NULL, 1, "field 'date': missing"},
    {"\"machine\":\"m\"", "\"machine\":\"m\",\"extra\":1", NULL, 1, "unknown field 'extra'"},
    {"\"seed\":1", "\"seed\":1,\"seed\":2", NULL, 1, "field 'seed': given twice"},
    {"\"machine\":\"m\"", "\"machine\":\"m\",\"arch\":\"\"", NULL, 1, "field 'arch': empty"},
    {"\"machine\":\"m\"", "\"machine\":\"m\",\"arch\":3", NULL, 1, "field 'arch': expected a string"},
    {"\"machine\":\"m\"", "\"machine\":\"m\",\"noise_scale\":0", NULL, 1,
     "field 'noise_scale': expected a finite number > 0"},
    {"\"machine\":\"m\"", "\"machine\":\"m\",\"noise_scale\":\"9\"", NULL, 1, "field 'noise_scale': expected a number"},
    {"\"machine\":\"m\"", "\"machine\":\"m\",\"momentum\":-0.9", NULL, 1,
     "field 'momentum': expected a finite number >= 0"},
    {"\"machine\":\"m\"", "\"machine\":\"m\",\"weight_decay\":null", NULL, 1,
     "field 'weight_decay': expected a number"},
    {"[[64,0.5,2.0],[128,null,1.5],[128,0.75,null],[200,0.8,1.0]]", "[]", NULL, 1, "field 'points': empty"},
    {"[[64,0.5,2.0],[128,null,1.5],[128,0.75,null],[200,0.8,1.0]]", "{}", NULL, 1, "field 'points': expected an array"},
    {"[128,0.75,null]", "[100,0.75,null]", NULL, 1, "field 'points[2]': samples 100 below the previous point's 128"},
    {"[64,0.5,2.0]", "[-1,0.5,2.0]", NULL, 1, "field 'points[0]': samples: expected a finite number >= 0"},
    {"[64,0.5,2.0]", "[1e999,0.5,2.0]", NULL, 1, "field 'points[0]': samples: expected a finite number >= 0"},
    {"[64,0.5,2.0]", "[64,1.5,2.0]", NULL, 1, "field 'points[0]': accuracy: expected a number in [0, 1]"},
    {"[64,0.5,2.0]", "[64,\"0.5\",2.0]", NULL, 1, "field 'points[0]': accuracy: expected a number in [0, 1]"},
    {"[64,0.5,2.0]", "[64,0.5,-2.0]", NULL, 1, "field 'points[0]': loss: expected a finite number >= 0"},
    {"[64,0.5,2.0]", "[64,null,null]", NULL, 1, "field 'points[0]': neither accuracy nor loss measured"},
    {"[64,0.5,2.0]", "[64,0.5]", NULL, 1, "field 'points[0]': expected [samples, accuracy|null, loss|null]"},
    {"[64,0.5,2.0]", "[64,0.5,2.0,1]", NULL, 1, "field 'points[0]': expected [samples, accuracy|null, loss|null]"},
    {NULL, NULL, "\n\n{\"job\":", 3, "not a JSON object on one line"},
    {NULL, NULL, "[1,2]\n", 1, "not a JSON object on one line"},
    {NULL, NULL, GOOD " x\n", 1, "not a JSON object on one line"},
    {NULL, NULL, GOOD "\n" GOOD "\n", 2,
     "field 'job': 'j': the same workers, batch, lr_scaling and seed as its curve 1"},
    {NULL, NULL, GOOD "\n" GOOD_SGD "\n", 2,
     "field 'job': 'j': its curve 1 has another model, dataset, lr, base_batch, momentum or weight_decay"},
    {NULL, NULL, "\n \n", 0, "no curves"},
};

/* each bad input is refused: SCV_EPARSE, "FILE:LINE: WHAT", the set left empty */
static void t_bad_inputs(void)
{
    for (size_t i = 0; i < sizeof BAD / sizeof BAD[0]; i++) {
        char text[4096], path[512], want[1024];
        if (BAD[i].from) {
            subst(text, sizeof text, BAD[i].from, BAD[i].to);
            /* the fault on line 3, after a good curve and a blank line */
            char two[4096];
            if (snprintf(two, sizeof two, "%s\n\n%.2000s\n", GOOD, text) >= (int)sizeof two) CHECK(0);
            /* the good curve's seed differs, so that only the fault is at fault */
            char *s = strstr(two, "\"seed\":1");
            s[7] = '9';
            snprintf(text, sizeof text, "%s", two);
        } else {
            snprintf(text, sizeof text, "%s", BAD[i].text);
        }
        char name[32];
        snprintf(name, sizeof name, "bad%zu.jsonl", i);
        write_file(name, text, strlen(text), path, sizeof path);
        int line = BAD[i].from ? 3 : BAD[i].line;
        if (line) snprintf(want, sizeof want, "%s:%d: %s", path, line, BAD[i].says);
        else snprintf(want, sizeof want, "%s: %s", path, BAD[i].says);
        scv_lcurve_set s = {(scv_lcurve *)&s, 77}; /* overwritten, not freed */
        scv_err err = {0};
        int rc = scv_lcurves_load(path, &s, &err);
        CHECK_MSG(rc == SCV_EPARSE && strstr(err.msg, want), "case %zu: %s: '%s', expected '%s'", i,
                  scv_errname(rc), err.msg, want);
        CHECK_MSG(s.n == 0 && s.c == NULL, "case %zu: the set holds %zu curves", i, s.n);
        if (rc == SCV_OK) scv_lcurve_set_free(&s);
    }
}

/* bytes and sizes beyond the reader's bounds; a file that cannot be opened */
static void t_bounds(void)
{
    char path[512], want[600];
    scv_lcurve_set s;
    scv_err err = {0};
    /* a NUL byte on line 2 */
    char nul[] = GOOD "\n{\"job\":\"a\0b\"}\n";
    write_file("nul.jsonl", nul, sizeof nul - 1, path, sizeof path);
    snprintf(want, sizeof want, "%s:2: a NUL byte in the line", path);
    int rc = scv_lcurves_load(path, &s, &err);
    CHECK_MSG(rc == SCV_EPARSE && strstr(err.msg, want), "%s", err.msg);
    CHECK(s.n == 0 && s.c == NULL);
    /* a line over SCV_LCURVE_MAX_LINE bytes */
    size_t big = (size_t)SCV_LCURVE_MAX_LINE + 10;
    char *text = malloc(big);
    CHECK(text != NULL);
    if (!text) return;
    memset(text, ' ', big);
    text[0] = '{';
    write_file("long.jsonl", text, big, path, sizeof path);
    snprintf(want, sizeof want, "%s:1: line longer than %d bytes", path, SCV_LCURVE_MAX_LINE);
    rc = scv_lcurves_load(path, &s, &err);
    CHECK_MSG(rc == SCV_EPARSE && strstr(err.msg, want), "%s", err.msg);
    /* more than SCV_LCURVE_MAX_POINTS points in a curve */
    const char *head = strstr(GOOD, "[[");
    size_t len = (size_t)snprintf(text, big, "%.*s[", (int)(head - GOOD), GOOD);
    for (int i = 0; i <= SCV_LCURVE_MAX_POINTS; i++)
        len += (size_t)snprintf(text + len, big - len, "%s[%d,0.5,1]", i ? "," : "", i);
    len += (size_t)snprintf(text + len, big - len, "]}\n");
    write_file("many.jsonl", text, len, path, sizeof path);
    snprintf(want, sizeof want, "%s:1: field 'points': %d points, more than %d", path, SCV_LCURVE_MAX_POINTS + 1,
             SCV_LCURVE_MAX_POINTS);
    rc = scv_lcurves_load(path, &s, &err);
    CHECK_MSG(rc == SCV_EPARSE && strstr(err.msg, want), "%s", err.msg);
    CHECK(s.n == 0 && s.c == NULL);
    /* more than SCV_LCURVE_MAX_CURVES curves: seeds 0.. of one job */
    len = 0;
    for (int i = 0; i <= SCV_LCURVE_MAX_CURVES; i++) {
        char line[1024];
        snprintf(line, sizeof line, "%s", GOOD);
        char *at = strstr(line, "\"seed\":1");
        char seed[32];
        int w = snprintf(seed, sizeof seed, "\"seed\":%d", i);
        memmove(at + w, at + 8, strlen(at + 8) + 1);
        memcpy(at, seed, (size_t)w);
        len += (size_t)snprintf(text + len, big - len, "%s\n", line);
    }
    write_file("curves.jsonl", text, len, path, sizeof path);
    snprintf(want, sizeof want, "%s:%d: more than %d curves", path, SCV_LCURVE_MAX_CURVES + 1,
             SCV_LCURVE_MAX_CURVES);
    rc = scv_lcurves_load(path, &s, &err);
    CHECK_MSG(rc == SCV_EPARSE && strstr(err.msg, want), "%s", err.msg);
    CHECK(s.n == 0 && s.c == NULL);
    free(text);
    /* no such file */
    snprintf(path, sizeof path, "%s/none.jsonl", tmp);
    rc = scv_lcurves_load(path, &s, &err);
    CHECK_MSG(rc == SCV_ENOTFOUND && strstr(err.msg, path), "%s", err.msg);
    CHECK(s.n == 0 && s.c == NULL);
}

static const scv_test tests[] = {
    {"shipped_corpus", t_shipped_corpus},
    {"valid", t_valid},
    {"bad_inputs", t_bad_inputs},
    {"bounds", t_bounds},
};

int main(int argc, char **argv)
{
    snprintf(tmp, sizeof tmp, "/tmp/scv-curves.XXXXXX");
    if (!mkdtemp(tmp)) {
        perror("mkdtemp");
        return 1;
    }
    int rc = scv_test_main(tests, (int)(sizeof tests / sizeof tests[0]), argc, argv);
    char cmd[300];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", tmp);
    if (system(cmd) != 0) fprintf(stderr, "could not remove %s\n", tmp);
    return rc;
}
