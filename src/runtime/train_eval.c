/*
 * train_eval.c - a segment's evaluations on the held-out set: accuracy and mean loss on n
 * samples of the test set from a given one on (wrapping past its end), each rank a
 * contiguous share and the sums allreduced, timed and counted in the segment's result, and
 * written as an eval metrics line. Which samples a periodic evaluation takes is
 * train_segment.c's (subset_from).
 */
#include "trainer.h"
#include "../core/util.h"

/* Accuracy and mean loss on n samples of the test set from sample `from` on, wrapping past
 * its end (from 0, n = test->n: all of it); each rank evaluates a contiguous share. */
static int evaluate(run_ctx *c, int64_t from, int64_t n, double *acc, double *loss, scv_err *err)
{
    int64_t lo = n * c->rank / c->K, hi = n * (c->rank + 1) / c->K, T = c->test->n;
    size_t d = (size_t)c->test->c * c->test->h * c->test->w;
    double v[2] = {0, 0};
    int64_t correct = 0;
    int rc = SCV_OK;
    for (int64_t i = lo; i < hi && !rc;) {
        int64_t j = (from + i) % T, m = hi - i < 256 ? hi - i : 256;
        if (m > T - j) m = T - j; /* (a batch does not wrap) */
        rc = scv_net_eval(c->model, c->test->x + (size_t)j * d, c->test->y + j, (int)m, &v[0], &correct, err);
        i += m;
    }
    rc = scv_comm_agree(c->comm, rc, err);
    if (rc) return rc;
    v[1] = (double)correct;
    if ((rc = scv_comm_allreduce_f64(c->comm, v, 2, err))) return rc;
    *loss = v[0] / (double)n;
    *acc = v[1] / (double)n;
    return SCV_OK;
}

/* evaluate(), timed, counted and written (trainer.h). */
int scv_train_eval_on(run_ctx *c, int64_t from, int64_t n, const char *role, double train_loss, double period_samples,
                      double *acc, double *loss, scv_train_result *res, scv_err *err)
{
    double t0 = scv_now();
    int rc = evaluate(c, from, n, acc, loss, err);
    if (rc) return rc;
    double dt = scv_now() - t0;
    int full = n >= c->test->n;
    res->eval_seconds += dt;
    if (full) res->evals_full++;
    else res->evals_subset++;
    if (role)
        scv_tm_eval_line(c, &(scv_tm_eval){.role = role,
                                           .accuracy = *acc,
                                           .loss = *loss,
                                           .train_loss = train_loss,
                                           .train_loss_samples = period_samples,
                                           .full = full,
                                           .n = n,
                                           .from = from,
                                           .seconds = dt});
    return SCV_OK;
}
