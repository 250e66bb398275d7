/*
 * fuzz_hostfile.c - the hostfile check (src/runtime/hostfile.c, scv_hostfile_check): the
 * input as a hostfile, read under a small policy (lines of 256 characters, 64 hosts, 1000
 * slots) without resolving (resolve_timeout_ms 0: the resolver's own bound is tested in
 * test_hostfile). Every refusal names the file; a line or host over the policy is refused,
 * never read past.
 */
#include "fuzz_util.h"
#include "scv.h"
#include "runtime/launch.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    const char *path = fuzz_write("hosts", data, size);
    scv_hostfile_policy pol = scv_hostfile_policy_default();
    pol.max_line = 256, pol.max_hosts = 64, pol.max_slots = 1000, pol.resolve_timeout_ms = 0;
    scv_err err = {0};
    int rc = scv_hostfile_check(path, &pol, &err);
    if (rc != SCV_OK && rc != SCV_EINVAL) abort();
    if (rc && !strstr(err.msg, path)) abort();
    return 0;
}
