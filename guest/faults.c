// SPDX-License-Identifier: GPL-2.0
/*
 * The tests of make test that need its debug kernel (configs/debug.config):
 * allocations that fail under ktask, and leaks.
 *
 * Fault injection is aimed at ktask's own allocations: the failslab and
 * fail_page_alloc stack trace filters only let an allocation fail with
 * ktask's code on the stack, so the benchmark's own allocations and those
 * of the system calls around it never do.  A job whose allocations fail
 * must still complete, with the same result, at fewer threads: the cpu
 * job's sum covers every unit once, whatever the split.
 *
 *	fault_nth	fails the first, second, ... allocation of a job in
 *			turn (/proc/thread-self/fail-nth), until a job makes
 *			fewer allocations than the one asked to fail; the
 *			count is the caller's only (a new task's fail-nth is
 *			0) and includes what the debug options allocate
 *			along (kmemleak's and KASAN's records), so it varies
 *			a little from boot to boot
 *	fault_random	fails a fifth of them at random, for many jobs, in
 *			the caller and in its helpers (make-it-fail is
 *			inherited), and wants the attributes' "times" to
 *			have gone down: failures were injected
 *	fault_random_start
 *			the same, each job with a start function (the
 *			self-benchmark's "start" caller), which its caller
 *			calls once it started every helper it could
 *	kmemleak	no unreferenced object after every other test
 *
 * On a kernel without these options each test prints an "info" line and
 * counts as nothing; make test wants all four.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "lib.h"
#include "suites.h"

#define FAILSLAB	"/sys/kernel/debug/failslab"
#define FAIL_PAGE	"/sys/kernel/debug/fail_page_alloc"
#define FAIL_NTH	"/proc/thread-self/fail-nth"
#define MAKE_IT_FAIL	"/proc/thread-self/make-it-fail"
#define FAULT_UNITS	"8192"	/* a short cpu job, long enough for helpers */
#define MAX_NTH		1000	/* far more than a job allocates */
#define RANDOM_JOBS	100
#define RANDOM_PCT	"20"
#define RANDOM_TIMES	1000000	/* "times" counts down from there */

/*
 * ktask's code: in /proc/kallsyms, the run of symbols around ktask_run that
 * all name ktask (kernel/ktask.c's functions and its trace events), up to
 * the next symbol.  0 if found.
 */
static int ktask_text(unsigned long long *start, unsigned long long *end)
{
	unsigned long long addr, first = 0;
	char line[512], name[256], type;
	int in_run = 0, has_run = 0, found = 0;
	FILE *f = fopen("/proc/kallsyms", "r");

	if (!f)
		return -errno;
	while (!found && fgets(line, sizeof(line), f)) {
		if (sscanf(line, "%llx %c %255s", &addr, &type, name) != 3)
			continue;
		if (strstr(name, "ktask")) {
			if (!in_run)
				first = addr;
			in_run = 1;
			has_run |= !strcmp(name, "ktask_run");
		} else if (in_run) {
			found = has_run && first;
			*start = first;
			*end = addr;
			in_run = has_run = 0;
		}
	}
	fclose(f);
	return found ? 0 : -ENOENT;
}

static int set_attr(const char *dir, const char *attr, const char *value)
{
	char path[128], line[64];

	snprintf(path, sizeof(path), "%s/%s", dir, attr);
	snprintf(line, sizeof(line), "%s\n", value);
	return write_str(path, line);
}

/*
 * Let @dir's allocations fail only with ktask's code on the stack, not at
 * random (probability 0) unless a test asks, and GFP_KERNEL ones and
 * order 0 pages too: by default fault injection spares both.
 *
 * Not inside alloc_vmap_area() (when it is in the kernel), where a helper's
 * stack is vmalloc'ed: there vmalloc warns (WARN_ON_ONCE in its va_clip())
 * when its own GFP_NOWAIT bookkeeping allocation fails, which is vmalloc's
 * business, not ktask's.  The stack's pages may still fail.
 */
