/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The bottom layer of the guest's PID 1, which every other file may use
 * and which uses none of them: sys.c (file, sysfs and trace I/O, ktask's
 * knob and self-benchmark, children and cgroups) and ktap.c (the test
 * results).  Above it: hogs.c, huge.c (the hugetlb pools and callers),
 * vfio_dev.c (the VFIO device), pmem.c (the boot's persistent memory
 * and its driver), placement.c (where a caller's memory lands) and thp.c
 * (THPs on a node, moved to another); then the suites (suites.h), one
 * file each; init.c on top runs the suites a boot asks for.  A file
 * includes only the headers of the layers below its own.
 */
#ifndef KTASK_GUEST_LIB_H
#define KTASK_GUEST_LIB_H

#include <stddef.h>
#include <sys/types.h>

#define BENCH		"/sys/kernel/debug/ktask/bench"
/* The thread function of its cpu job, in the trace. */
#define BENCH_CPU_FUNC	"ktask_bench_cpu_chunk"
/* The units of its cpu job. */
#define CPU_UNITS	"/sys/module/ktask_bench/parameters/cpu_units"
#define KNOB_THREADS	"/sys/module/ktask/parameters/max_threads"
#define KNOB_MEM_THREADS "/sys/module/ktask/parameters/mem_threads"
#define KNOB_LENDING	"/sys/module/ktask/parameters/priority_lending"
#define CGROOT		"/sys/fs/cgroup"
#define TRACE		"/sys/kernel/tracing/"
#define HELPER_END	TRACE "events/ktask/ktask_helper_end/enable"
#define JOB_START	TRACE "events/ktask/ktask_job_start/enable"
#define NEWTASK		TRACE "events/task/task_newtask/enable"
/*
 * Runs of a test that wants a helper to have taken a chunk, before it
 * fails: a helper whose vCPU the host does not run in time gets none.
 */
#define HELPER_TRIES	3

#define ARRAY_SIZE(a)	(sizeof(a) / sizeof((a)[0]))

/*
 * A set of CPUs, CPU n at bit n % 64 of w[n / 64]: as many as cpu_set_t
 * holds, which a file without _GNU_SOURCE cannot name.
 */
#define MAX_CPUS	1024
struct cpus {
	unsigned long long	w[MAX_CPUS / 64];
};

/* The ktask_helper_end events of one thread function, from the trace. */
struct helpers_seen {
	int	helpers;	/* events */
	int	on_node;	/* of those, bound to the node asked about */
	int	unbound;	/* of those, bound to none */
	int	chunks;		/* the helpers took */
	int	foreign;	/* of another process (trace_record_tgid()) */
};

/* One run of the self-benchmark, as /sys/kernel/debug/ktask/bench says. */
struct bench_result {
	char			line[512];	/* the whole result line */
	int			used;		/* threads that ran a chunk */
	unsigned long long	wall_ns;
	unsigned long long	cpu_ns;		/* in thread functions */
	unsigned long long	job_cpu_ns;	/* all of the job's threads */
	unsigned long long	sum;		/* the cpu job's, 0 if none */
	/* the caller's threads in its start function ("start" callers) */
	int			start_threads;
	/* nodes other than the caller's its helpers were bound to ("numa") */
	int			away;
	/* CPUs its helpers were allowed on, if helper_cpus_ok (readable) */
	struct cpus		helper_cpus;
	int			helper_cpus_ok;
};

/* sys.c */
int write_str(const char *path, const char *s);
int read_line(const char *path, char *buf, size_t size);
long long read_num(const char *path);
long long read_key(const char *path, const char *key, char sep);
unsigned long long now_ns(void);
long long self_cpu_ns(void);
int cap_set(unsigned int cap, int effective, int permitted);
int mknod_from(const char *path, const char *sysfs_dev, mode_t type);
int count_nodes(void);
int cpulist_parse(const char *list, struct cpus *set);
int cpus_empty(const struct cpus *set);
int cpus_intersect(const struct cpus *a, const struct cpus *b);
int run_on_cpus(const struct cpus *set);
long long free_kb(void);
long long free_slack_kb(long long plain_kb);
int ksym_range(const char *name, unsigned long long *start,
	       unsigned long long *end);
int trace_clear_in(const char *dir);
int trace_clear(void);
void trace_start(void);
void trace_stop(void);
void trace_start_helpers(void);
int trace_stop_helpers(const char *match);
void trace_start_planned(void);
int trace_threads(const char *match);
int trace_planned(const char *match);
long long trace_most(const char *event, const char *match, const char *key,
		     int *count);
void trace_record_tgid(int on);
void trace_helpers(const char *func, int nid, struct helpers_seen *seen);
int ktask_threads_set(int threads);
int ktask_mem_threads_set(int threads);
int bench_run(const char *job, int threads, struct bench_result *res);
int bench_run_as(const char *job, int threads, const char *caller,
		 struct bench_result *res);
void in_child(void (*fn)(int), int arg, const char *const *names);
int cgroup_make(const char *controller, const char *dir);
int cgroup_attach(const char *dir);
int cgroup_enter(const char *controller, const char *dir);
int cgroup_join_cpu_max(const char *dir, int pct, int period_us);
void wait_load_settle(void);
int retry_until(const char *name, const char *why,
		int (*attempt)(void *ctx), void *ctx);
int retry_for_helpers(const char *name, int (*attempt)(void *ctx), void *ctx);
int bench_run_helped(const char *name, int threads, int want,
		     struct bench_result *res);

/*
 * ktap.c: the boot's results.  init.c starts the output and a suite per
 * entry of its table; a suite plans its tests first (ktap_plan()), then
 * reports each exactly once: ok or not (report()), skipped
 * (report_skip()), or, when a setup they share failed, all of a list
 * (report_setup_failed()).
 */
int ktap_start(int suites);
void ktap_suite_begin(const char *name);
void ktap_plan(int tests);
void ktap_suite_end(const char *name);
int ktap_reported(void);
void ktap_end(void);
void report(int ok, const char *name, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
void report_skip(const char *name, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
void report_setup_failed(const char *const *names, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
void ktap_diag(const char *fmt, ...)
	__attribute__((format(printf, 1, 2)));

#endif
