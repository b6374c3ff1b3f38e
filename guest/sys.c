// SPDX-License-Identifier: GPL-2.0
/*
 * The bottom of the guest: file and sysfs I/O, the trace, ktask's knob
 * and self-benchmark, children and cgroups.  It calls nothing of the
 * other files but ktap.c.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <glob.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <linux/capability.h>
#include <sys/mount.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/sysmacros.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "lib.h"

#define JOB_END		TRACE "events/ktask/ktask_job_end/enable"

int count_nodes(void)
{
	glob_t g;
	int n = 0;

	if (!glob("/sys/devices/system/node/node[0-9]*", GLOB_ONLYDIR, NULL, &g))
		n = g.gl_pathc;
	globfree(&g);
	return n;
}

/*
 * The CPUs of a list as the kernel prints one ("0-2,5", "" for none) into
 * *@set: 0, or -1 if it is malformed or names a CPU past MAX_CPUS.
 */
int cpulist_parse(const char *list, struct cpus *set)
{
	unsigned long first, last;
	char *end;

	memset(set, 0, sizeof(*set));
	while (*list) {
		if (*list < '0' || *list > '9')
			return -1;
		first = strtoul(list, &end, 10);
		last = first;
		if (*end == '-') {
			list = end + 1;
			if (*list < '0' || *list > '9')
				return -1;
			last = strtoul(list, &end, 10);
		}
		if (last < first || last >= MAX_CPUS ||
		    (*end && (*end != ',' || !end[1])))
			return -1;
		for (; first <= last; first++)
			set->w[first / 64] |= 1ULL << (first % 64);
		list = *end ? end + 1 : end;
	}
	return 0;
}

int cpus_empty(const struct cpus *set)
{
	size_t i;

	for (i = 0; i < ARRAY_SIZE(set->w); i++)
		if (set->w[i])
			return 0;
	return 1;
}

int cpus_intersect(const struct cpus *a, const struct cpus *b)
{
	size_t i;

	for (i = 0; i < ARRAY_SIZE(a->w); i++)
		if (a->w[i] & b->w[i])
			return 1;
	return 0;
}

/* Let this task run on the CPUs of @set: 0 or -errno. */
int run_on_cpus(const struct cpus *set)
{
	cpu_set_t mask;
	int cpu;

	CPU_ZERO(&mask);
	for (cpu = 0; cpu < MAX_CPUS; cpu++)
		if (set->w[cpu / 64] & (1ULL << (cpu % 64)))
			CPU_SET(cpu, &mask);
	return sched_setaffinity(0, sizeof(mask), &mask) ? -errno : 0;
}

int write_str(const char *path, const char *s)
{
	ssize_t len = strlen(s), ret;
	int fd = open(path, O_WRONLY);

	if (fd < 0)
		return -errno;
	ret = write(fd, s, len);
	if (ret < 0)
		ret = -errno;
	close(fd);
	return ret < 0 ? ret : ret == len ? 0 : -EIO;
}

/*
 * Empty the trace buffer of the tracefs directory @dir, the top one or an
 * instance's: only an open of its "trace" with O_TRUNC does.
 */
int trace_clear_in(const char *dir)
{
	char path[256];
	int fd;

	snprintf(path, sizeof(path), "%strace", dir);
	fd = open(path, O_WRONLY | O_TRUNC);
	if (fd < 0)
		return -errno;
	close(fd);
	return 0;
}

int trace_clear(void)
{
	return trace_clear_in(TRACE);
}

int read_line(const char *path, char *buf, size_t size)
{
	ssize_t len;
	int fd = open(path, O_RDONLY);

	if (fd < 0)
		return -errno;
	len = read(fd, buf, size - 1);
	if (len < 0)
		len = -errno;
	close(fd);
	if (len < 0)
		return len;
	buf[len] = '\0';
	buf[strcspn(buf, "\n")] = '\0';
	return 0;
}

/* The number a one-line file holds (sysfs, procfs), or -1. */
long long read_num(const char *path)
{
	char buf[64];

	return read_line(path, buf, sizeof(buf)) ? -1 : atoll(buf);
}

