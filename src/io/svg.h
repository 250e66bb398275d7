/*
 * svg.h - cost against time figures (the Scavenger paper's trade-off plots) as
 * standalone SVG files: polylines (e.g. one per batch across K) with K beside their points,
 * an optional Pareto front, an optional highlighted choice and an optional actual outcome,
 * on log axes with 1-2-5 ticks ($ on y; s, min or h on x) and a legend.
 *
 * For tests and tools reading the figure back, elements carry classes: 'xtick' and 'ytick'
 * (tick labels), 'klabel' (K beside a point), 'front', 'chosen', 'actual', 'hollow'
 * (open markers) and 'legend'.
 */
#ifndef SCV_IO_SVG_H
#define SCV_IO_SVG_H
#include <stddef.h>
#include "scv.h"

typedef struct svg_series {
    char label[64];
    double *t, *c;   /* seconds, dollars */
    int *k;          /* optional: a K to print beside each point */
    const unsigned char *hollow; /* optional: 1 = an open marker (e.g. a run that did not
                                    reach the target); the line joins only solid points */
    int dash;        /* line style 0..3: solid, dashed, dotted, dash-dot (e.g. one per VM type) */
    int no_line;     /* 1: points only (a scatter of several groups, e.g. the VM types a
                        plan's figure has no line for) */
    size_t n;
} svg_series;

typedef struct svg_figure {
    const char *title;
    const char *x_title, *y_title; /* NULL: "time to target", "cost to target" */
    const svg_series *series;
    size_t n_series;
    const svg_series *front;  /* NULL: none; drawn thin and dashed over the series */
    int has_mark;             /* highlight (mark_t, mark_c), e.g. the chosen configuration */
    double mark_t, mark_c;
    const char *mark_label;
    int has_actual;           /* the measured outcome (actual_t, actual_c), labelled "actual" */
    double actual_t, actual_c;
    const char *hollow_note;  /* legend text of open markers (NULL: "did not reach target") */
} svg_figure;

/* One measured or predicted point, for grouping into series (svg_group_points). */
typedef struct svg_point {
    int group;            /* the series it belongs to (e.g. B) */
    int k;                /* printed beside the point (e.g. K) */
    double t, c;          /* seconds, dollars */
    unsigned char hollow; /* an open marker */
} svg_point;

/* Series made from points: one per distinct value of order[] (a value repeated in order is
 * one series, at its first place), holding the points of that group in the order given;
 * points of no listed group are left out. Every point lands in at most one series, so the
 * storage (sized by the points) holds any input; at most max_series series. */
typedef struct svg_grouped {
    svg_series *series;
    size_t n_series, n_hollow; /* n_hollow: open markers among the points drawn */
    double *vals;
    int *k;
    unsigned char *hollow;
} svg_grouped;
int svg_group_points(const svg_point *pts, size_t n, const int *order, size_t n_order, const char *label_prefix,
                     size_t max_series, svg_grouped *g, scv_err *err);
void svg_grouped_free(svg_grouped *g);

/* Writes the figure atomically; SCV_EINVAL (naming path) when there is no positive point. */
int svg_tradeoff_write(const char *path, const svg_figure *fig, scv_err *err);
#endif
