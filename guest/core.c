// SPDX-License-Identifier: GPL-2.0
/*
 * The core's tests that KUnit cannot do because they need a user task as
 * the caller, whose helpers are threads of its own process: helpers in
 * the process, who forks them, its affinity, isolated CPUs (a boot of
 * their own: run_isolated_tests()), helpers that stop for a signal or
 * once out of the caller's cgroups, ktask.max_threads, the trace events
 * and its cgroup's cpu.max, each on the self-benchmark's cpu job.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/stat.h>
#include <sys/wait.h>

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
 * cost to it.  The job plans no helper (its ktask_job_start event): that
 * none ran a chunk would also be a helper the host did not run in time.
 * cgroup_cpu_max is the control, a job that gets its helpers at 110%.
 */
static void cgroup_serial_child(int vcpus)
{
	struct bench_result res;
	int ran, planned;

	if (cgroup_join("cgroup_cpu_max_serial", 20, 100000))
		return;
	trace_start_planned();
	ran = bench_or_report("cgroup_cpu_max_serial", cgroup_threads(vcpus),
			      &res);
	planned = trace_planned(BENCH_CPU_FUNC);
	trace_stop();
	if (!ran)
		return;
	report(planned == 1 && res.used == 1, "cgroup_cpu_max_serial",
	       "cpu.max 20%%: %d threads planned, %d ran a chunk, of %d asked for (want 1 and 1)",
	       planned, res.used, cgroup_threads(vcpus));
}

/*
 * The trace events of a job reach tracefs, a helper's among them: the job
 * runs again until a helper took a chunk (helpers_retried(), which
 * leaves the last run alone in the trace).
 */