/*
 * The value after "key<sep>" in a file of such lines: /proc/meminfo
 * ("MemTotal: 16377888 kB", sep ':'), cgroup cpu.stat ("usage_usec 12",
 * sep ' ').  -1 if the file or the key is missing.
 */
long long read_key(const char *path, const char *key, char sep)
{
	char line[256];
	long long value = -1;
	size_t len = strlen(key);
	FILE *f = fopen(path, "r");

	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f))
		if (!strncmp(line, key, len) && line[len] == sep) {
			value = atoll(line + len + 1);
			break;
		}
	fclose(f);
	return value;
}

unsigned long long now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000000000ULL + ts.tv_nsec;
}

/*
 * mknod @path (no devtmpfs here) for the device of @type (S_IFCHR or
 * S_IFBLK) whose "major:minor" is in @sysfs_dev: 0, or -errno.
 */
int mknod_from(const char *path, const char *sysfs_dev, mode_t type)
{
	unsigned int maj, min;
	char buf[32];

	if (read_line(sysfs_dev, buf, sizeof(buf)) ||
	    sscanf(buf, "%u:%u", &maj, &min) != 2)
		return -ENOENT;
	if (mknod(path, type | 0600, makedev(maj, min)) && errno != EEXIST)
		return -errno;
	return 0;
}

/*
 * CPU time of this process (getrusage(), whose RUSAGE_SELF includes the
 * threads that ended, as ktask's helpers have by the time a call
 * returns), or -1.
 */
long long self_cpu_ns(void)
{
	struct rusage ru;

	if (getrusage(RUSAGE_SELF, &ru))
		return -1;
	return (ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) * 1000000000LL +
	       (ru.ru_utime.tv_usec + ru.ru_stime.tv_usec) * 1000LL;
}

static unsigned long long field(const char *line, const char *key)
{
	const char *at = strstr(line, key);

	return at ? strtoull(at + strlen(key), NULL, 10) : 0;
}

/*
 * Free memory in kB, counted exactly: the free pages of every zone with
 * each CPU's share of the counters folded in, plus the pages on the
 * per-CPU free lists, which MemAvailable leaves out (after unmapping
 * 1 GiB they hold tens of MiB, more or less from one cycle to the next).
 */
long long free_kb(void)
{
	long long pages = 0;
	char line[256], *at;
	FILE *f;

	write_str("/proc/sys/vm/stat_refresh", "1\n");
	f = fopen("/proc/zoneinfo", "r");
	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f)) {
		if ((at = strstr(line, "nr_free_pages ")))
			pages += atoll(at + 14);
		else if ((at = strstr(line, "count: ")))
			pages += atoll(at + 7);
	}
	fclose(f);
	return pages * (sysconf(_SC_PAGESIZE) >> 10);
}

/*
 * How far free_kb() may fall over cycles that free what they allocate:
 * @plain_kb, or 64 MiB on a KASAN kernel, which keeps freed slab objects
 * in quarantine, up to 1/32 of memory, and their slabs allocated
 * meanwhile (tens of MiB after a few cycles on make test's debug kernel).
 */
long long free_slack_kb(long long plain_kb)
{
	unsigned long long kasan, kasan_end;

	if (!ksym_range("kasan_quarantine_put", &kasan, &kasan_end))
		return 64 << 10;
	return plain_kb;
}

/*
 * The code of the kernel's symbol @name, from its address in /proc/kallsyms
 * to the next symbol's.  0 if found.
 */
int ksym_range(const char *name, unsigned long long *start,
	       unsigned long long *end)
{
	unsigned long long addr, next = ~0ULL;
	char line[512], sym[256], type;
	FILE *f = fopen("/proc/kallsyms", "r");

	*start = 0;
	while (f && fgets(line, sizeof(line), f))
		if (sscanf(line, "%llx %c %255s", &addr, &type, sym) == 3 &&
		    !strcmp(sym, name))
			*start = addr;
	if (f)
		rewind(f);
	while (f && *start && fgets(line, sizeof(line), f))
		if (sscanf(line, "%llx %c %255s", &addr, &type, sym) == 3 &&
		    addr > *start && addr < next)
			next = addr;
	if (f)
		fclose(f);
	*end = next;
	return *start && next != ~0ULL ? 0 : -ENOENT;
}

