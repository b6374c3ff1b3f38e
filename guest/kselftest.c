// SPDX-License-Identifier: GPL-2.0
/*
 * The kernel's own mm selftests (tools/testing/selftests/mm), which
 * scripts/run.sh builds static into /kselftest of the initramfs: make
 * test's quick ones that touch ktask's callers, make gauntlet's long ones
 * (MODE=kselftest), and those that fail on 6.12 as it is
 * (MODE=kselftest-compare), whose ends scripts/run.sh compares between
 * the patched and the unpatched kernel.  Each selftest's output is copied
 * to the console, each line prefixed "ktask-kselftest: NAME: ".
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "lib.h"
#include "huge.h"
#include "suites.h"

#define NR_2M	"/sys/kernel/mm/hugepages/hugepages-2048kB/nr_hugepages"
/* The longest a selftest may run: make test's, and the long ones (cow). */
#define KSELFTEST_TIMEOUT	300
#define KSELFTEST_LONG_TIMEOUT	900

/*
 * What a selftest's KTAP "# Totals:" line says (-1 before it is seen),
 * and its output's lines and their FNV-1a hash, which MODE=
 * kselftest-compare compares between two kernels.
 */
struct ksft_totals {
	int pass, fail, skip, error;
	unsigned int lines;
	unsigned long long hash;
};

/*
 * What a selftest needs: the 2 MiB pages it wants in the pool (0: the
 * pool as it is), and runs before it counts as failed.
 */
struct kselftest_opts {
	const char *name;
	int pool;
	int tries;
};

static const struct kselftest_opts kselftest_table[] = {
	/* Both skip unless exactly one page is free. */
	{ "hugetlb_fault_after_madv", 1, 1 },
	{ "hugetlb_madv_vs_map", 1, 1 },
	/*
	 * Its "events on anon" case races a fork with UFFDIO_COPY and may
	 * see ENOENT (seen once in 2 runs here); anonymous faults never
	 * reach ktask.  The result line says when it took a second run.
	 */
	{ "uffd-unit-tests", 0, 2 },
};

static struct kselftest_opts kselftest_opts(const char *name)
{
	struct kselftest_opts none = { name, 0, 1 };
	size_t i;

	for (i = 0; i < ARRAY_SIZE(kselftest_table); i++)
		if (!strcmp(kselftest_table[i].name, name))
			return kselftest_table[i];
	return none;
}

/* The child: its own process group, output into the pipe, then @path. */
static void kselftest_exec(const char *path, int out)
{
	setpgid(0, 0);
	dup2(out, STDOUT_FILENO);
	dup2(out, STDERR_FILENO);
	execl(path, path, (char *)NULL);
	printf("cannot run %s: %s\n", path, strerror(errno));
	_exit(127);
}

/* Print the complete lines of @buf[0..@len), prefixed; keep the rest. */
static size_t kselftest_lines(const char *name, char *buf, size_t len,
			      bool flush, struct ksft_totals *t)
{
	char *line = buf, *end, *c;
	int xfail, xpass;

	buf[len] = '\0';
	while ((end = strchr(line, '\n')) || (flush && *line)) {
		if (end)
			*end = '\0';
		printf("ktask-kselftest: %s: %s\n", name, line);
		t->lines++;
		for (c = line; *c; c++)
			t->hash = (t->hash ^ (unsigned char)*c) *
				  0x100000001b3ULL;
		sscanf(line, "# Totals: pass:%d fail:%d xfail:%d xpass:%d skip:%d error:%d",
		       &t->pass, &t->fail, &xfail, &xpass, &t->skip, &t->error);
		line = end ? end + 1 : buf + len;
	}
	len -= line - buf;
	memmove(buf, line, len);
	return len;
}

/*
 * Copy the selftest's output from @out to the console, each line prefixed
 * with its @name, and its totals into @t, until every process of its
 * group @pid has closed the pipe.  Past @timeout seconds, or once the
 * selftest itself has exited, the group is killed: a forked helper left
 * behind must not hold the pipe open.  Returns the selftest's wait status.
 */
static int kselftest_drain(const char *name, pid_t pid, int out, int timeout,
			   struct ksft_totals *t)
{
	time_t deadline = time(NULL) + timeout;
	struct pollfd pfd = { .fd = out, .events = POLLIN };
	char buf[4096];
	size_t len = 0;
	int status = -1;
	ssize_t n;

	for (;;) {
		/* waitpid() writes @status only once @pid has exited. */
		if (status == -1)
			waitpid(pid, &status, WNOHANG);
		if (status != -1 || time(NULL) > deadline)
			kill(-pid, SIGKILL);
		/* A process that left the group and keeps the pipe open. */
		if (time(NULL) > deadline + 10)
			break;
		if (poll(&pfd, 1, 1000) <= 0)
			continue;
		n = read(out, buf + len, sizeof(buf) - 1 - len);
		if (n <= 0)
			break;
		len = kselftest_lines(name, buf, len + n,
				      len + n == sizeof(buf) - 1, t);
	}
	kselftest_lines(name, buf, len, true, t);
	close(out);
	/* It may still run with its output closed: until the deadline. */
	while (status == -1 && waitpid(pid, &status, WNOHANG) == 0) {
		if (time(NULL) > deadline)
			kill(-pid, SIGKILL);
		usleep(100 * 1000);
	}
	/* What is left of its group was re-parented to us, PID 1. */
	while (waitpid(-pid, NULL, WNOHANG) > 0)
		;
	return status;
}

/*
 * Run /kselftest/@name for at most @timeout seconds, with the 2 MiB pool
 * it wants; returns its exit status, 128 plus the signal that ended it,
 * or -1 if it could not run.
 */
