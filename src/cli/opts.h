/*
 * opts.h - option-value parsing shared by the commands: integer lists and ranges
 * ("1,2,8", "1..64", "64..1024:64"), durations ("90", "45m", "2.5h").
 */
#ifndef SCV_OPTS_H
#define SCV_OPTS_H
#include <stddef.h>

/* Parses a list or range into a malloc'ed array. pow2: a range without a step doubles.
 * Returns the count, or -1 with msg set. Values must lie in [lo, hi]. */
long scv_parse_int_set(const char *s, int pow2, long lo, long hi, int **out, char *msg, size_t cap);
/* Seconds from "S", "Ns", "Nm", "Nh"; -1 when malformed. */
double scv_parse_duration(const char *s);
#endif
