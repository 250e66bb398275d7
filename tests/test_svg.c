/*
 * test_svg.c - the trade-off figures read back as text: ticks on both log axes (1-2-5, at
 * least three, units), K beside the points, the Pareto front drawn over the lines, open
 * markers for runs that did not reach the target, the actual outcome, one line per VM
 * type on the front of a multi-type plan, and a mixed cluster's line across B.
 */
#define _POSIX_C_SOURCE 200809L
#include "scv.h"
#include "model/model.h"
#include "scv_test.h"
#include "io/svg.h"

#include <sys/stat.h>
#include <unistd.h>

static char tmp[256];

/* The file as a malloc'ed string (NULL if unreadable). */
static char *slurp(const char *path)
{
    FILE *f = fopen(path, "r");
    if (!f) return NULL;
    size_t cap = 1 << 16, n = 0;
    char *buf = malloc(cap);
    size_t r;
    while (buf && (r = fread(buf + n, 1, cap - n - 1, f)) > 0) {
        n += r;
        if (n + 1 == cap) {
            char *nb = realloc(buf, cap *= 2);
            if (!nb) {
                free(buf);
                buf = NULL;
            }
            buf = nb;
        }
    }
    fclose(f);
    if (buf) buf[n] = 0;
    return buf;
}

static int count(const char *s, const char *needle)
{
    int n = 0;
    for (const char *p = s; p && (p = strstr(p, needle)); p += strlen(needle)) n++;
    return n;
}

/* The texts of the elements of class cls, e.g. the tick labels: up to cap of them. */
static int texts(const char *svg, const char *cls, char out[][48], int cap)
{
    char key[64];
    snprintf(key, sizeof key, "class='%s'", cls);
    int n = 0;
    for (const char *p = svg; (p = strstr(p, key)) && n < cap; p += strlen(key)) {
        const char *gt = strchr(p, '>'), *lt = gt ? strchr(gt, '<') : NULL;
        if (!gt || !lt) break;
        size_t len = (size_t)(lt - gt - 1) < 47 ? (size_t)(lt - gt - 1) : 47;
        memcpy(out[n], gt + 1, len);
        out[n++][len] = 0;
    }
    return n;
}

/* 1 when v is 1, 2 or 5 times a power of ten. */
static int is_125(double v)
{
    double m = v / pow(10, floor(log10(v) + 1e-9));
    return fabs(m - 1) < 1e-6 || fabs(m - 2) < 1e-6 || fabs(m - 5) < 1e-6;
}

/* Checks the axes: at least 3 ticks each, the unit on every label, increasing values; when
 * only_125, every value is 1, 2 or 5 times a power of ten. */
static void check_axes(const char *svg, const char *tunit, int only_125)
{
    char lab[64][48];
    int nx = texts(svg, "xtick", lab, 64);
    CHECK_MSG(nx >= 3, "%d x ticks", nx);
    double prev = 0;
    for (int i = 0; i < nx; i++) {
        char unit[16] = "";
        double v = 0;
        CHECK_MSG(sscanf(lab[i], "%lf %15s", &v, unit) == 2 && !strcmp(unit, tunit), "x tick '%s'", lab[i]);
        CHECK_MSG(v > prev, "x tick '%s' after %g", lab[i], prev);
        if (only_125) CHECK_MSG(is_125(v), "x tick '%s' is not 1-2-5", lab[i]);
        prev = v;
    }
    int ny = texts(svg, "ytick", lab, 64);
    CHECK_MSG(ny >= 3, "%d y ticks", ny);
    prev = 0;
    for (int i = 0; i < ny; i++) {
        double v = 0;
        CHECK_MSG(lab[i][0] == '$' && sscanf(lab[i] + 1, "%lf", &v) == 1, "y tick '%s'", lab[i]);
        CHECK_MSG(v > prev, "y tick '%s' after %g", lab[i], prev);
        if (only_125) CHECK_MSG(is_125(v), "y tick '%s' is not 1-2-5", lab[i]);
        prev = v;
    }
    CHECK(strstr(svg, "time to target (") != NULL);
    CHECK(strstr(svg, "($, log scale)") != NULL);
}

