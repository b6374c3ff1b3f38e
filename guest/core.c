// SPDX-License-Identifier: GPL-2.0
/*
 * The core's tests that KUnit cannot do because they need a user task as
 * the caller, whose helpers are threads of its own process: helpers in
 * the process, who forks them, its affinity, ktask.max_threads, the trace
 * events and its cgroup's cpu.max, each on the self-benchmark's cpu job.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "lib.h"
#include "suites.h"

#define CG		CGROOT "/ktask"

static int bench_or_report(const char *name, int threads,
			   struct bench_result *res)
{
	int ret = bench_run("cpu", threads, res);

	if (ret)
		report(0, name, "the benchmark failed: %s", strerror(-ret));
	return !ret;
}

/* The cpu job until @want threads took part: its runs, or -errno reported. */
static int helpers_retried(const char *name, int threads, int want,
			   struct bench_result *res)
{
	int tries = bench_run_helped(name, threads, want, res);

	if (tries < 0)
		report(0, name, "the benchmark failed: %s", strerror(-tries));
	return tries;
}

/*
 * A user task's job uses helpers, at least one thread per vCPU up to 4
 * and at most one per vCPU (with more vCPUs, how many get a chunk before
 * the job runs out depends on timing), and its CPU time includes theirs.
 * A helper whose vCPU the host did not run for the whole job gets no
 * chunk, so a job with too few threads is run again (bench_run_helped()).
 */
static void test_helpers(int vcpus)
{
	int want = vcpus < 4 ? vcpus : 4;
	struct bench_result res;
	int tries = helpers_retried("helpers", vcpus, want, &res);

	if (tries < 0)
		return;
	report(res.used >= want && res.used <= vcpus &&
	       res.job_cpu_ns >= res.cpu_ns, "helpers",
	       "used=%d (want %d to %d, run %d) cpu_ns=%llu job_cpu_ns=%llu",
	       res.used, want, vcpus, tries, res.cpu_ns, res.job_cpu_ns);
}

/*
 * A job that sets no limit of its own uses at most 4 threads, the default
 * ktask.h gives (ktask_ctl_set_max_threads()), and, with idle vCPUs, that
 * many: all of them up to 4 (make run SCALE=1, 32 vCPUs: exactly 4).
 */
static void test_default_limit(int vcpus)
{
	int want = vcpus < 4 ? vcpus : 4;
	struct bench_result res;
	int tries = helpers_retried("default_limit", 0, want, &res);

	if (tries < 0)
		return;
	report(res.used >= want && res.used <= 4, "default_limit",
	       "used=%d of %d vCPUs (want %d, at most the default 4, run %d)",
	       res.used, vcpus, want, tries);
}

/* A caller pinned to one CPU gets no helper there or elsewhere. */
static void pinned_child(int vcpus)
{
	struct bench_result res;
	cpu_set_t set;

	CPU_ZERO(&set);
	CPU_SET(vcpus - 1, &set);
	if (sched_setaffinity(0, sizeof(set), &set)) {
		report(0, "pinned", "sched_setaffinity: %s", strerror(errno));
		return;
	}
	if (bench_or_report("pinned", vcpus, &res))
		report(res.used == 1, "pinned", "used=%d (want 1) on CPU %d",
		       res.used, vcpus - 1);
}

/* ktask.max_threads=1 makes every job serial. */
static void test_knob(int vcpus)
{
	struct bench_result res;
	int ok;

	if (write_str(KNOB_THREADS, "1\n")) {
		report(0, "max_threads_knob", "cannot write %s", KNOB_THREADS);
		return;
	}
	ok = bench_or_report("max_threads_knob", vcpus, &res);
	write_str(KNOB_THREADS, "0\n");
	if (ok)
		report(res.used == 1, "max_threads_knob", "used=%d (want 1)",
		       res.used);
}

/*
 * Join the test cgroup, at cpu.max @pct% of a CPU per @period_us; 0, or
 * -1 reported.
 */
static int cgroup_join(const char *name, int pct, int period_us)
{
	int ret = cgroup_join_cpu_max(CG, pct, period_us);

	if (ret)
		report(0, name, "cannot join %s at %d%%: %s", CG, pct,
		       strerror(-ret));
	return ret;
}

/* cgroup_cpu_max's period, and the scheduler's bandwidth slice. */
#define CG_PERIOD_NS	10000000LL
#define CG_SLICE_NS	5000000LL

/*
 * Threads of a job in the cgroup: at most 2, at a quota of 110% that two
 * threads exceed by far in every period.  With many vCPUs under TCG, each
 * thread's CPU time is mostly its vCPU waiting for a host CPU, and that
 * many times over the quota takes hours.
 */
