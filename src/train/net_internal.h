/*
 * net_internal.h - introspection of a model's layers, for tests and diagnostics.
 */
#ifndef SCV_TRAIN_NET_INTERNAL_H
#define SCV_TRAIN_NET_INTERNAL_H
#include <stddef.h>
#include "scv.h"
#include "train.h"

int scv_net_layer_count(const scv_net *m);
/* Kind name ("dense", "conv", "relu", "maxpool", "gap", "save", "add") and the slice of the
 * parameter buffer the layer owns (n = 0 for parameter-free layers). */
const char *scv_net_layer_info(const scv_net *m, int i, size_t *offset, size_t *n);
#endif
