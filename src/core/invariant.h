/*
 * invariant.h - SCV_ASSERT(cond): an invariant of the code (not a check of input, which
 * gets an error naming the file, line or field). When cond is false the program prints
 * "FILE:LINE: FUNCTION: invariant failed: COND" on stderr and aborts: a broken invariant
 * is a bug to be seen where it happens, not a state to carry on from. Always on (NDEBUG
 * does not remove it), so cond must be cheap and free of side effects the code relies on.
 */
#ifndef SCV_CORE_INVARIANT_H
#define SCV_CORE_INVARIANT_H

_Noreturn void scv_assert_fail(const char *file, int line, const char *func, const char *cond);

#define SCV_ASSERT(cond) ((cond) ? (void)0 : scv_assert_fail(__FILE__, __LINE__, __func__, #cond))
#endif