static int cgroup_threads(int vcpus)
{
	return vcpus < 2 ? vcpus : 2;
}

/*
 * In a cgroup whose cpu.max is 0.9 CPU short of the job's threads, so
 * that it gets them all (a 150% quota let a 120 ms job go unthrottled),
 * the job's helpers are throttled with their caller and their time is
 * counted there: the cgroup's usage covers the job's aggregate CPU time,
 * and the job takes at least as long as the quota allows.  Helpers
 * outside the cgroup (as workqueue helpers would be) would show as
 * missing usage and a job finishing faster than its quota allows.
 *
 * That shortest time is what the scheduler can hand out at most: the
 * quota of each period the job reaches into, plus what is left of the
 * period it starts in, plus a bandwidth slice (5 ms) each CPU may hold.
 * A period of 10 ms keeps the bound close for a job of a few quotas (a
 * 220 ms job once took 157 ms at 110% of 100 ms periods, which the
 * 100 ms period allows).
 */
static void cgroup_child(int vcpus)
{
	int threads = cgroup_threads(vcpus), pct = threads * 100 - 90;
	long long usage0, usage1, thr0, thr1;
	struct bench_result res;
	double usage_pct, min_wall_ns, quota_ns = pct * CG_PERIOD_NS / 100;

	if (cgroup_join("cgroup_cpu_max", pct, CG_PERIOD_NS / 1000))
		return;
	usage0 = read_key(CG "/cpu.stat", "usage_usec", ' ');
	thr0 = read_key(CG "/cpu.stat", "nr_throttled", ' ');
	if (!bench_or_report("cgroup_cpu_max", threads, &res))
		return;
	usage1 = read_key(CG "/cpu.stat", "usage_usec", ' ');
	thr1 = read_key(CG "/cpu.stat", "nr_throttled", ' ');
	usage_pct = (usage1 - usage0) * 1000.0 * 100 / res.job_cpu_ns;
	min_wall_ns = CG_PERIOD_NS *
		(((double)res.job_cpu_ns - threads * CG_SLICE_NS) / quota_ns - 2);
	report(res.used == threads && usage_pct >= 90 &&
	       (threads == 1 || thr1 > thr0) && res.wall_ns >= min_wall_ns,
	       "cgroup_cpu_max",
	       "cpu.max %d%%: used=%d cgroup usage %.0f%% of the job's CPU time %llu ns, throttled %lld times, wall %llu ns (>= %.0f)",
	       pct, res.used, usage_pct, res.job_cpu_ns, thr1 - thr0,
	       res.wall_ns, min_wall_ns);
}

/*
 * In a cgroup at cpu.max 20% of a CPU, a job runs alone: helpers would
 * only take turns with their caller at the same quota, and add their
 * cost to it.
 */
static void cgroup_serial_child(int vcpus)
{
	struct bench_result res;

	if (cgroup_join("cgroup_cpu_max_serial", 20, 100000) ||
	    !bench_or_report("cgroup_cpu_max_serial", cgroup_threads(vcpus),
			     &res))
		return;
	report(res.used == 1, "cgroup_cpu_max_serial",
	       "cpu.max 20%%: used=%d of %d threads asked for (want 1)",
	       res.used, cgroup_threads(vcpus));
}

/* The trace events of a job reach tracefs. */
static void test_trace_events(int vcpus)
{
	static const char *const events[] = {
		"ktask_job_start:", "ktask_helper_end:", "ktask_job_end:",
	};
	char line[512];
	int found[3] = { 0 }, i;
	struct bench_result res;
	FILE *f;

	if (write_str("/sys/kernel/tracing/events/ktask/enable", "1\n")) {
		report(0, "trace_events", "cannot enable events/ktask: %s",
		       strerror(errno));
		return;
	}
	trace_clear();
	if (!bench_or_report("trace_events", vcpus, &res))
		return;
	write_str("/sys/kernel/tracing/events/ktask/enable", "0\n");
	f = fopen("/sys/kernel/tracing/trace", "r");
	while (f && fgets(line, sizeof(line), f))
		for (i = 0; i < 3; i++)
			found[i] += strstr(line, events[i]) &&
				    strstr(line, BENCH_CPU_FUNC);
	if (f)
		fclose(f);
	/* Every helper started has an end event, even one that ran no chunk. */
	report(found[0] == 1 && found[1] >= res.used - 1 && found[2] == 1,
	       "trace_events", "job_start=%d helper_end=%d (want >= %d) job_end=%d",
	       found[0], found[1], res.used - 1, found[2]);
}