/*
 * Run one job of the self-benchmark, called from this task or (@caller
 * "kernel") from a kernel thread; 0 or -errno.
 */
int bench_run_as(const char *job, int threads, const char *caller,
		 struct bench_result *res)
{
	char cmd[64], list[256];
	const char *at;
	int ret;

	snprintf(cmd, sizeof(cmd), "%s %d %s\n", job, threads, caller);
	ret = write_str(BENCH, cmd);
	if (!ret)
		ret = read_line(BENCH, res->line, sizeof(res->line));
	if (ret)
		return ret;
	res->used = field(res->line, " used=");
	res->wall_ns = field(res->line, " wall_ns=");
	res->cpu_ns = field(res->line, " cpu_ns=");
	res->job_cpu_ns = field(res->line, " job_cpu_ns=");
	res->start_threads = field(res->line, " start_threads=");
	res->away = field(res->line, " away=");
	at = strstr(res->line, " sum=");
	res->sum = at ? strtoull(at + 5, NULL, 16) : 0;
	at = strstr(res->line, " helper_cpus=");
	list[0] = '\0';
	if (at)
		sscanf(at + strlen(" helper_cpus="), "%255s", list);
	res->helper_cpus_ok = at && !cpulist_parse(list, &res->helper_cpus);
	return 0;
}

int bench_run(const char *job, int threads, struct bench_result *res)
{
	return bench_run_as(job, threads, "user", res);
}

static int write_int(const char *path, int value)
{
	char buf[16];

	snprintf(buf, sizeof(buf), "%d\n", value);
	return write_str(path, buf);
}

int ktask_threads_set(int threads)
{
	return write_int(KNOB_THREADS, threads);
}

int ktask_mem_threads_set(int threads)
{
	return write_int(KNOB_MEM_THREADS, threads);
}

/* Start recording ktask_job_end events, from an empty trace. */
void trace_start(void)
{
	write_str(JOB_START, "0\n");
	trace_clear();
	write_str(JOB_END, "1\n");
}

/*
 * trace_start(), with each helper's ktask_helper_end event too, for
 * trace_helpers(): around a call whose helpers a test looks at.
 */
void trace_start_helpers(void)
{
	trace_start();
	write_str(HELPER_END, "1\n");
}

/* Stop what trace_start_helpers() records: trace_threads() of @match. */
int trace_stop_helpers(const char *match)
{
	write_str(HELPER_END, "0\n");
	return trace_threads(match);
}

/* trace_start(), with the ktask_job_start events too (trace_planned()). */
void trace_start_planned(void)
{
	trace_start();
	write_str(JOB_START, "1\n");
}

/*
 * The largest value of @key (" threads=") in the @event events recorded
 * so far whose line has @match (the thread function, or the caller's
 * name), or -1 if none has; how many such events into *@count, if given.
 */
long long trace_most(const char *event, const char *match, const char *key,
		     int *count)
{
	long long max = -1;
	char line[512], *at;
	int n = 0;
	FILE *f;

	f = fopen(TRACE "trace", "r");
	while (f && fgets(line, sizeof(line), f)) {
		if (!strstr(line, event) || !strstr(line, match))
			continue;
		n++;
		at = strstr(line, key);
		if (at && atoll(at + strlen(key)) > max)
			max = atoll(at + strlen(key));
	}
	if (f)
		fclose(f);
	if (count)
		*count = n;
	return max;
}

/*
 * Stop recording ktask's job events, the boot's (the command line enables
 * them for deferred init) or trace_start()'s: a job that is timed must not
 * pay for them.
 */
void trace_stop(void)
{
	write_str(JOB_START, "0\n");
	write_str(JOB_END, "0\n");
}

/* Most threads that ran a chunk of a job whose line has @match. */
int trace_threads(const char *match)
{
	trace_stop();
	return trace_most("ktask_job_end:", match, " threads=", NULL);
}

