/*
 * train_rules.c - the built-in trainer's stopping rules: scv_train_params onto the segment's
 * rules (src/model/stoprule.c), and the numbers of an iteration as train_segment holds them
 * onto what the rules read (the statistics it would write as null in the metrics line are
 * NaN here too, so an external trainer's line and the trainer's own numbers give the same
 * verdicts; tests/test_stoprule.c checks it).
 */
#include "train_rules.h"

#include <math.h>

void scv_train_rules_init(scv_stoprule *r, const scv_train_params *p, int K)
{
    scv_stoprule_spec s = {.until_iterations = p->iterations, .target_accuracy = p->target_accuracy,
                           .target_loss = p->target_loss, .window = p->target_window, .history = p->target_history,
                           .n_history = p->n_target_history, .workers = K, .noise_window = p->stop_noise_window,
                           .noise_tol = p->stop_noise_tol, .time_rse = p->stop_time_rse,
                           .time_min_iters = p->stop_time_min};
    scv_stoprule_init(r, &s);
}

scv_stop_verdict scv_train_rules_iter(scv_stoprule *r, const scv_train_params *p, int64_t batch, double local_mean,
                                      double gsq, int exact, double t_iter)
{
    double gl = p->no_grad_stats ? NAN : local_mean, gg = p->no_grad_stats || !exact ? NAN : gsq;
    return scv_stoprule_on_iteration(r, batch, gl, gg, t_iter);
}

scv_stop_verdict scv_train_rules_eval(scv_stoprule *r, const scv_train_params *p, double accuracy,
                                      double period_loss)
{
    return scv_stoprule_on_evaluation(r, p->target_loss > 0 ? period_loss : accuracy);
}
