/* SPDX-License-Identifier: GPL-2.0 */
/*
 * What the parts of the guest's PID 1 share: init.c (the entry point and
 * the benchmark), contention.c (jobs beside CPU hogs), selftest.c (the
 * in-guest tests of make test), hugetlb.c, falloc_race.c and vfio.c
 * (ktask's callers), placement.c (where the callers' memory lands) and
 * faults.c (fault injection and leaks, on make test's debug kernel).
 */
#ifndef KTASK_GUEST_H
#define KTASK_GUEST_H

#include <stddef.h>

#define BENCH		"/sys/kernel/debug/ktask/bench"
#define KNOB_THREADS	"/sys/module/ktask/parameters/max_threads"
#define KNOB_LENDING	"/sys/module/ktask/parameters/priority_lending"
#define CGROOT		"/sys/fs/cgroup"
#define TRACE		"/sys/kernel/tracing/"
#define HELPER_END	TRACE "events/ktask/ktask_helper_end/enable"
/*
 * Runs of a test that wants a helper to have taken a chunk, before it
 * fails: a helper whose vCPU the host does not run in time gets none.
 */
#define HELPER_TRIES	3

/* The ktask_helper_end events of one thread function, from the trace. */
struct helpers_seen {
	int	helpers;	/* events */
	int	on_node;	/* of those, bound to the node asked about */
	int	unbound;	/* of those, bound to none */
	int	chunks;		/* the helpers took */
};

/* One run of the self-benchmark, as /sys/kernel/debug/ktask/bench says. */
struct bench_result {
	char			line[256];	/* the whole result line */
	int			used;		/* threads that ran a chunk */
	unsigned long long	wall_ns;
	unsigned long long	cpu_ns;		/* in thread functions */
	unsigned long long	job_cpu_ns;	/* all of the job's threads */
	unsigned long long	sum;		/* the cpu job's, 0 if none */
};

#define ARRAY_SIZE(a)	(sizeof(a) / sizeof((a)[0]))

/* Huge page sizes: the 2 MiB and 1 GiB pools. */
#define SZ_2M		(2UL << 20)
#define SZ_1G		(1UL << 30)

/* HugePages_Total/Free/Rsvd/Surp of one page size. */
struct pool {
	long long	total, free, rsvd, surp;
};

int write_str(const char *path, const char *s);
int read_line(const char *path, char *buf, size_t size);
int trace_clear(void);
void trace_start(void);
int trace_threads(const char *match);
void trace_helpers(const char *func, int nid, struct helpers_seen *seen);
long long read_key(const char *path, const char *key, char sep);
unsigned long long now_ns(void);
int ksym_range(const char *name, unsigned long long *start,
	       unsigned long long *end);
int bench_run(const char *job, int threads, struct bench_result *res);

int count_nodes(void);
int ktask_threads_set(int threads);
void report(int ok, const char *name, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
void in_child(void (*fn)(int), int arg);
int cgroup_make(const char *controller, const char *dir);

/* An mbind(2) of a range: no call if @mode is 0 (MPOL_DEFAULT). */
struct mbind_req {
	int		mode;
	unsigned long	nodes;		/* bit n: node n */
};

/* A ktask caller that fills fresh memory, for placement.c. */
struct placer {
	const char	*name;		/* the test's */
	const char	*func;		/* its job's thread function */
	int		vma_policy;	/* whether the memory's VMA policy counts */
	/*
	 * Fill @len bytes of fresh memory, at *@mem, under @vma's policy
	 * if the placer has VMA policies: 0 or an errno.
	 */
	int		(*fill)(unsigned long len, const struct mbind_req *vma,
				void **mem);
	void		(*release)(void *mem, unsigned long len);
};

int mbind_apply(void *mem, unsigned long len, const struct mbind_req *req);
void test_placement(const struct placer *pr, unsigned long len, int vcpus);

void run_contention(int vcpus, int repeat);
int busy_start(int vcpus);
void busy_stop(void);
void run_selftest(int vcpus);
void run_fault_selftest(int vcpus);
void run_kselftest_mode(void);
void run_kselftest_compare_mode(void);
void run_mm_tests(int vcpus, int nodes);
void run_falloc_tests(int vcpus);
void run_falloc_placement(int vcpus);
void print_meminfo(void);
void print_boot_log(void);
void run_mm_bench(const int *threads, int nthreads, int repeat,
		  int vcpus);
const char *huge_mount(unsigned long size);
int huge_mount_limited(const char *dir, long pages, char *opts, size_t size);
long long huge_free(unsigned long size);
void pool_read(unsigned long size, struct pool *p);
void run_falloc_race_tests(int vcpus);
void run_vfio_tests(int vcpus);
void bench_vfio_map(int threads, int patched);
void bench_vfio_map_busy(int threads, int patched, int vcpus);
void run_fault_tests(int vcpus);
void test_kmemleak(void);

#endif
