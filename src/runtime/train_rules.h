/*
 * train_rules.h - the built-in trainer's stopping rules (src/runtime/train_rules.c): its
 * parameters (scv_train_params) mapped onto the segment's rules (src/model/stoprule.h), and
 * each iteration's and evaluation's numbers fed to them as the trainer holds them. Every rank
 * feeds the same reduced numbers, so every rank gets the same verdicts (the profiling rule
 * is rank 0's: it travels in the next allreduce). No MPI here: the drivers' parity test
 * (tests/test_stoprule.c) calls these with the exec driver's (src/drivers/exec_rules.h).
 */
#ifndef SCV_TRAIN_RULES_H
#define SCV_TRAIN_RULES_H

#include "scv.h"
#include "../model/stoprule.h"

/* The rules of a segment of K workers under p (the window prefilled from p->target_history). */
void scv_train_rules_init(scv_stoprule *r, const scv_train_params *p, int K);

/* One iteration's numbers: the global batch, the mean over workers of |g_k|^2, |g|^2 of the
 * averaged gradient (exact: g is the batch's mean gradient, not a compressed or local one)
 * and the iteration's seconds. SCV_STOP_NOISE, SCV_STOP_TIME or SCV_STOP_NONE. */
scv_stop_verdict scv_train_rules_iter(scv_stoprule *r, const scv_train_params *p, int64_t batch, double local_mean,
                                      double gsq, int exact, double t_iter);

/* One periodic evaluation: the accuracy, or for a loss target the period-mean training loss
 * (NaN: no training since the last one, left out). SCV_STOP_TARGET or SCV_STOP_NONE. */
scv_stop_verdict scv_train_rules_eval(scv_stoprule *r, const scv_train_params *p, double accuracy,
                                      double period_loss);

#endif
