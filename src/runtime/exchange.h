/*
 * exchange.h - the gradient exchange of one training step when communication efficiency is
 * on (src/runtime/exchange.c): Top-k with error feedback over Allgather or AR-Topk (the
 * collective chosen by the alpha-beta model fitted on the measured exchanges), GraVAC's
 * adaptive factor, and SelSync's selective synchronisation. The trainer hands it the
 * gradient and its control scalars in one buffer and gets back the step's gradient and the
 * scalars summed over the ranks, whichever collective ran; it never sees the collectives.
 * The options are scv_exchange_opts (scv.h).
 */
#ifndef SCV_EXCHANGE_H
#define SCV_EXCHANGE_H
#include <stddef.h>
#include <stdint.h>
#include "scv.h"
#include "comm.h"

typedef struct scv_exchange scv_exchange;

/* What one step did. */
typedef struct scv_exchange_step {
    int local;                  /* SelSync: no synchronisation; the gradient is this worker's own */
    int average_params;         /* SelSync, after local steps: step on the worker's own gradient,
                                   then scv_exchange_average() the parameters and momenta */
    int dense;                  /* the gradient is the batch's exact mean gradient */
    double cf;                  /* the compression factor used (1: dense) */
    double gain;                /* the mean compression gain over the workers (NaN: dense) */
    double probe_gain;          /* dense under GraVAC: cf_min's gain, measured not sent (else NaN) */
    double bytes;               /* bytes this rank put into the collective(s) */
    double t_compress;          /* seconds of error feedback, selection and reassembly */
    double t_exchange;          /* seconds in the collective(s) */
    const char *collective;     /* "allreduce", "allgather", "artopk-ring", "artopk-tree", "average"
                                   (SelSync's parameter average), "none" (a local step) */
    double lssr;                /* SelSync's share of local steps so far */
} scv_exchange_step;

int scv_exchange_new(const scv_exchange_opts *o, int K, int rank, size_t np, scv_exchange **out, scv_err *err);
void scv_exchange_free(scv_exchange *x);
/* The control floats the exchange adds after the caller's own (its share of the buffer):
 * SCV_EXCHANGE_CTL_FIXED + K. */
#define SCV_EXCHANGE_CTL_FIXED 4
size_t scv_exchange_ctl(int K);
/* One step. buf = [gradient: np floats | the caller's n_caller scalars | scv_exchange_ctl(K)
 * floats for the exchange]: the gradient is this rank's contribution (b_k / B of its mean
 * gradient, so the sum over ranks is the batch's mean gradient); own_scale = B / b_k turns
 * it into this worker's own mean gradient (a local step); grad_sq = |contribution|^2, the
 * squared norm of the buffer's gradient as given (the caller has it already: SelSync's
 * |g_k|^2 is grad_sq own_scale^2, GraVAC's dense probe divides by it).
 * On return the gradient is the step's (out says which kind) and the caller's scalars are
 * summed over the ranks. t_prev, b_prev: the previous step's seconds and samples (GraVAC). */
int scv_exchange_run(scv_exchange *x, scv_comm *comm, float *buf, size_t n_caller, double own_scale, double grad_sq,
                     double t_prev, double b_prev, scv_exchange_step *out, scv_err *err);
/* Averages the parameters w and the momenta mom (np floats each; mom may be NULL) over the
 * ranks: SelSync's synchronisation, after which every rank holds the same model and the
 * same optimiser state. Returns its seconds in *secs (may be NULL). */
int scv_exchange_average(scv_exchange *x, scv_comm *comm, float *w, float *mom, double *secs, scv_err *err);
/* SelSync: averages w and mom when local steps left the replicas apart (before an
 * evaluation, a checkpoint or the end), so every rank holds one model; a no-op otherwise. */
int scv_exchange_sync(scv_exchange *x, scv_comm *comm, float *w, float *mom, scv_err *err);
/* The fitted alpha (s per message) and beta (s per byte); NaN until known. */
void scv_exchange_alpha_beta(const scv_exchange *x, double *alpha, double *beta);
#endif
