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

typedef struct scv_exec_rules {
    scv_stoprule r;
    const char *fired;          /* the rule that fired first (NULL: none): the trainer is stopped */
    int reached;                /* the target window reached */
    double accuracy;            /* the latest evaluation's */
} scv_exec_rules;

void scv_exec_rules_init(scv_exec_rules *x, const scv_segment_spec *s, int K);
/* One iteration's sample; the verdict it gave (SCV_STOP_NONE once a rule has fired). */
scv_stop_verdict scv_exec_rules_iter(scv_exec_rules *x, const scv_iter_sample *s);
/* One evaluation's sample; SCV_STOP_TARGET the first time the target window is reached. */
scv_stop_verdict scv_exec_rules_eval(scv_exec_rules *x, const scv_eval_sample *s);

#endif