static int aim_at_ktask(const char *dir, unsigned long long start,
			unsigned long long end)
{
	unsigned long long rs = 0, re = 0;
	char s[32], e[32], r0[32], r1[32];
	int ret;

	snprintf(s, sizeof(s), "0x%llx", start);
	snprintf(e, sizeof(e), "0x%llx", end);
	ksym_range("alloc_vmap_area", &rs, &re);
	snprintf(r0, sizeof(r0), "0x%llx", rs);
	snprintf(r1, sizeof(r1), "0x%llx", re);
	ret = set_attr(dir, "probability", "0") ?:
	      set_attr(dir, "interval", "1") ?:
	      set_attr(dir, "times", "-1") ?:
	      set_attr(dir, "space", "0") ?:
	      set_attr(dir, "verbose", "0") ?:
	      set_attr(dir, "task-filter", "Y") ?:
	      set_attr(dir, "ignore-gfp-wait", "N") ?:
	      set_attr(dir, "stacktrace-depth", "32") ?:
	      set_attr(dir, "require-start", s) ?:
	      set_attr(dir, "require-end", e) ?:
	      set_attr(dir, "reject-start", r0) ?:
	      set_attr(dir, "reject-end", r1);
	if (!ret && !strcmp(dir, FAIL_PAGE))
		ret = set_attr(dir, "min-order", "0") ?:
		      set_attr(dir, "ignore-gfp-highmem", "N");
	return ret;
}

static int set_probability(const char *pct)
{
	return set_attr(FAILSLAB, "probability", pct) ?:
	       set_attr(FAIL_PAGE, "probability", pct);
}

/* The failures both attributes have left to inject ("times"). */
static long long times_left(void)
{
	char a[32] = "", b[32] = "";

	read_line(FAILSLAB "/times", a, sizeof(a));
	read_line(FAIL_PAGE "/times", b, sizeof(b));
	return atoll(a) + atoll(b);
}

/*
 * One cpu job with its @nth allocation under ktask failing; *@left is
 * what was left of the count, non-zero if the job made fewer.
 */
static int bench_nth(int threads, int nth, struct bench_result *res,
		     int *left)
{
	char buf[32];
	int ret;

	snprintf(buf, sizeof(buf), "%d\n", nth);
	ret = write_str(FAIL_NTH, buf);
	if (ret)
		return ret;
	ret = bench_run("cpu", threads, res);
	*left = read_line(FAIL_NTH, buf, sizeof(buf)) ? -1 : atoi(buf);
	write_str(FAIL_NTH, "0\n");
	return ret;
}

/* What a run of faulty jobs saw. */
struct fault_tally {
	int	jobs;
	int	wrong;		/* an error, or the wrong sum */
	int	fewer;		/* right, at fewer threads than without faults */
	int	min_used;
	int	first_errno;
};

static void tally(struct fault_tally *t, int ret, const struct bench_result *res,
		  unsigned long long want_sum, int want_used)
{
	t->jobs++;
	/* A start function ran, and no thread that took a chunk came after. */
	if (ret || res->sum != want_sum ||
	    (strstr(res->line, "caller=start") &&
	     (res->start_threads < 1 || res->used > res->start_threads))) {
		if (!t->wrong++)
			t->first_errno = -ret;
		return;
	}
	t->fewer += res->used < want_used;
	if (!t->min_used || res->used < t->min_used)
		t->min_used = res->used;
}

static void test_fault_nth(int threads, unsigned long long want_sum,
			   int want_used)
{
	struct fault_tally t = { 0 };
	struct bench_result res;
	int nth, left = 0, ret;

	for (nth = 1; nth <= MAX_NTH; nth++) {
		ret = bench_nth(threads, nth, &res, &left);
		if (left)
			break;
		tally(&t, ret, &res, want_sum, want_used);
	}
	report(left > 0 && t.jobs && !t.wrong && t.fewer, "fault_nth",
	       "failed allocation 1 to %d under ktask in turn: %d jobs wrong (first errno %d), %d right at fewer threads (down to %d, %d without faults)",
	       t.jobs, t.wrong, t.first_errno, t.fewer, t.min_used, want_used);
}