/* Two lines across K over two decades of time (minutes) and of cost. */
static void t_axes_wide(void)
{
    double t1[] = {6000, 3000, 1500, 800}, c1[] = {0.05, 0.06, 0.09, 0.2};
    double t2[] = {4000, 2000, 1000, 450}, c2[] = {0.04, 0.05, 0.07, 0.15};
    int k[] = {1, 2, 4, 8};
    svg_series s[2] = {{.label = "B=64", .t = t1, .c = c1, .k = k, .n = 4},
                       {.label = "B=256", .t = t2, .c = c2, .k = k, .n = 4}};
    svg_figure fig = {.title = "wide", .series = s, .n_series = 2};
    char path[300];
    snprintf(path, sizeof path, "%s/wide.svg", tmp);
    scv_err err = {0};
    CHECK_EQ_INT(svg_tradeoff_write(path, &fig, &err), SCV_OK);
    char *svg = slurp(path);
    CHECK(svg != NULL);
    if (!svg) return;
    check_axes(svg, "min", 1);
    /* K beside the points: every point of these sparse lines has room */
    CHECK_EQ_INT(count(svg, "class='klabel'"), 8);
    CHECK(strstr(svg, ">K=8<") != NULL && strstr(svg, ">K=1<") != NULL);
    CHECK(strstr(svg, "K=n: n workers") != NULL);
    CHECK(strstr(svg, ">B=64<") != NULL && strstr(svg, ">B=256<") != NULL); /* legend */
    free(svg);
}

/* Values within 10%: 1-2-5 alone gives fewer than 3 ticks, yet each axis gets 3. */
static void t_axes_narrow(void)
{
    double t[] = {100, 104}, c[] = {1.00, 1.08};
    svg_series s = {.label = "B=32", .t = t, .c = c, .n = 2};
    svg_figure fig = {.title = "narrow", .series = &s, .n_series = 1};
    char path[300];
    snprintf(path, sizeof path, "%s/narrow.svg", tmp);
    scv_err err = {0};
    CHECK_EQ_INT(svg_tradeoff_write(path, &fig, &err), SCV_OK);
    char *svg = slurp(path);
    CHECK(svg != NULL);
    if (svg) check_axes(svg, "s", 0);
    free(svg);
    /* hours, over many decades: ticks stay few enough to read */
    double t2[] = {1e4, 1e9}, c2[] = {1e-3, 1e4};
    svg_series s2 = {.label = "B=32", .t = t2, .c = c2, .n = 2};
    fig.series = &s2;
    CHECK_EQ_INT(svg_tradeoff_write(path, &fig, &err), SCV_OK);
    svg = slurp(path);
    char lab[64][48];
    CHECK(svg != NULL);
    if (!svg) return;
    check_axes(svg, "h", 1);
    CHECK(texts(svg, "xtick", lab, 64) <= 9);
    CHECK(texts(svg, "ytick", lab, 64) <= 12);
    free(svg);
    /* nothing drawable is an error naming the file */
    double z[] = {0};
    svg_series s3 = {.label = "x", .t = z, .c = z, .n = 1};
    fig.series = &s3;
    CHECK_EQ_INT(svg_tradeoff_write(path, &fig, &err), SCV_EINVAL);
    CHECK(strstr(err.msg, path) != NULL);
}

/* Runs that did not reach the target: open markers, off the line, with a legend note. */
static void t_hollow(void)
{
    double t[] = {50, 30, 20}, c[] = {0.01, 0.012, 0.02};
    int k[] = {1, 2, 4};
    unsigned char open[] = {0, 1, 0};
    svg_series s = {.label = "B=64", .t = t, .c = c, .k = k, .hollow = open, .n = 3};
    svg_figure fig = {.title = "sweep", .series = &s, .n_series = 1};
    char path[300];
    snprintf(path, sizeof path, "%s/hollow.svg", tmp);
    scv_err err = {0};
    CHECK_EQ_INT(svg_tradeoff_write(path, &fig, &err), SCV_OK);
    char *svg = slurp(path);
    CHECK(svg != NULL);
    if (!svg) return;
    CHECK_EQ_INT(count(svg, "<circle class='hollow'"), 1);
    CHECK(strstr(svg, "did not reach target") != NULL);
    /* the line joins the two solid points only */
    const char *pl = strstr(svg, "<polyline"), *pts = pl ? strstr(pl, "points='") : NULL;
    int commas = 0;
    for (const char *p = pts ? pts + 8 : NULL; p && *p && *p != '\''; p++) commas += *p == ',';
    CHECK_EQ_INT(commas, 2);
    free(svg);
}

/* Points grouped into series (sweep's figure: one line per B across K) with a B repeated in
 * the order ("--batch 8,8" once wrote every B=8 run twice, past the buffer sized by the
 * runs: ASan's heap-buffer-overflow in write_figure) and a K repeated within a group: each
 * point is drawn once, one series per distinct B, whatever the lists hold. */