static void test_trace_events(int vcpus)
{
	static const char *const events[] = {
		"ktask_job_start:", "ktask_helper_end:", "ktask_job_end:",
	};
	char line[512];
	int found[3] = { 0 }, i, tries;
	struct bench_result res;
	FILE *f;

	if (write_str("/sys/kernel/tracing/events/ktask/enable", "1\n")) {
		report(0, "trace_events", "cannot enable events/ktask: %s",
		       strerror(errno));
		return;
	}
	tries = helpers_retried("trace_events", vcpus, 2, &res);
	write_str("/sys/kernel/tracing/events/ktask/enable", "0\n");
	if (tries < 0)
		return;
	f = fopen("/sys/kernel/tracing/trace", "r");
	while (f && fgets(line, sizeof(line), f))
		for (i = 0; i < 3; i++)
			found[i] += strstr(line, events[i]) &&
				    strstr(line, BENCH_CPU_FUNC);
	if (f)
		fclose(f);
	/* Every helper started has an end event, even one that ran no chunk. */
	report(found[0] == 1 && res.used >= 2 && found[1] >= res.used - 1 &&
	       found[2] == 1, "trace_events",
	       "job_start=%d helper_end=%d (want >= %d, a helper at least) job_end=%d (%d runs)",
	       found[0], found[1], res.used - 1, found[2], tries);
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

/*
 * A user task's helper takes no chunk once it has a signal pending
 * (kernel/ktask.c: ktask_helper_interrupted()): a freeze of the process's
 * cgroup, or a group stop that another thread of the process began, wants
 * every thread out of the kernel, and the caller does the rest of the job.
 * A child runs the self-benchmark's "numa" job, the cpu job cut into a
 * range per node, with its "signal" start function, which waits for such
 * a signal: the helpers, forked before it and waiting for it to return,
 * see the signal before their first chunk, and the caller alone runs
 * chunks, all of them.  Its sum must be the serial cpu job's: the caller
 * leaves a chunk of another node's range to each helper bound to that
 * node, and takes it back once they are gone (kernel/ktask.c:
 * ktask_unbind_helpers()), or the job would end with it undone.  Its
 * parent freezes the child's cgroup once the child has a helper, or a
 * thread of the child stops its process; the parent then thaws or
 * continues it and reads its result.  A run where the job forked no
 * helper, or none bound to a node other than the caller's, is run again.
 */
#define SIGNAL_CG	CGROOT "/ktask-signal"
/* As long as the "signal" start function waits (lib/ktask_bench.c). */
#define SIGNAL_WAIT_MS	10000

/* The serial cpu job's sum, which every signalled or moved job must have. */
static unsigned long long serial_sum;

/* Run the serial cpu job for serial_sum, once; 0 or -errno. */
static int serial_sum_get(void)
{
	struct bench_result serial;
	int err;

	if (serial_sum)
		return 0;
	err = bench_run("cpu", 1, &serial);
	if (!err)
		serial_sum = serial.sum;
	return err;
}

/*
 * How long the tests below sleep between two reads of what they wait for:
 * a job plans a helper only for a CPU busy less than half the time
 * (kernel/ktask.c: ktask_cpu_idle()), and under TCG a read of /proc
 * every ms keeps a vCPU about that busy.
 */
#define POLL_MS		10
static const struct timespec poll_period = { 0, POLL_MS * 1000000L };

struct signal_run {
	int			vcpus;
	int			group_stop;	/* else a freeze */
	const char		*why;		/* the run failed */
	struct bench_result	res;
	int			ret;		/* the job's, 0 or -errno */
};

/*
 * Poll @key of @path (read_key()) every poll_period until it is at least
 * @least, for @limit_ms at most; whether it got there.
 */
static int wait_key(const char *path, const char *key, char sep,
		    long long least, int limit_ms)
{
	int i;

	/* Asleep first: the job it waits for starts just now. */
	for (i = 0; i < limit_ms / POLL_MS; i++) {
		nanosleep(&poll_period, NULL);
		if (read_key(path, key, sep) >= least)
			return 1;
	}
	return 0;
}

/* In the caller's process: once a helper is forked, stop the process. */
static void *signal_stopper(void *arg)
{
	/*
	 * The caller, this thread and a helper; asleep, not a busy vCPU,
	 * first of all as the job starts, just after this thread.
	 */
	do
		nanosleep(&poll_period, NULL);
	while (read_key("/proc/self/status", "Threads", ':') < 3);
	raise(SIGSTOP);
	return NULL;
}

static void signal_caller(struct signal_run *r, int fd)
{
	pthread_t stopper;

	if (r->group_stop)
		r->ret = -pthread_create(&stopper, NULL, signal_stopper, NULL);
	else if (write_str(SIGNAL_CG "/cgroup.procs", "0\n"))
		r->ret = -errno;
	if (!r->ret)
		r->ret = bench_run_as("numa", r->vcpus, "signal", &r->res);
	_exit(write(fd, r, sizeof(*r)) != sizeof(*r));
}

/*
 * Signal the caller @pid as @r says, once it has a helper, and let it go
 * on: 1, 0 if it had no helper, or -1 with why in @r.
 */
static int signal_caller_process(struct signal_run *r, pid_t pid)
{
	char status[32];
	int st;

	if (r->group_stop) {
		if (waitpid(pid, &st, WUNTRACED) != pid) {
			r->why = "waitpid failed";
			return -1;
		}
		if (!WIFSTOPPED(st))
			return 0;
		kill(pid, SIGCONT);
		return 1;
	}
	/* A thread beside the caller's. */
	snprintf(status, sizeof(status), "/proc/%d/status", pid);
	if (!wait_key(status, "Threads", ':', 2, SIGNAL_WAIT_MS))
		return 0;
	if (write_str(SIGNAL_CG "/cgroup.freeze", "1\n")) {
		r->why = "cannot freeze the cgroup";
		return -1;
	}
	if (!wait_key(SIGNAL_CG "/cgroup.events", "frozen", ' ', 1,
		      SIGNAL_WAIT_MS))
		r->why = "the cgroup did not freeze";
	write_str(SIGNAL_CG "/cgroup.freeze", "0\n");
	return r->why ? -1 : 1;
}

/* One run of @ctx, a &struct signal_run: 1, 0 if vacuous, -EIO if it failed. */
static int signal_attempt(void *ctx)
{
	struct signal_run *r = ctx;
	int fds[2], ret, st;
	pid_t pid;

	r->why = NULL;
	r->ret = 0;
	if (pipe(fds) || (pid = fork()) < 0) {
		r->why = "pipe or fork failed";
		return -EIO;
	}
	if (!pid)
		signal_caller(r, fds[1]);
	close(fds[1]);
	ret = signal_caller_process(r, pid);
	if (read(fds[0], r, sizeof(*r)) != sizeof(*r) && !r->why)
		r->why = "no result from the caller";
	close(fds[0]);
	waitpid(pid, &st, 0);
	if (!r->why && r->ret)
		r->why = strerror(-r->ret);
	if (r->why)
		return -EIO;
	/*
	 * Without a helper the group stop waits for the job's end; without
	 * one bound to another node, the caller has no range to take back.
	 */
	return ret && r->res.start_threads >= 2 + r->group_stop &&
	       r->res.away;
}

static const char *const frozen_test[] = { "helpers_stop_frozen", NULL };
static const char *const group_stop_test[] = {
	"helpers_stop_group_stop", NULL,
};

static void signal_child(int vcpus, const char *const *names)
{
	struct signal_run r = {
		.vcpus = vcpus, .group_stop = names == group_stop_test,
	};
	int tries = retry_for_helpers(names[0], signal_attempt, &r);

	if (tries < 0) {
		report(0, names[0], "%s", r.why);
		return;
	}
	report(r.res.used == 1 && r.res.start_threads >= 2 + r.group_stop &&
	       r.res.away && r.res.sum == serial_sum, names[0],
	       "threads in the start function: %d (want >= %d), threads that ran a chunk: %d (want 1), nodes of other helpers: %d (want >= 1), sum %llx (want %llx), run %d",
	       r.res.start_threads, 2 + r.group_stop, r.res.used, r.res.away,
	       r.res.sum, serial_sum, tries);
}

static void signal_frozen_child(int vcpus)
{
	signal_child(vcpus, frozen_test);
}

static void signal_stopped_child(int vcpus)
{
	signal_child(vcpus, group_stop_test);
}

static void signal_setup_failed(const char *what, int err)
{
	report(0, frozen_test[0], "%s: %s", what, strerror(-err));
	report(0, group_stop_test[0], "%s: %s", what, strerror(-err));
}

static void test_helpers_stop(int vcpus)
{
	int err;

	if (vcpus < 2) {
		report_skip(frozen_test[0], "%d vCPU: no helper", vcpus);
		report_skip(group_stop_test[0], "%d vCPU: no helper", vcpus);
		return;
	}
	err = serial_sum_get();
	if (err) {
		signal_setup_failed("the serial cpu job", err);
		return;
	}
	err = cgroup_make("cpu", SIGNAL_CG);
	if (err) {
		signal_setup_failed(SIGNAL_CG, err);
		return;
	}
	in_child(signal_frozen_child, vcpus, frozen_test);
	in_child(signal_stopped_child, vcpus, group_stop_test);
	rmdir(SIGNAL_CG);
}

/*
 * A user task's helper takes no chunk once it is no longer in its
 * caller's cgroups (kernel/ktask.c: ktask_in_caller_cgroups()): where
 * threads move one at a time, here between two threaded cgroups of v2,
 * the caller may be moved alone mid-job, and the cgroup it is moved to
 * then bounds all of its job.  The caller runs the self-benchmark's cpu
 * job with its "moved" start function, which waits until the caller is
 * in other cgroups: the helpers, forked in the first one before it and
 * waiting for it to return, see their caller elsewhere before their
 * first chunk, and the caller alone runs chunks, all of them, for the
 * serial job's sum.  Another thread of its process moves it once a
 * helper is there, or after a second; a run where the job forked no
 * helper before the move is run again.  The caller is SCHED_FIFO: a
 * helper outside its cgroups exits, as it is lent, at the caller's nice
 * alone (kernel/ktask.c: ktask_setattr()), never in a real-time
 * class, by the sched_process_exit events' prio.  The control: a move of
 * the whole process, between two cgroups of v2, takes the helpers along,
 * and they take chunks and exit at the caller's real-time priority.
 */
#define PROC_EXIT	TRACE "events/sched/sched_process_exit/enable"
/* MAX_RT_PRIO: a prio below it is real-time, from it on the fair class. */
#define FAIR_PRIO	100
#define MOVED_CG	CGROOT "/ktask-moved"
#define MOVED_P1	CGROOT "/ktask-moved-p1"
#define MOVED_P2	CGROOT "/ktask-moved-p2"

struct moved_case {
	const char	*name;
	const char	*join;		/* the process, once, or NULL */
	const char	*from;		/* the caller, before each run */
	const char	*to;		/* the caller, once it has a helper */
	const char	*after;		/* /proc/thread-self/cgroup then */
	int		alone;		/* the caller runs every chunk */
};

/* The prio the job's helpers exited at (sched_process_exit). */
struct exit_prios {
	int		exits;
	int		lo, hi;
};

static const struct moved_case moved_cases[] = {
	{ "helpers_stop_moved", MOVED_CG "/cgroup.procs",
	  MOVED_CG "/a/cgroup.threads", MOVED_CG "/b/cgroup.threads",
	  "0::/ktask-moved/b", 1 },
	{ "helpers_go_on_moved_process", NULL, MOVED_P1 "/cgroup.procs",
	  MOVED_P2 "/cgroup.procs", "0::/ktask-moved-p2", 0 },
};

/* The vCPUs of the boot, for moved_child(), which in_child() gives an index. */
static int moved_vcpus;

struct moved_run {
	const struct moved_case	*c;
	int			vcpus;
	pid_t			caller;		/* its thread id */
	const char		*why;		/* the run failed */
	struct bench_result	res;
	struct exit_prios	exit;
};

/* The exits of threads named ktask in the trace, and their prio. */
static void exit_prios_read(struct exit_prios *e)
{
	char line[512], *at;
	FILE *trace = fopen(TRACE "trace", "r");
	int prio;

	*e = (struct exit_prios){ .lo = 1000, .hi = -1 };
	while (trace && fgets(line, sizeof(line), trace)) {
		at = strstr(line, " prio=");
		if (!strstr(line, "sched_process_exit:") ||
		    !strstr(line, "comm=ktask ") || !at)
			continue;
		prio = atoi(at + strlen(" prio="));
		e->exits++;
		e->lo = prio < e->lo ? prio : e->lo;
		e->hi = prio > e->hi ? prio : e->hi;
	}
	if (trace)
		fclose(trace);
}

/* Move the caller (and with cgroup.procs its process) once it has a helper. */
static void *moved_mover(void *arg)
{
	struct moved_run *r = arg;
	char tid[16];

	/*
	 * The caller, this thread and as many helpers as the job may plan,
	 * all forked before its start function, for a second at most: a
	 * move between two forks leaves helpers in both cgroups.
	 */
	wait_key("/proc/self/status", "Threads", ':', r->vcpus + 1, 1000);
	snprintf(tid, sizeof(tid), "%d\n", r->caller);
	if (write_str(r->c->to, tid))
		r->why = "cannot move the caller";
	return NULL;
}

/* One run of @ctx, a &struct moved_run: 1, 0 if vacuous, -EIO if it failed. */
static int moved_attempt(void *ctx)
{
	const struct sched_param fifo = { .sched_priority = 1 };
	const struct sched_param other = { .sched_priority = 0 };
	struct moved_run *r = ctx;
	char tid[16], cgroup[128];
	pthread_t mover;
	int ret;

	r->why = NULL;
	snprintf(tid, sizeof(tid), "%d\n", r->caller);
	if (write_str(r->c->from, tid)) {
		r->why = "cannot move the caller back";
		return -EIO;
	}
	/* Only this thread: the mover stays where it cannot starve. */
	if (sched_setscheduler(0, SCHED_FIFO, &fifo)) {
		r->why = "cannot make the caller SCHED_FIFO";
		return -EIO;
	}
	if (pthread_create(&mover, NULL, moved_mover, r)) {
		sched_setscheduler(0, SCHED_OTHER, &other);
		r->why = "pthread_create failed";
		return -EIO;
	}
	trace_clear();
	write_str(PROC_EXIT, "1\n");
	ret = bench_run_as("cpu", r->vcpus, "moved", &r->res);
	sched_setscheduler(0, SCHED_OTHER, &other);
	pthread_join(mover, NULL);
	/* The helpers have left the process: their exits are traced. */
	write_str(PROC_EXIT, "0\n");
	exit_prios_read(&r->exit);
	if (!r->why && ret)
		r->why = strerror(-ret);
	if (!r->why && (read_line("/proc/thread-self/cgroup", cgroup,
				  sizeof(cgroup)) || strcmp(cgroup, r->c->after)))
		r->why = "the caller is not where it was moved after the job";
	if (r->why)
		return -EIO;
	/* Helpers waited in the start function, and, moved along, ran. */
	return r->res.start_threads >= 3 && (r->c->alone || r->res.used >= 2);
}

static void moved_child(int index)
{
	const struct moved_case *c = &moved_cases[index];
	struct moved_run r = { .c = c, .vcpus = moved_vcpus,
			       .caller = gettid() };
	int tries, ok, err;

	err = c->join ? write_str(c->join, "0\n") : 0;
	if (err) {
		report(0, c->name, "cannot join %s: %s", c->join,
		       strerror(-err));
		return;
	}
	tries = retry_until(c->name, "no helper waited in the start function",
			    moved_attempt, &r);
	if (tries < 0) {
		report(0, c->name, "%s", r.why ? r.why : "no run");
		return;
	}
	/* Alone: every helper exits fair; else each at the caller's RT prio. */
	ok = c->alone ? r.res.used == 1 && r.exit.lo >= FAIR_PRIO :
			r.res.used >= 2 && r.exit.hi < FAIR_PRIO;
	/* Every helper: the threads in the start function but two. */
	ok = ok && r.res.start_threads >= 3 &&
	     r.exit.exits == r.res.start_threads - 2;
	report(ok && r.res.sum == serial_sum, c->name,
	       "threads in the start function: %d (want >= 3), threads that ran a chunk: %d (want %s), helpers' exit prio %d-%d of %d exits (want %s %d, an exit per helper), sum %llx (want %llx), run %d",
	       r.res.start_threads, r.res.used, c->alone ? "1" : ">= 2",
	       r.exit.lo, r.exit.hi, r.exit.exits, c->alone ? ">=" : "<",
	       FAIR_PRIO, r.res.sum, serial_sum, tries);
}

/*
 * MOVED_CG with two threaded cgroups, a and b, and the domain cgroups
 * MOVED_P1 and MOVED_P2; 0 or -errno.
 */
static int moved_make(void)
{
	static const char *const sub[] = { "/a", "/b" };
	char path[128];
	int err = cgroup_make("cpu", MOVED_CG);
	size_t i;

	for (i = 0; !err && i < 2; i++) {
		snprintf(path, sizeof(path), "%s%s", MOVED_CG, sub[i]);
		if (mkdir(path, 0755) && errno != EEXIST)
			err = -errno;
		strcat(path, "/cgroup.type");
		if (!err && write_str(path, "threaded\n"))
			err = -errno;
	}
	if (!err && write_str(MOVED_CG "/cgroup.subtree_control", "+cpu\n"))
		err = -errno;
	if (!err)
		err = cgroup_make("cpu", MOVED_P1);
	return err ? err : cgroup_make("cpu", MOVED_P2);
}

static void moved_unmake(void)
{
	rmdir(MOVED_CG "/a");
	rmdir(MOVED_CG "/b");
	rmdir(MOVED_CG);
	rmdir(MOVED_P1);
	rmdir(MOVED_P2);
}

static void test_helpers_moved(int vcpus)
{
	const char *names[2] = { NULL, NULL };
	size_t i;
	int err = 0;

	moved_vcpus = vcpus;
	if (vcpus >= 2)
		err = serial_sum_get();
	if (!err && vcpus >= 2)
		err = moved_make();
	for (i = 0; i < ARRAY_SIZE(moved_cases); i++) {
		names[0] = moved_cases[i].name;
		if (vcpus < 2)
			report_skip(names[0], "%d vCPU: no helper", vcpus);
		else if (err)
			report(0, names[0], "setup: %s", strerror(-err));
		else
			in_child(moved_child, i, names);
	}
	moved_unmake();
}

/*
 * The CPUs of a sysfs list into *@set, and the list into @list: 0, or -1
 * reported.
 */
static int read_cpus(const char *name, const char *path, char *list,
		     size_t size, struct cpus *set)
{
	if (!read_line(path, list, size) && !cpulist_parse(list, set))
		return 0;
	report(0, name, "cannot read the CPUs of %s", path);
	return -1;
}

static const char *const isolated_test[] = { "isolated_helpers", NULL };

/*
 * A user task's helpers are never placed on a CPU isolated from the
 * scheduler's domains (isolcpus=), even when the caller itself may run
 * there: make test's memoryless-node boot isolates CPU 7 for this test,
 * whose caller may run on every online CPU.  What is checked is each
 * helper's affinity as it took its first chunk (the self-benchmark's
 * helper_cpus=), not where it happened to run, which an idle isolated
 * CPU would make a matter of luck.  KUnit ktask_test_isolated_cpu and
 * ktask_test_isolated_cap check the count and the caps, and a kernel
 * thread's workers, whose workqueue keeps them off isolated CPUs too.
 */
static void isolated_child(int vcpus)
{
	const char *name = isolated_test[0];
	char online_list[256], isolated_list[256];
	struct cpus online, isolated;
	struct bench_result res;
	const char *helpers;
	int tries, err;

	if (read_cpus(name, "/sys/devices/system/cpu/online", online_list,
		      sizeof(online_list), &online) ||
	    read_cpus(name, "/sys/devices/system/cpu/isolated", isolated_list,
		      sizeof(isolated_list), &isolated))
		return;
	if (cpus_empty(&isolated)) {
		report(0, name, "needs a boot with an isolated CPU (isolcpus=)");
		return;
	}
	/* init runs on the housekeeping CPUs alone (sched_init_smp()). */
	err = run_on_cpus(&online);
	if (err) {
		report(0, name, "sched_setaffinity: %s", strerror(-err));
		return;
	}
	tries = helpers_retried(name, vcpus, 2, &res);
	if (tries < 0)
		return;
	helpers = strstr(res.line, " helper_cpus=");
	report(res.helper_cpus_ok && !cpus_empty(&res.helper_cpus) &&
	       !cpus_intersect(&res.helper_cpus, &isolated), name,
	       "caller on CPUs %s, %s isolated:%s (want some, none isolated), used=%d, run %d",
	       online_list, isolated_list, helpers ? helpers : " no helper_cpus",
	       res.used, tries);
}

/* Where a user task's helpers may run, in a boot with isolated CPUs. */
void run_isolated_tests(const struct boot *b)
{
	ktap_plan(1);
	in_child(isolated_child, b->vcpus, isolated_test);
}

/* The core's tests from a user task, each one result. */
static const char *const pinned_test[] = { "pinned", NULL };
static const char *const cgroup_test[] = { "cgroup_cpu_max", NULL };
static const char *const serial_test[] = { "cgroup_cpu_max_serial", NULL };

void run_core_tests(const struct boot *b)
{
	int vcpus = b->vcpus;

	ktap_plan(13);
	test_helpers(vcpus);
	test_default_limit(vcpus);
	test_caller_forks_one(vcpus);
	test_start_forks_first(vcpus);
	test_helpers_stop(vcpus);
	test_helpers_moved(vcpus);
	in_child(pinned_child, vcpus, pinned_test);
	test_knob(vcpus);
	test_trace_events(vcpus);
	in_child(cgroup_child, vcpus, cgroup_test);
	in_child(cgroup_serial_child, vcpus, serial_test);
	rmdir(CG);
}