/*
 * Most threads a job whose line has @match planned: in the boot's trace,
 * or since trace_start_planned().
 */
int trace_planned(const char *match)
{
	return trace_most("ktask_job_start:", match, " threads=", NULL);
}

/*
 * Whether the trace records each event's process (its tgid, in
 * parentheses after the task), for trace_helpers()'s foreign count.
 */
void trace_record_tgid(int on)
{
	write_str(TRACE "options/record-tgid", on ? "1\n" : "0\n");
}

/*
 * Whether the event @line, recorded with trace_record_tgid() on, is of a
 * thread of another process than this one, or of an unknown one: a line
 * without a tgid before its CPU counts, so that a trace that lost the
 * option cannot pass for one of this process's threads.
 */
static int trace_foreign(const char *line)
{
	const char *at = strchr(line, '('), *cpu = strchr(line, '[');

	if (!at || !cpu || cpu < at)
		return 1;
	at++;
	return atoi(at + strspn(at, " ")) != getpid();
}

/*
 * Count the ktask_helper_end events of thread function @func recorded so
 * far into @seen, with those bound to node @nid.
 */
void trace_helpers(const char *func, int nid, struct helpers_seen *seen)
{
	char line[512], *at;
	FILE *f;
	int bound;

	memset(seen, 0, sizeof(*seen));
	f = fopen(TRACE "trace", "r");
	while (f && fgets(line, sizeof(line), f)) {
		if (!strstr(line, "ktask_helper_end:") || !strstr(line, func) ||
		    !(at = strstr(line, " nid=")))
			continue;
		bound = atoi(at + 5);
		seen->helpers++;
		seen->on_node += bound == nid;
		seen->unbound += bound == -1;
		seen->foreign += trace_foreign(line);
		at = strstr(line, " chunks=");
		seen->chunks += at ? atoi(at + 8) : 0;
	}
	if (f)
		fclose(f);
}

/*
 * Run @fn in a child process and wait for it.  The child owes a result
 * to each test of the NULL-ended @names, in order: those it did not
 * report (it could not be forked, died or ended early) fail here, with
 * why, rather than go missing from the plan unnamed.
 */
void in_child(void (*fn)(int), int arg, const char *const *names)
{
	int before = ktap_reported(), status = 0, got, i;
	pid_t pid = fork();
	char why[96];

	if (!pid) {
		fn(arg);
		fflush(stdout);
		_exit(0);
	}
	if (pid < 0)
		snprintf(why, sizeof(why), "fork: %s", strerror(errno));
	else if (waitpid(pid, &status, 0) < 0)
		snprintf(why, sizeof(why), "waitpid: %s", strerror(errno));
	else if (WIFSIGNALED(status))
		snprintf(why, sizeof(why), "its child was killed by signal %d",
			 WTERMSIG(status));
	else
		snprintf(why, sizeof(why), "its child exited with %d without a result",
			 WEXITSTATUS(status));
	got = ktap_reported() - before;
	for (i = 0; names[i]; i++)
		if (i >= got)
			report(0, names[i], "%s", why);
}

/*
 * Mount cgroup v2 on CGROOT (if it is not yet), give its children
 * @controller and make the cgroup @dir; 0 or -errno.
 */
int cgroup_make(const char *controller, const char *dir)
{
	char enable[32];

	snprintf(enable, sizeof(enable), "+%s\n", controller);
	mkdir(CGROOT, 0755);
	if (mount("cgroup2", CGROOT, "cgroup2", 0, NULL) && errno != EBUSY)
		return -errno;
	if (write_str(CGROOT "/cgroup.subtree_control", enable))
		return -errno;
	if (mkdir(dir, 0755) && errno != EEXIST)
		return -errno;
	return 0;
}

/* Move the calling process into the cgroup @dir; 0 or -errno. */
int cgroup_attach(const char *dir)
{
	char path[128];

	snprintf(path, sizeof(path), "%s/cgroup.procs", dir);
	return write_str(path, "0\n");
}