static void test_fault_random(int threads, unsigned long long want_sum,
			      int want_used, int start, const char *name)
{
	struct fault_tally t = { 0 };
	struct bench_result res;
	long long before, injected;
	char times[32];
	int i, ret;

	snprintf(times, sizeof(times), "%d", RANDOM_TIMES);
	if (set_attr(FAILSLAB, "times", times) ||
	    set_attr(FAIL_PAGE, "times", times) ||
	    write_str(MAKE_IT_FAIL, "1\n") || set_probability(RANDOM_PCT)) {
		report(0, name, "cannot set up random faults: %s",
		       strerror(errno));
		set_probability("0");
		write_str(MAKE_IT_FAIL, "0\n");
		return;
	}
	before = times_left();
	for (i = 0; i < RANDOM_JOBS; i++) {
		ret = bench_run_as("cpu", threads, start ? "start" : "user",
				   &res);
		tally(&t, ret, &res, want_sum, want_used);
	}
	set_probability("0");
	write_str(MAKE_IT_FAIL, "0\n");
	injected = before - times_left();
	set_attr(FAILSLAB, "times", "-1");
	set_attr(FAIL_PAGE, "times", "-1");
	report(!t.wrong && t.fewer && injected > 0, name,
	       "%s%% of allocations under ktask failing: %lld failures injected, %d jobs, %d wrong (first errno %d), %d right at fewer threads (down to %d, %d without faults)",
	       RANDOM_PCT, injected, t.jobs, t.wrong, t.first_errno, t.fewer,
	       t.min_used, want_used);
}

/* The tests of this file, which share their setup. */
static const char *const fault_tests[] = {
	"fault_nth", "fault_random", "fault_random_start", NULL,
};

void run_fault_tests(const struct boot *b)
{
	int vcpus = b->vcpus;
	unsigned long long start = 0, end = 0, hs, he, want_sum;
	struct bench_result serial = { 0 }, res = { 0 };
	char units[32] = "";
	int ret, i;

	ktap_plan(3);
	if (access(FAILSLAB, W_OK) || access(FAIL_PAGE, W_OK)) {
		for (i = 0; fault_tests[i]; i++)
			report_skip(fault_tests[i],
				    "fault injection is not in this kernel");
		return;
	}
	ret = ktask_text(&start, &end);
	/* A helper's stack has ktask_helper_run(), not ktask_run(). */
	if (!ret && !ksym_range("ktask_helper_run", &hs, &he) &&
	    (hs < start || hs >= end))
		ret = -ERANGE;
	if (ret) {
		report_setup_failed(fault_tests,
				    "ktask's code in /proc/kallsyms: %s",
				    strerror(-ret));
		return;
	}
	ret = aim_at_ktask(FAILSLAB, start, end) ?:
	      aim_at_ktask(FAIL_PAGE, start, end);
	if (ret) {
		report_setup_failed(fault_tests,
				    "cannot aim fault injection at ktask: %s",
				    strerror(-ret));
		return;
	}
	read_line(CPU_UNITS, units, sizeof(units));
	write_str(CPU_UNITS, FAULT_UNITS "\n");
	ret = bench_run("cpu", 1, &serial);
	if (!ret) {
		ret = bench_run_helped("fault_nth", vcpus, 2, &res);
		ret = ret < 0 ? ret : 0;
	}
	want_sum = serial.sum;
	if (ret || !want_sum || res.sum != want_sum || res.used < 2) {
		report_setup_failed(fault_tests,
				    "without faults: errno %d, sums %llx and %llx, used %d",
				    -ret, want_sum, res.sum, res.used);
	} else {
		ktap_diag("faults aimed at ktask's code 0x%llx-0x%llx; without faults %d threads, sum %llx",
			  start, end, res.used, want_sum);
		test_fault_nth(vcpus, want_sum, res.used);
		test_fault_random(vcpus, want_sum, res.used, 0,
				  "fault_random");
		test_fault_random(vcpus, want_sum, res.used, 1,
				  "fault_random_start");
	}
	if (units[0]) {
		strcat(units, "\n");
		write_str(CPU_UNITS, units);
	}
}
