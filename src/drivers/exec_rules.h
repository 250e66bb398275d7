/*
 * exec_rules.h - the exec driver's stopping rules over an external trainer's metrics
 * (src/drivers/exec.c): the segment spec's rules (src/model/stoprule.h) fed with the
 * iteration and evaluation samples as the metrics lines deliver them, and what the driver
 * acts on (the rule that fired: the trainer is stopped; the target reached; the latest
 * accuracy). Internal; declared here for the drivers' parity test (tests/test_stoprule.c).
 */
#ifndef SCV_EXEC_RULES_H
#define SCV_EXEC_RULES_H

#include "scv.h"
#include "../model/stoprule.h"

/* The target rule is the built-in trainer's (src/runtime/train_segment.c seg_target): an
 * accuracy target's window reached on evaluations of a subset of the test set
 * ("set":"subset", SCV_EVAL_SUBSET) is "reached" only once an evaluation on the whole test set
 * confirms it (>= target - SCV_TARGET_CONFIRM_TOL): the trainer is stopped and its final
 * evaluation on the whole set (SCV_FINAL_EVAL=1, "role":"final") decides; a window of
 * evaluations on the whole set, or a loss target (the training loss), needs none. */
typedef struct scv_exec_rules {
    scv_stoprule r;
    const char *fired;          /* the rule that fired first (NULL: none): the trainer is stopped */
    int reached;                /* the target reached (confirmed on the whole test set) */
    int to_confirm;             /* the window reached on subset evaluations: the whole set's to come */
    int confirmed;              /* 1: the whole set confirmed the window; -1: it did not; 0: no such */
    double window_mean;         /* the window's mean when it was reached on a subset */
    double accuracy;            /* the latest evaluation's */
    double full_accuracy;       /* the latest evaluation on the whole test set (NaN: none) */
    int n_subset;               /* periodic evaluations that said "subset" */
} scv_exec_rules;

void scv_exec_rules_init(scv_exec_rules *x, const scv_segment_spec *s, int K);
/* One iteration's sample; the verdict it gave (SCV_STOP_NONE once a rule has fired). */
scv_stop_verdict scv_exec_rules_iter(scv_exec_rules *x, const scv_iter_sample *s);
/* One periodic evaluation's sample, on the whole test set; SCV_STOP_TARGET the first time the
 * target window is reached. */
scv_stop_verdict scv_exec_rules_eval(scv_exec_rules *x, const scv_eval_sample *s);
/* The same on a subset of the test set when `subset`: an accuracy target's window reached on
 * it gives SCV_STOP_TARGET (the trainer is stopped) with to_confirm set, not reached. */
scv_stop_verdict scv_exec_rules_eval_on(scv_exec_rules *x, const scv_eval_sample *s, int subset);
/* An evaluation on the whole test set that is not periodic (the trainer's final one, or a
 * confirmation): it decides a window that waits for it (reached or not). */
void scv_exec_rules_full(scv_exec_rules *x, double accuracy);

#endif
