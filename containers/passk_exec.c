/* passk-exec: how the forkserver starts a compiled program, a compiler or a runtime (its "exec" modes)
 * without forking its own warm interpreter. The forkserver spawns this small program (posix_spawn: no copy
 * of its address space, the descriptors already in place); it becomes the candidate as the forkserver's
 * fork did (a new session, the OOM killer's first choice, the run's limits, no groups, the run's user,
 * its directory, umask 077, SIGPIPE and SIGXFSZ at their defaults, every other descriptor closed) and
 * then executes the program.
 *
 *   passk-exec UID DIR CPU_S FSIZE NOFILE STACK NPROC KEEP -- PROGRAM [ARG...]
 *
 * STACK and NPROC are 0 when not set; KEEP is how many descriptors the program gets (0..KEEP-1). Exit 127
 * with one line on stderr when the program cannot run; 126 when this cannot make it the candidate. */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

/* close_range(2) is Linux 5.9's; an older libc's headers (Debian bullseye's glibc 2.31) do not name it. Its
 * number is 436 in the unified table every architecture shares; a kernel without it answers ENOSYS and the
 * loop below closes the descriptors one by one. */
#ifndef SYS_close_range
#define SYS_close_range 436
#endif

static void fail(const char *what) {
    char line[256];
    int n = snprintf(line, sizeof line, "passk: cannot start the program (%s: %s)\n", what, strerror(errno));
    if (n > 0) (void)!write(2, line, (size_t)n < sizeof line ? (size_t)n : sizeof line - 1);
    _exit(126);
}

static unsigned long long number(const char *text, const char *what) {
    char *end;
    errno = 0;
    unsigned long long v = strtoull(text, &end, 10);
    if (errno || *text == '\0' || *end != '\0') { errno = EINVAL; fail(what); }
    return v;
}

static void limit(int resource, rlim_t soft, rlim_t hard, const char *what) {
    struct rlimit r = {soft, hard};
    if (setrlimit(resource, &r) != 0) fail(what);
}

int main(int argc, char **argv) {
    if (argc < 11 || strcmp(argv[9], "--") != 0) { errno = EINVAL; fail("arguments"); }
    uid_t uid = (uid_t)number(argv[1], "uid");
    const char *dir = argv[2];
    rlim_t cpu = (rlim_t)number(argv[3], "cpu");
    rlim_t fsize = (rlim_t)number(argv[4], "fsize");
    rlim_t nofile = (rlim_t)number(argv[5], "nofile");
    rlim_t stack = (rlim_t)number(argv[6], "stack");
    rlim_t nproc = (rlim_t)number(argv[7], "nproc");
    int keep = (int)number(argv[8], "keep");
    if (uid == 0) { errno = EPERM; fail("uid"); }

    /* every descriptor but the program's own: the forkserver's socket, its /dev/null, what it received */
    if (syscall(SYS_close_range, (unsigned)keep, ~0U, 0) != 0)
        for (int fd = keep; fd < 4096; fd++) close(fd);
    if (setsid() < 0 && errno != EPERM) fail("setsid");
    int oom = open("/proc/self/oom_score_adj", O_WRONLY | O_CLOEXEC);
    if (oom < 0 || write(oom, "1000", 4) != 4) fail("oom_score_adj");
    close(oom);
    limit(RLIMIT_CPU, cpu, cpu + 1, "RLIMIT_CPU");
    limit(RLIMIT_FSIZE, fsize, fsize, "RLIMIT_FSIZE");
    limit(RLIMIT_NOFILE, nofile, nofile, "RLIMIT_NOFILE");
    limit(RLIMIT_CORE, 0, 0, "RLIMIT_CORE");
    if (stack) {   /* a judge's stack, within the hard limit */
        struct rlimit r;
        if (getrlimit(RLIMIT_STACK, &r) != 0) fail("RLIMIT_STACK");
        limit(RLIMIT_STACK, (r.rlim_max != RLIM_INFINITY && stack > r.rlim_max) ? r.rlim_max : stack, r.rlim_max,
              "RLIMIT_STACK");
    }
    if (nproc) limit(RLIMIT_NPROC, nproc, nproc, "RLIMIT_NPROC");   /* where uids are private (gVisor) */
    if (setgroups(0, NULL) != 0) fail("setgroups");
    if (setgid((gid_t)uid) != 0) fail("setgid");
    if (setuid(uid) != 0) fail("setuid");
    if (getuid() != uid || geteuid() != uid || setuid(0) == 0) { errno = EPERM; fail("dropping root"); }
    if (chdir(dir) != 0) fail("chdir");
    umask(077);
    signal(SIGPIPE, SIG_DFL);
    signal(SIGXFSZ, SIG_DFL);
    sigset_t none;
    sigemptyset(&none);
    sigprocmask(SIG_SETMASK, &none, NULL);
    execvp(argv[10], argv + 10);
    char line[512];
    int n = snprintf(line, sizeof line, "passk: cannot run %.200s: %s\n", argv[10], strerror(errno));
    if (n > 0) (void)!write(2, line, (size_t)n < sizeof line ? (size_t)n : sizeof line - 1);
    _exit(127);
}