static void t_group_repeats(void)
{
    svg_point pts[] = {{8, 1, 50, 0.01, 0}, {8, 2, 30, 0.012, 1}, {8, 2, 31, 0.013, 0},
                       {16, 4, 20, 0.02, 0}, {32, 8, 10, 0.04, 0}};
    int order[] = {8, 8, 16, 8, 16};
    svg_grouped g;
    scv_err err = {0};
    CHECK_EQ_INT(svg_group_points(pts, 5, order, 5, "B=", 64, &g, &err), SCV_OK);
    CHECK_EQ_INT((int)g.n_series, 2); /* B=32 is not in the order: left out */
    if (g.n_series == 2) {
        CHECK_EQ_INT((int)g.series[0].n, 3);
        CHECK_EQ_INT((int)g.series[1].n, 1);
        CHECK(!strcmp(g.series[0].label, "B=8") && !strcmp(g.series[1].label, "B=16"));
        CHECK(g.series[0].k[2] == 2 && g.series[0].t[2] == 31 && g.series[1].c[0] == 0.02);
    }
    CHECK_EQ_INT((int)g.n_hollow, 1);
    svg_figure fig = {.title = "sweep", .series = g.series, .n_series = g.n_series};
    char path[300];
    snprintf(path, sizeof path, "%s/group.svg", tmp);
    CHECK_EQ_INT(svg_tradeoff_write(path, &fig, &err), SCV_OK);
    char *svg = slurp(path);
    CHECK(svg != NULL);
    if (svg) CHECK_EQ_INT(count(svg, "class='klabel'"), 4);
    free(svg);
    svg_grouped_free(&g);
    /* more groups than series allowed, and no points at all: bounded, no failure */
    CHECK_EQ_INT(svg_group_points(pts, 5, order, 5, "B=", 1, &g, &err), SCV_OK);
    CHECK_EQ_INT((int)g.n_series, 1);
    svg_grouped_free(&g);
    CHECK_EQ_INT(svg_group_points(NULL, 0, order, 5, "B=", 64, &g, &err), SCV_OK);
    CHECK_EQ_INT((int)g.n_series, 0);
    svg_grouped_free(&g);
}

/* A plan over two VM types whose front runs through both, with an actual outcome. */
static void t_plan_figure(void)
{
    scv_vm_type vms[2] = {{.provider = "aws", .name = "c5.xlarge", .ondemand = 0.17},
                          {.provider = "aws", .name = "c5.2xlarge", .ondemand = 0.34}};
    scv_catalog cat = {.vms = vms, .n = 2};
    enum { NK = 4, NB = 3 };
    const int Ks[NK] = {1, 2, 4, 8}, Bs[NB] = {64, 256, 1024};
    scv_plan_point pts[2 * NK * NB];
    size_t n = 0;
    for (int v = 0; v < 2; v++)
        for (int b = 0; b < NB; b++)
            for (int k = 0; k < NK; k++) {
                scv_plan_point *p = &pts[n++];
                memset(p, 0, sizeof *p);
                p->vm = v, p->workers = Ks[k], p->batch = Bs[b];
                /* the bigger type is faster at small K, the smaller one cheaper */
                p->time_s = 2000.0 / (Ks[k] * (1 + v)) * (1 + 0.2 * b) + 30 * Ks[k];
                p->cost = scv_cost_usd(Ks[k], p->time_s, vms[v].ondemand);
            }
    double tt[2 * NK * NB], cc[2 * NK * NB];
    for (size_t i = 0; i < n; i++) tt[i] = pts[i].time_s, cc[i] = pts[i].cost;
    size_t front[2 * NK * NB];
    size_t nf = scv_pareto_front(tt, cc, n, front);
    int vm_on_front[2] = {0, 0};
    for (size_t i = 0; i < nf; i++) vm_on_front[pts[front[i]].vm] = 1, pts[front[i]].pareto = 1;
    CHECK(vm_on_front[0] && vm_on_front[1]); /* the case under test */
    scv_plan_result res = {.points = pts, .n_points = n, .front = front, .n_front = nf,
                           .chosen = (long)front[nf / 2]};
    char path[300];
    snprintf(path, sizeof path, "%s/plan.svg", tmp);
    scv_err err = {0};
    CHECK_EQ_INT(scv_plan_svg_write(path, &cat, &res, 0, 0, &err), SCV_OK);
    char *svg = slurp(path);
    CHECK(svg != NULL);
    if (!svg) return;
    check_axes(svg, "min", 0); /* under a decade: the denser sequence */
    CHECK_EQ_INT(count(svg, "class='actual'"), 0);
    /* lines of both types, named with their B in the legend */
    char lab[64][48];
    int nl = texts(svg, "legend", lab, 64), types[2] = {0, 0};
    for (int i = 0; i < nl; i++) {
        if (!strncmp(lab[i], "c5.xlarge, B=", 13)) types[0]++;
        if (!strncmp(lab[i], "c5.2xlarge, B=", 14)) types[1]++;
    }
    CHECK_MSG(types[0] >= 1 && types[1] >= 1, "lines: %d of c5.xlarge, %d of c5.2xlarge", types[0], types[1]);
    CHECK(types[0] + types[1] <= 10);
    CHECK(count(svg, "class='klabel'") >= 4);
    /* the front is drawn after (over) every line, thinner than they are */
    const char *fr = strstr(svg, "<polyline class='front'");
    CHECK(fr != NULL);
    const char *last_line = NULL;
    for (const char *p = svg; (p = strstr(p, "<polyline fill='none'")); p++) last_line = p;
    CHECK(last_line != NULL && fr != NULL && last_line < fr);
    CHECK(fr && strstr(fr, "stroke-width='1'") == strstr(fr, "stroke-width"));
    CHECK(strstr(svg, "class='chosen'") != NULL);
    free(svg);
    /* with the actual outcome: one diamond, labelled */
    CHECK_EQ_INT(scv_plan_svg_write(path, &cat, &res, 1800, 0.3, &err), SCV_OK);
    svg = slurp(path);
    CHECK(svg != NULL);
    if (!svg) return;
    CHECK_EQ_INT(count(svg, "<polygon class='actual'"), 1);
    CHECK(strstr(svg, ">actual: 30.0 min, $0.300<") != NULL);
    CHECK(strstr(svg, ">actual (measured)<") != NULL);
    free(svg);
}

