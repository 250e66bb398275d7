/*
 * linfit.c - small non-negative weighted least squares (see linfit.h).
 */
#include "linfit.h"

#include <math.h>
#include <string.h>

/* Solves the k x k system a x = b by Gaussian elimination with partial pivoting. */
static int solve(double a[SCV_LINFIT_MAX][SCV_LINFIT_MAX], double *b, int k, double *x)
{
    for (int col = 0; col < k; col++) {
        int piv = col;
        for (int r = col + 1; r < k; r++)
            if (fabs(a[r][col]) > fabs(a[piv][col])) piv = r;
        if (fabs(a[piv][col]) < 1e-300) return -1;
        if (piv != col) {
            for (int j = 0; j < k; j++) {
                double t = a[col][j];
                a[col][j] = a[piv][j];
                a[piv][j] = t;
            }
            double t = b[col];
            b[col] = b[piv];
            b[piv] = t;
        }
        for (int r = col + 1; r < k; r++) {
            double f = a[r][col] / a[col][col];
            for (int j = col; j < k; j++) a[r][j] -= f * a[col][j];
            b[r] -= f * b[col];
        }
    }
    for (int r = k - 1; r >= 0; r--) {
        double s = b[r];
        for (int j = r + 1; j < k; j++) s -= a[r][j] * x[j];
        x[r] = s / a[r][r];
    }
    return 0;
}

int scv_nnls(const double *x, const double *y, const double *w, size_t n, int p, unsigned fixed,
             double *c)
{
    double best[SCV_LINFIT_MAX], best_sse = INFINITY;
    unsigned free_all = ((1u << p) - 1) & ~fixed;
    for (unsigned set = free_all;; set = (set - 1) & free_all) {
        int idx[SCV_LINFIT_MAX], k = 0;
        for (int j = 0; j < p; j++)
            if (set & (1u << j)) idx[k++] = j;
        double cand[SCV_LINFIT_MAX];
        for (int j = 0; j < p; j++) cand[j] = (fixed & (1u << j)) ? c[j] : 0.0;
        int ok = 1;
        if (k > 0) {
            /* normal equations on the free columns, with the fixed part moved to y */
            double a[SCV_LINFIT_MAX][SCV_LINFIT_MAX] = {{0}}, b[SCV_LINFIT_MAX] = {0}, sol[SCV_LINFIT_MAX];
            for (size_t i = 0; i < n; i++) {
                const double *xi = x + i * (size_t)p;
                double r = y[i];
                for (int j = 0; j < p; j++)
                    if (!(set & (1u << j))) r -= xi[j] * cand[j];
                for (int u = 0; u < k; u++) {
                    b[u] += w[i] * xi[idx[u]] * r;
                    for (int v = 0; v < k; v++) a[u][v] += w[i] * xi[idx[u]] * xi[idx[v]];
                }
            }
            /* scale-invariant singularity test: relative to the diagonal */
            double dmax = 0;
            for (int u = 0; u < k; u++) dmax = fmax(dmax, fabs(a[u][u]));
            if (dmax == 0 || solve(a, b, k, sol) != 0) ok = 0;
            for (int u = 0; ok && u < k; u++) {
                if (!isfinite(sol[u]) || sol[u] < 0) ok = 0;
                else cand[idx[u]] = sol[u];
            }
        }
        if (ok) {
            double sse = 0;
            for (size_t i = 0; i < n; i++) {
                double f = 0;
                for (int j = 0; j < p; j++) f += x[i * (size_t)p + j] * cand[j];
                sse += w[i] * (y[i] - f) * (y[i] - f);
            }
            if (sse < best_sse * (1 - 1e-12)) {
                best_sse = sse;
                memcpy(best, cand, sizeof(double) * (size_t)p);
            }
        }
        if (set == 0) break;
    }
    if (!isfinite(best_sse)) {
        for (int j = 0; j < p; j++)
            if (!(fixed & (1u << j))) c[j] = 0;
        return -1;
    }
    memcpy(c, best, sizeof(double) * (size_t)p);
    return 0;
}
