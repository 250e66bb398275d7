/*
 * child.c - see child.h.
 */
#define _POSIX_C_SOURCE 200809L
#include "child.h"

#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

static volatile sig_atomic_t g_int;
static void on_int(int sig) { (void)sig; g_int = 1; }

int scv_run_self(char *const *argv, char *json, size_t cap, int *interrupted)
{
    int fd[2];
    if (pipe(fd)) return -1;
    fflush(NULL);
    pid_t pid = fork();
    if (pid < 0) return -1;
    if (pid == 0) {
        dup2(fd[1], 1);
        close(fd[0]);
        close(fd[1]);
        execv("/proc/self/exe", argv);
        _exit(127);
    }
    close(fd[1]);
    struct sigaction sa, old;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_int;
    g_int = 0;
    sigaction(SIGINT, &sa, &old);
    FILE *f = fdopen(fd[0], "r");
    char buf[8192];
    json[0] = 0;
    while (f) {
        if (!fgets(buf, sizeof buf, f)) {
            if (ferror(f) && errno == EINTR) {
                clearerr(f);
                continue;
            }
            break;
        }
        if (buf[0] == '{') snprintf(json, cap, "%s", buf);
    }
    if (f) fclose(f);
    int st = 0;
    while (waitpid(pid, &st, 0) < 0 && errno == EINTR) {}
    sigaction(SIGINT, &old, NULL);
    if (interrupted) *interrupted = g_int;
    return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
}
