/*
 * scv_test_proc.h - running the scavenger executable from a test (the end-to-end tests):
 * run() a shell command line and capture its exit code and combined output, spawn_group()
 * a command in its own process group (so a signal can reach the whole job, as a
 * terminal's Ctrl-C does). Needs _POSIX_C_SOURCE 200809L before the first include.
 */
#ifndef SCV_TEST_PROC_H
#define SCV_TEST_PROC_H
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

/* Runs a shell command line (printf-style); returns the exit code (128 + N when signal N
 * ended it, -1 when it could not start) and the combined output in out (if not NULL). */
static int run(char *out, size_t cap, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static int run(char *out, size_t cap, const char *fmt, ...)
{
    char cmd[4096], line[1024];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(cmd, sizeof cmd, fmt, ap);
    va_end(ap);
    char full[4200];
    snprintf(full, sizeof full, "%s 2>&1", cmd);
    FILE *p = popen(full, "r");
    if (!p) return -1;
    size_t len = 0;
    if (out) out[0] = 0;
    while (fgets(line, sizeof line, p)) {
        size_t l = strlen(line);
        if (out && len + l < cap) {
            memcpy(out + len, line, l + 1);
            len += l;
        }
    }
    int st = pclose(p);
    return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
}

/* `sh -c cmd` (which execs the command) in its own process group; returns its pid. */
static inline pid_t spawn_group(const char *cmd)
{
    fflush(NULL);
    pid_t pid = fork();
    if (pid == 0) {
        setpgid(0, 0);
        execl("/bin/sh", "sh", "-c", cmd, (char *)NULL);
        _exit(127);
    }
    return pid;
}
#endif