/* Make the cgroup @dir (cgroup_make()) and move the calling process into it. */
int cgroup_enter(const char *controller, const char *dir)
{
	return cgroup_make(controller, dir) ?: cgroup_attach(dir);
}

/*
 * Set capability @cap in current's @effective and @permitted sets, or
 * clear it: once out of the permitted set, it cannot come back; 0 or
 * -errno.
 */
int cap_set(unsigned int cap, int effective, int permitted)
{
	struct __user_cap_header_struct hdr = {
		.version = _LINUX_CAPABILITY_VERSION_3,
	};
	struct __user_cap_data_struct data[_LINUX_CAPABILITY_U32S_3];
	unsigned int bit = 1U << (cap % 32);

	if (syscall(SYS_capget, &hdr, data))
		return -errno;
	data[cap / 32].effective &= ~bit;
	data[cap / 32].permitted &= ~bit;
	data[cap / 32].effective |= effective ? bit : 0;
	data[cap / 32].permitted |= permitted ? bit : 0;
	return syscall(SYS_capset, &hdr, data) ? -errno : 0;
}

/*
 * Make the cgroup @dir (cgroup_make()) at cpu.max @pct% of one CPU in
 * each period of @period_us and move the calling process into it; 0 or
 * -errno.
 */
int cgroup_join_cpu_max(const char *dir, int pct, int period_us)
{
	char path[128], quota[32];
	int ret = cgroup_make("cpu", dir);

	if (ret)
		return ret;
	snprintf(quota, sizeof(quota), "%lld %d\n",
		 (long long)pct * period_us / 100, period_us);
	snprintf(path, sizeof(path), "%s/cpu.max", dir);
	if (write_str(path, quota))
		return -errno;
	return cgroup_attach(dir);
}

/*
 * ktask counts a CPU that runs a task as busy by the scheduler's average
 * of its load, whose half-life is about 32 ms: load of a moment ago is
 * still load whenever anything runs there, and load just started is not
 * load yet.  Sleep three half-lives.
 */
void wait_load_settle(void)
{
	struct timespec settle = { 0, 100000000 };

	nanosleep(&settle, NULL);
}

/*
 * Run @attempt(@ctx) until it returns 1 (it saw what it runs for), an
 * error (negative) or HELPER_TRIES runs.  Each retry is a diagnostic line
 * of @name's test ("retry: ...", saying @why), which the host counts.
 * Returns the runs made, or the error.
 */
int retry_until(const char *name, const char *why,
		int (*attempt)(void *ctx), void *ctx)
{
	int tries, ret;

	for (tries = 1; ; tries++) {
		ret = attempt(ctx);
		if (ret < 0)
			return ret;
		if (ret > 0 || tries == HELPER_TRIES)
			return tries;
		ktap_diag("retry: %s: %s in run %d of %d",
			  name, why, tries, HELPER_TRIES);
		/* Whatever kept the vCPUs busy leaves the load average. */
		wait_load_settle();
	}
}

/*
 * retry_until() a helper took part: a helper whose vCPU the host does not
 * run in time takes no chunk, and the job ends without it.
 */
int retry_for_helpers(const char *name, int (*attempt)(void *ctx), void *ctx)
{
	return retry_until(name, "no helper took a chunk", attempt, ctx);
}

struct bench_try {
	int			threads, want;
	struct bench_result	*res;
};

static int bench_attempt(void *ctx)
{
	struct bench_try *t = ctx;
	int ret;

	trace_clear();
	ret = bench_run("cpu", t->threads, t->res);

	return ret ? ret : t->res->used >= t->want;
}

/*
 * The self-benchmark's cpu job at @threads (0: the default limit) until
 * at least @want threads ran a chunk, as @name (retry_for_helpers()):
 * the runs made, or -errno.  Each run starts on an empty trace, so what
 * the trace holds afterwards is the last run's.
 */
int bench_run_helped(const char *name, int threads, int want,
		     struct bench_result *res)
{
	struct bench_try t = { threads, want, res };

	return retry_for_helpers(name, bench_attempt, &t);
}
