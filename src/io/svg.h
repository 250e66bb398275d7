/*
 * svg.h - cost against time figures (the Scavenger paper's trade-off plots) as
 * standalone SVG files: polylines (e.g. one per batch across K), an optional Pareto front
 * and an optional highlighted point, on log axes.
 */
#ifndef SCV_IO_SVG_H
#define SCV_IO_SVG_H
#include <stddef.h>
#include "scv.h"

typedef struct svg_series {
    char label[48];
    double *t, *c;   /* seconds, dollars */
    int *k;          /* optional: a K to print beside each point */
    size_t n;
} svg_series;

typedef struct svg_figure {
    const char *title;
    const svg_series *series;
    size_t n_series;
    const svg_series *front;  /* NULL: none */
    int has_mark;             /* highlight (mark_t, mark_c) */
    double mark_t, mark_c;
    const char *mark_label;
} svg_figure;

int svg_tradeoff_write(const char *path, const svg_figure *fig, scv_err *err);
#endif