/* A plan over several VM types whose front is one type's (issue 24 item 17): every planned
 * type is drawn, a line of each named in the legend and the title counting them all; with
 * more types than lines, the rest are one series of points, so every point is drawn. */
static void t_plan_figure_types(void)
{
    enum { NV = 14, NK = 3 };
    scv_vm_type vms[NV];
    char names[NV][32];
    memset(vms, 0, sizeof vms);
    for (int v = 0; v < NV; v++) {
        snprintf(names[v], sizeof names[v], "t%d.large", v);
        snprintf(vms[v].name, sizeof vms[v].name, "%s", names[v]);
        snprintf(vms[v].provider, sizeof vms[v].provider, "aws");
        vms[v].ondemand = 0.1 * (v + 1);
    }
    scv_catalog cat = {.vms = vms, .n = NV};
    scv_plan_point pts[NV * NK];
    for (int nv = 3; nv <= NV; nv += NV - 3) {
        size_t n = 0;
        for (int v = 0; v < nv; v++)
            for (int k = 1; k <= NK; k++) { /* type 0 is the fastest and the cheapest: the whole front */
                scv_plan_point *p = &pts[n++];
                memset(p, 0, sizeof *p);
                p->vm = v, p->workers = k, p->batch = 128;
                p->time_s = 1000.0 * (1 + v) / k + 10 * k;
                p->cost = scv_cost_usd(k, p->time_s, vms[v].ondemand);
            }
        double tt[NV * NK], cc[NV * NK];
        for (size_t i = 0; i < n; i++) tt[i] = pts[i].time_s, cc[i] = pts[i].cost;
        size_t front[NV * NK], nf = scv_pareto_front(tt, cc, n, front);
        for (size_t i = 0; i < nf; i++) CHECK(pts[front[i]].vm == 0); /* the case under test */
        scv_plan_result res = {.points = pts, .n_points = n, .front = front, .n_front = nf, .chosen = (long)front[0]};
        char path[300];
        snprintf(path, sizeof path, "%s/plan-types-%d.svg", tmp, nv);
        scv_err err = {0};
        CHECK_EQ_INT(scv_plan_svg_write(path, &cat, &res, 0, 0, &err), SCV_OK);
        char *svg = slurp(path);
        CHECK(svg != NULL);
        if (!svg) return;
        char lab[64][48], want[600];
        int nl = texts(svg, "legend", lab, 64), lines = 0, others = 0;
        for (int v = 0; v < nv; v++) {
            snprintf(want, sizeof want, "%s, B=128", names[v]);
            for (int i = 0; i < nl; i++) lines += !strcmp(lab[i], want);
        }
        for (int i = 0; i < nl; i++) others += strstr(lab[i], "other VM types: points") != NULL;
        snprintf(want, sizeof want, "%d VM types", nv);
        CHECK_MSG(strstr(svg, want) != NULL, "title without '%s'", want);
        if (nv == 3) CHECK_MSG(lines == 3 && others == 0, "%d type lines, %d others", lines, others);
        else CHECK_MSG(lines == 10 && others == 1, "%d type lines, %d others", lines, others);
        /* every point is a marker (and a legend row's dot per series shown) */
        CHECK_MSG(count(svg, "r='3' fill=") >= (int)n, "%d markers for %zu points", count(svg, "r='3' fill="), n);
        free(svg);
    }
}