static int run_kselftest(const char *name, int pool, int timeout,
			 struct ksft_totals *t)
{
	char path[300], saved[32] = "", want[32];
	int status, out[2];
	struct pool p;
	pid_t pid;

	t->pass = t->fail = t->skip = t->error = -1;
	t->lines = 0;
	t->hash = 0xcbf29ce484222325ULL;
	snprintf(path, sizeof(path), "/kselftest/%s", name);
	if (pipe2(out, O_CLOEXEC))
		return -1;
	if (pool) {
		read_line(NR_2M, saved, sizeof(saved));
		snprintf(want, sizeof(want), "%d\n", pool);
		write_str(NR_2M, want);
		pool_read(SZ_2M, &p);
		printf("ktask-kselftest: %s: 2 MiB pool set to %d: %lld pages, %lld free; HugePages_Free %lld\n",
		       name, pool, p.total, p.free,
		       read_key("/proc/meminfo", "HugePages_Free", ':'));
	}
	fflush(stdout);
	pid = fork();
	if (!pid)
		kselftest_exec(path, out[1]);
	close(out[1]);
	if (pid < 0) {
		close(out[0]);
		status = -1;
	} else {
		status = kselftest_drain(name, pid, out[0], timeout, t);
	}
	if (pool) {
		strcat(saved, "\n");
		write_str(NR_2M, saved);
	}
	if (status == -1)
		return -1;
	return WIFEXITED(status) ? WEXITSTATUS(status) :
	       128 + WTERMSIG(status);
}

/* What run_kselftests() wants of each selftest. */
enum kselftest_want {
	KSFT_MUST_PASS,	/* make test's quick ones */
	KSFT_ALL_PASS,		/* MODE=kselftest's long ones */
	KSFT_COMPARE,		/* MODE=kselftest-compare: no verdict */
};

static int not_hidden(const struct dirent *d)
{
	return d->d_name[0] != '.';
}

/*
 * One of the kernel's own mm selftests (tools/testing/selftests/mm)
 * built into /kselftest by scripts/run.sh.  make test's quick ones must
 * exit 0: the guest has what they need (their pool of 2 MiB pages), so
 * a skip (4, KSFT_SKIP) would have tested nothing.  The long ones
 * (KSFT_ALL_PASS) must exit 0 and, if they print KTAP totals, pass a
 * case at least: a test that skipped all it has tested nothing.  None may fail a case or
 * count an error in its KTAP totals, which the result line shows.  Those
 * that fail on 6.12 as it is (KSFT_COMPARE) get no verdict here: a
 * "ktask-compare:" line each, which scripts/run.sh compares between the
 * patched and the unpatched kernel.
 */
static void run_one(const char *name, enum kselftest_want want)
{
	bool all_pass = want == KSFT_ALL_PASS;
	int timeout = all_pass ? KSELFTEST_LONG_TIMEOUT : KSELFTEST_TIMEOUT;
	struct kselftest_opts opts = kselftest_opts(name);
	int rc = -1, ok = 0, try, first = -1;
	struct ksft_totals t;
	char again[64] = "";

	if (want == KSFT_COMPARE) {
		rc = run_kselftest(name, opts.pool, timeout, &t);
		printf("ktask-compare: %s: exit %d, cases passed %d, failed %d, skipped %d, errors %d, output %u lines hashed %016llx\n",
		       name, rc, t.pass, t.fail, t.skip, t.error, t.lines,
		       t.hash);
		return;
	}
	for (try = 1; try <= opts.tries; try++) {
		rc = run_kselftest(name, opts.pool, timeout, &t);
		ok = rc == 0 && (!all_pass || t.pass != 0) && t.fail <= 0 &&
		     t.error <= 0;
		if (ok)
			break;
		first = try == 1 ? rc : first;
	}
	if (ok && try > 1)
		snprintf(again, sizeof(again),
			 ", on a second run (the first exited %d)", first);
	report(ok, name, "kselftest exit %d%s, cases passed %d, failed %d, skipped %d, errors %d (-1: no KTAP totals)%s",
	       rc, rc == 4 ? " (skipped)" : "", t.pass, t.fail, t.skip,
	       t.error, again);
}

/*
 * The selftests in /kselftest, in name order, each in turn.  A suite of
 * tests (not KSFT_COMPARE) plans one result per selftest, or one failure
 * if there is none.
 */
static void run_kselftests(enum kselftest_want want)
{
	struct dirent **list;
	int n = scandir("/kselftest", &list, not_hidden, alphasort), i;

	if (want != KSFT_COMPARE)
		ktap_plan(n > 0 ? n : 1);
	if (n <= 0 && want == KSFT_COMPARE)
		printf("ktask-compare: error: no selftests in /kselftest\n");
	else if (n <= 0)
		report(0, "kselftest", "no selftests in /kselftest: %s",
		       n < 0 ? strerror(errno) : "empty");
	if (n <= 0)
		return;
	for (i = 0; i < n; i++) {
		run_one(list[i]->d_name, want);
		free(list[i]);
	}
	free(list);
}

/* make test's: those that touch ktask's callers and take seconds. */
void run_kselftests_quick(const struct boot *b)
{
	run_kselftests(KSFT_MUST_PASS);
}

/* MODE=kselftest (make gauntlet): the long ones. */
void run_kselftests_long(const struct boot *b)
{
	run_kselftests(KSFT_ALL_PASS);
}

/* MODE=kselftest-compare: results for scripts/run.sh, no verdict. */
void run_kselftests_compare(const struct boot *b)
{
	run_kselftests(KSFT_COMPARE);
}