/*
 * Who forked the job's helpers, by the task_newtask events' tasks, for
 * the self-benchmark's @caller ("user", or "start": with a start
 * function, which notes the caller's threads in @start_threads).
 */
struct forks_run {
	int		threads;
	const char	*caller;
	int		by_caller, by_helpers;
	int		start_threads;
};

/* The task of a trace line ("  init-1  [001] ..."), or -1. */
static int trace_line_tid(const char *line)
{
	const char *end = strstr(line, " [");
	const char *dash = end;

	while (dash && dash > line && *dash != '-')
		dash--;
	return dash && *dash == '-' ? atoi(dash + 1) : -1;
}

static int forks_attempt(void *ctx)
{
	struct forks_run *f = ctx;
	struct bench_result res;
	char line[512];
	int ret, tid = getpid();
	FILE *trace;

	f->by_caller = f->by_helpers = 0;
	if (write_str(NEWTASK, "1\n"))
		return -errno;
	trace_clear();
	ret = bench_run_as("cpu", f->threads, f->caller, &res);
	write_str(NEWTASK, "0\n");
	if (ret)
		return ret;
	f->start_threads = res.start_threads;
	trace = fopen(TRACE "trace", "r");
	while (trace && fgets(line, sizeof(line), trace)) {
		if (!strstr(line, "task_newtask:") || !strstr(line, "comm=ktask "))
			continue;
		if (trace_line_tid(line) == tid)
			f->by_caller++;
		else
			f->by_helpers++;
	}
	if (trace)
		fclose(trace);
	/* Two helpers at least, or there is nothing to tell apart. */
	return f->by_caller + f->by_helpers >= 2;
}

/*
 * Run @f's job, retried until it forks 2 helpers; 0 if test @name
 * was reported already (skipped, or the job could not run).
 */
static int forks_retried(const char *name, int vcpus, struct forks_run *f)
{
	int tries;

	if (vcpus < 3) {
		report_skip(name, "%d vCPUs: fewer than 2 helpers", vcpus);
		return 0;
	}
	tries = retry_for_helpers(name, forks_attempt, f);
	if (tries < 0)
		report(0, name, "cannot run the job: %s", strerror(-tries));
	return tries >= 0;
}

/*
 * The caller forks its first helper only and then runs its own chunks;
 * the helpers fork the others (kernel/ktask.c: ktask_caller_starts()).
 */
static void test_caller_forks_one(int vcpus)
{
	struct forks_run f = { .threads = vcpus, .caller = "user" };

	if (!forks_retried("caller_forks_one", vcpus, &f))
		return;
	report(f.by_caller == 1 && f.by_helpers >= 1, "caller_forks_one",
	       "helpers forked by the caller: %d (want 1), by helpers: %d (want >= 1)",
	       f.by_caller, f.by_helpers);
}

/*
 * A job with a start function calls it only once every helper is forked,
 * since the function may take locks that a fork waits for: the caller
 * forks them all itself, and its thread group has them all when the
 * function runs (kernel/ktask.c: ktask_caller_starts()).
 */
static void test_start_forks_first(int vcpus)
{
	const char *name = "start_func_forks_first";
	struct forks_run f = { .threads = vcpus, .caller = "start" };

	if (!forks_retried(name, vcpus, &f))
		return;
	/* One helper is started by the caller in every job: want two. */
	report(f.by_caller >= 2 && !f.by_helpers &&
	       f.start_threads == 1 + f.by_caller, name,
	       "helpers forked by the caller: %d (want >= 2), by helpers: %d (want 0); threads in the start function: %d (want %d)",
	       f.by_caller, f.by_helpers, f.start_threads, 1 + f.by_caller);
}

/* The core's tests from a user task, each one result. */
static const char *const pinned_test[] = { "pinned", NULL };
static const char *const cgroup_test[] = { "cgroup_cpu_max", NULL };
static const char *const serial_test[] = { "cgroup_cpu_max_serial", NULL };

void run_core_tests(const struct boot *b)
{
	int vcpus = b->vcpus;

	ktap_plan(9);
	test_helpers(vcpus);
	test_default_limit(vcpus);
	test_caller_forks_one(vcpus);
	test_start_forks_first(vcpus);
	in_child(pinned_child, vcpus, pinned_test);
	test_knob(vcpus);
	test_trace_events(vcpus);
	in_child(cgroup_child, vcpus, cgroup_test);
	in_child(cgroup_serial_child, vcpus, serial_test);
	rmdir(CG);
}
