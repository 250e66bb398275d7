/*
 * child.h - running this executable's own commands as child processes (the run loop and
 * sweep drive `scavenger train` this way), capturing the JSON summary line.
 */
#ifndef SCV_CHILD_H
#define SCV_CHILD_H
#include <stddef.h>

/* Runs /proc/self/exe with argv (argv[0] is a name), waits, returns its exit status
 * (128 + signal when killed). The last stdout line that starts with '{' goes to json.
 * The parent ignores SIGINT while it waits, so Ctrl-C reaches the child, which stops
 * cleanly; *interrupted is set when SIGINT arrived meanwhile. */
int scv_run_self(char *const *argv, char *json, size_t cap, int *interrupted);
#endif
