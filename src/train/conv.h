/*
 * conv.h - 2-D convolution (stride 1, square kernel, symmetric zero padding) on oneDNN 2.x.
 * Tensors are plain NCHW float; weights OIHW; bias O. Primitives are built per batch
 * size and cached (training, inference, backward data, backward weights).
 */
#ifndef SCV_CONV_H
#define SCV_CONV_H
#include "scv.h"

typedef struct scv_conv scv_conv;
int scv_conv_new(int ic, int oc, int k, int pad, int ih, int iw, scv_conv **out, scv_err *err);
void scv_conv_free(scv_conv *c);
/* dst[n][oc][oh][ow] = conv(src, w) + b */
int scv_conv_forward(scv_conv *c, const float *src, const float *w, const float *b, float *dst,
                     int n, int training, scv_err *err);
/* dw, db are overwritten with the gradients; dsrc (may be NULL) with d loss / d src. */
int scv_conv_backward(scv_conv *c, const float *src, const float *w, const float *ddst,
                      float *dsrc, float *dw, float *db, int n, scv_err *err);
/* Sets the number of compute threads of oneDNN (OpenMP) and OpenBLAS for this process. */
void scv_compute_threads(int threads);
#endif
