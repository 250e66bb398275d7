/*
 * runtime.h - the internal declarations of the runtime layer (src/runtime/): the
 * communication options' defaults. Not part of the public contract (include/scv.h):
 * libscv.so does not export them; the library's other layers, the CLI, the service and the
 * in-tree tests include this header where they use them.
 */
#ifndef SCV_RUNTIME_INTERNAL_H
#define SCV_RUNTIME_INTERNAL_H

#include "scv.h"

scv_exchange_opts scv_exchange_opts_default(void);
int scv_exchange_opts_on(const scv_exchange_opts *o);

#endif /* SCV_RUNTIME_INTERNAL_H */