/* A plan with a mixed cluster chosen: the mix is one line across B (no K labels of its
 * own), named in the legend and in the mark. */
static void t_plan_figure_mix(void)
{
    scv_vm_type vms[2] = {{.provider = "aws", .name = "c5.xlarge", .ondemand = 0.17},
                          {.provider = "aws", .name = "c5.2xlarge", .ondemand = 0.34}};
    scv_catalog cat = {.vms = vms, .n = 2};
    scv_plan_point pts[7];
    size_t n = 0;
    for (int k = 1; k <= 4; k++) { /* c5.xlarge at B=64 across K */
        scv_plan_point *p = &pts[n++];
        memset(p, 0, sizeof *p);
        p->vm = 0, p->workers = k, p->batch = 64, p->mix = -1;
        p->time_s = 1500.0 / k + 20 * k;
        p->cost = scv_cost_usd(k, p->time_s, 0.17);
    }
    for (int b = 0; b < 3; b++) { /* the mix c5.xlarge:2+c5.2xlarge:1 at three B */
        scv_plan_point *p = &pts[n++];
        memset(p, 0, sizeof *p);
        p->vm = 0, p->workers = 3, p->batch = 64 << (2 * b), p->mix = 0;
        p->mix_types = (scv_vm_mix){.n = 2, .vm = {0, 1}, .count = {2, 1}};
        p->time_s = 300.0 + 100 * b; /* faster, dearer: the front's fast end */
        p->cost = scv_cost_usd(3, p->time_s, 0.5);
    }
    double tt[7], cc[7];
    for (size_t i = 0; i < n; i++) tt[i] = pts[i].time_s, cc[i] = pts[i].cost;
    size_t front[7], nf = scv_pareto_front(tt, cc, n, front);
    for (size_t i = 0; i < nf; i++) pts[front[i]].pareto = 1;
    scv_plan_result res = {.points = pts, .n_points = n, .front = front, .n_front = nf, .chosen = 4};
    CHECK(pts[4].pareto); /* the case under test: the mix chosen on the front */
    char path[300];
    snprintf(path, sizeof path, "%s/plan-mix.svg", tmp);
    scv_err err = {0};
    CHECK_EQ_INT(scv_plan_svg_write(path, &cat, &res, 0, 0, &err), SCV_OK);
    char *svg = slurp(path);
    CHECK(svg != NULL);
    if (!svg) return;
    char lab[16][48];
    int nl = texts(svg, "legend", lab, 16), mix = 0, homog = 0;
    for (int i = 0; i < nl; i++) {
        mix += !strcmp(lab[i], "c5.xlarge:2+c5.2xlarge:1 K=3");
        homog += !strcmp(lab[i], "c5.xlarge, B=64");
    }
    CHECK_MSG(mix == 1 && homog == 1, "legend: %d mix, %d c5.xlarge lines", mix, homog);
    CHECK(strstr(svg, ">chosen: c5.xlarge:2+c5.2xlarge:1, K=3, B=64<") != NULL);
    CHECK(strstr(svg, "or mixes") != NULL);
    CHECK_EQ_INT(count(svg, "class='klabel'"), 4); /* the four K of c5.xlarge's line only */
    free(svg);
}

static const scv_test tests[] = {
    {"axes_wide", t_axes_wide}, {"axes_narrow", t_axes_narrow}, {"hollow", t_hollow},
    {"group_repeats", t_group_repeats},
    {"plan_figure", t_plan_figure}, {"plan_figure_mix", t_plan_figure_mix}, {"plan_figure_types", t_plan_figure_types},
};

int main(int argc, char **argv)
{
    snprintf(tmp, sizeof tmp, "/tmp/scv-test-svg-%ld", (long)getpid());
    mkdir(tmp, 0755);
    int rc = scv_test_main(tests, (int)(sizeof tests / sizeof tests[0]), argc, argv);
    char cmd[300];
    snprintf(cmd, sizeof cmd, "rm -rf %s", tmp);
    if (getenv("SCV_TEST_KEEP")) printf("# figures kept in %s\n", tmp); /* to look at them */
    else if (rc == 0 && system(cmd) != 0) rc = 1;
    return rc;
}
