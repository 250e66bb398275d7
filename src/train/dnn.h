/*
 * dnn.h - the numeric kernels the models run on, all from oneDNN 2.x: row-major SGEMM for
 * dense layers, and 2-D convolution (stride 1, square kernel, symmetric zero padding) with
 * plain NCHW float tensors, OIHW weights and O bias. Convolution primitives are built per
 * batch size and cached (training, inference, backward data, backward weights).
 */
#ifndef SCV_DNN_H
#define SCV_DNN_H
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
/* C[M x N] = alpha * op(A) * op(B) + beta * C, row-major; trans 'N' or 'T'. */
void scv_sgemm(char transa, char transb, int M, int N, int K, float alpha, const float *A,
               int lda, const float *B, int ldb, float beta, float *C, int ldc);
/* Sets the number of compute threads (OpenMP, used by oneDNN) for this process. */
void scv_compute_threads(int threads);
#endif
