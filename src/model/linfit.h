/*
 * linfit.h - weighted least squares with up to 4 non-negative coefficients, solved by
 * enumerating the subsets of free coefficients (2^p small systems): exact NNLS for the
 * handful of parameters the performance and cost models have. Pure libc/libm.
 */
#ifndef SCV_LINFIT_H
#define SCV_LINFIT_H
#include <stddef.h>

#define SCV_LINFIT_MAX 4
/* Minimises sum_i w_i (y_i - sum_j x_ij c_j)^2 subject to c_j >= 0, where x is n rows of
 * p features (row-major). Coefficients flagged in `fixed` (bit j) stay at c[j] as given.
 * Returns 0, or -1 when no subset gives a solvable system (then c is all fixed/zero). */
int scv_nnls(const double *x, const double *y, const double *w, size_t n, int p, unsigned fixed,
             double *c);
#endif
