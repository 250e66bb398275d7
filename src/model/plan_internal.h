/*
 * plan_internal.h - what the planner's two files share: plan.c fills the points of (VM type,
 * K, B) and (mix, B), choose.c makes the front and the choice on them.
 */
#ifndef SCV_PLAN_INTERNAL_H
#define SCV_PLAN_INTERNAL_H
#include "scv.h"
#include "model.h"

#include <stddef.h>

/* The front of res's points (res->front, each point's pareto), the dense points' front and
 * choice, and the objective's choice under the bounds (res->chosen, res->why); an error when
 * no point meets the bounds (SCV_EINFEASIBLE, saying by how much) or out of memory. */
int plan_choose(const scv_plan_request *req, const scv_plan_policy *pol, scv_plan_result *res, scv_err *err);
/* Appends printf-style text to the NUL-terminated buf of cap bytes (cut to fit). */
void plan_add(char *buf, size_t cap, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
/* "1.0", "1.25": a factor as people read it. */
void plan_fmt_factor(double f, char *b, size_t cap);
#endif
