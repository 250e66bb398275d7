/*
 * plan_svg.h - the cost-time trade-off figure of a plan, as a standalone SVG file.
 */
#ifndef SCV_PLAN_SVG_H
#define SCV_PLAN_SVG_H
#include "scv.h"
int plan_svg_write(const char *path, const scv_catalog *cat, const scv_plan_result *res,
                   scv_err *err);
#endif
