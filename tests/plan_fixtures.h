/*
 * plan_fixtures.h - what the planner's test files (test_plan*.c) share: the shipped catalog,
 * and a point of a plan by its VM type, K and B.
 */
#ifndef SCV_TEST_PLAN_FIXTURES_H
#define SCV_TEST_PLAN_FIXTURES_H
#include "scv.h"
#include "scv_test.h"

static inline scv_catalog *load_cat(void)
{
    scv_catalog *c = NULL;
    scv_err err = {0};
    CHECK_MSG(scv_catalog_load("data/vm-catalog.csv", &c, &err) == SCV_OK, "%s", err.msg);
    return c;
}

static inline const scv_plan_point *find(const scv_plan_result *r, int vm, int K, int B)
{
    for (size_t i = 0; r && i < r->n_points; i++)
        if (r->points[i].vm == vm && r->points[i].workers == K && r->points[i].batch == B) return &r->points[i];
    return NULL;
}

#endif
