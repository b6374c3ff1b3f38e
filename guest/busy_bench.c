// SPDX-License-Identifier: GPL-2.0
/*
 * The busy benchmark (mode "busy", and the end of mode "mm"): ktask's real
 * callers on a machine with no CPU to spare, where a job must take no
 * longer, and cost no more CPU time, than the serial code does.  Three
 * loads:
 *
 *	_busy	a nice-0 CPU hog pinned to every vCPU (hogs.c), beside this
 *		process at nice 0;
 *	_late	the same hogs, started once the call has a helper: a job
 *		that found every vCPU idle, and then has its helpers on busy
 *		ones (only the callers with helpers in this process; the
 *		unpatched kernel and one thread, which have none, get their
 *		hogs at once);
 *	_cpumax	a child process alone in a cgroup at cpu.max BUSY_QUOTA_PCT%
 *		of one CPU.
 *
 * The callers: fallocate() of BUSY_FALLOC bytes of 2 MiB pages, the first
 * touch of a 1 GiB page and VFIO_IOMMU_MAP_DMA of BUSY_MAP bytes of fresh
 * anonymous memory.  One line per run, read with mm_bench.c's:
 *
 *	ktask-mm: bench=falloc_busy threads=2 used=2 bytes=... wall_ns=...
 *		cpu_ns=...
 *
 * cpu_ns is what the call cost: for _busy and _late the CPU time of this
 * process over the call (getrusage(), whose RUSAGE_SELF includes the
 * threads that ended, as ktask's helpers have by the time a call returns),
 * for _cpumax the growth of the cgroup's usage_usec.  The unpatched
 * kernel runs its serial code at every thread count too, "threads" then
 * naming only the place in the boot, so that both kernels make the same
 * calls in the same order (busy_order()).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include "lib.h"
#include "hogs.h"
#include "huge.h"
#include "suites.h"
#include "vfio_dev.h"

#define BUSY_FALLOC	(512UL << 20)
#define BUSY_MAP	(512UL << 20)
#define BUSY_QUOTA_PCT	20
#define BUSY_CG		CGROOT "/ktask-busy"

/* One caller, once: its size, threads used, wall and CPU time. */
struct busy_call {
	unsigned long	bytes;
	int		used;
	long long	wall_ns;
};

/* The callers; each returns 0, or -1 with errno set. */
static int call_falloc(int threads, struct busy_call *c)
{
	const char *dir = huge_mount(SZ_2M);
	struct falloc_result r;

	c->bytes = BUSY_FALLOC;
	if (!dir || falloc_run(dir, SZ_2M, c->bytes, threads, 0, 0, &r))
		return -1;
	errno = r.err;
	c->used = r.threads;
	c->wall_ns = r.wall_ns;
	return r.err ? -1 : 0;
}

static int call_touch(int threads, struct busy_call *c)
{
	const char *dir = huge_mount(SZ_1G);

	c->bytes = SZ_1G;
	if (threads >= 0 && ktask_threads_set(threads))
		return -1;
	if (!dir || touch_gigantic(dir, 0, &c->used, &c->wall_ns, NULL) < 0)
		return -1;
	return 0;
}

static int call_map(int threads, struct busy_call *c)
{
	unsigned char *buf;
	struct map_result r;
	int ret;

	c->bytes = BUSY_MAP;
	ret = vfio_open();
	if (ret) {
		errno = -ret;
		return -1;
	}
	buf = mmap(NULL, c->bytes, PROT_READ | PROT_WRITE,
		   MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (buf == MAP_FAILED)
		return -1;
	ret = map_run(buf, c->bytes, threads, 0, NULL, &r);
	munmap(buf, c->bytes);
	if (ret || r.err || r.unmapped != (long long)c->bytes) {
		errno = r.err ? r.err : EIO;
		return -1;
	}
	c->used = r.threads;
	c->wall_ns = r.wall_ns;
	return 0;
}

/*
 * func: the thread function of a job whose helpers are threads of this
 * process; NULL if the call has none (the 1 GiB page is zeroed serially).
 */
static const struct busy_caller {
	const char	*name;
	int		(*call)(int threads, struct busy_call *c);
	const char	*func;
} callers[] = {
	{ "falloc", call_falloc, FALLOC_FUNC },
	{ "touch_1g", call_touch, NULL },
	{ "vfio_map", call_map, VFIO_MAP_FUNC },
};

static long long cgroup_usage_ns(void)
{
	return read_key(BUSY_CG "/cpu.stat", "usage_usec", ' ') * 1000;
}

/*
 * Run @caller at ktask.max_threads=@threads (on the unpatched kernel,
 * which has no such knob, as the serial code) as benchmark NAME_@load,
 * its cost read with @cpu_ns.  With @hogs, they must have run by the end
 * of the call.
 */
static void busy_one(const struct busy_caller *caller, const char *load,
		     int threads, int patched, long long (*cpu_ns)(void),
		     struct hogs *hogs)
{
	struct busy_call c = { 0 };
	long long cpu = cpu_ns();
	int ret = caller->call(patched ? threads : -1, &c);

	cpu = cpu_ns() - cpu;
	if (!ret && hogs && !hogs_count(hogs)) {
		ret = -1;
		errno = ESRCH;
	}
	if (ret) {
		printf("ktask-mm: error bench=%s_%s threads=%d errno=%d (%s)\n",
		       caller->name, load, threads, errno, strerror(errno));
		return;
	}
	printf("ktask-mm: bench=%s_%s threads=%d used=%d bytes=%lu wall_ns=%lld cpu_ns=%lld\n",
	       caller->name, load, threads, patched ? c.used : 1, c.bytes,
	       c.wall_ns, cpu);
}

/* Each caller beside a nice-0 hog on every vCPU. */
static void busy_hogs(const struct boot *b, int threads, int patched)
{
	static struct hogs h;
	size_t i;

	if ((!h.counters && hogs_init(&h)) ||
	    hogs_start(&h, b->vcpus, b->vcpus)) {
		printf("ktask-mm: error bench=busy threads=%d hogs: %s\n",
		       threads, strerror(errno));
		hogs_stop(&h);
		return;
	}
	for (i = 0; i < ARRAY_SIZE(callers); i++)
		busy_one(&callers[i], "busy", threads, patched, self_cpu_ns,
			 &h);
	hogs_stop(&h);
}

/*
 * Each caller with helpers in this process beside a nice-0 hog on every
 * vCPU that starts once the call has a helper (at once without one).  A
 * call whose hogs never ran planned no helper: it ran on an idle machine,
 * which is no run of this load.
 */
static void busy_late(const struct boot *b, int threads, int patched)
{
	static struct hogs h;
	int late = patched && threads != 1;
	size_t i;

	if (!h.counters && hogs_init(&h))
		goto fail;
	for (i = 0; i < ARRAY_SIZE(callers); i++) {
		if (!callers[i].func)
			continue;
		if (hogs_start_late(&h, b->vcpus, b->vcpus,
				    late ? callers[i].func : NULL))
			goto fail;
		busy_one(&callers[i], "late", threads, patched, self_cpu_ns,
			 &h);
		hogs_stop(&h);
	}
	return;
fail:
	printf("ktask-mm: error bench=late threads=%d hogs: %s\n", threads,
	       strerror(errno));
	hogs_stop(&h);
}

/* Each caller from a child alone in a cgroup at cpu.max. */
static void busy_cpumax(int threads, int patched)
{
	pid_t child;
	size_t i;
	int ret;

	fflush(stdout);
	child = fork();
	if (!child) {
		ret = cgroup_join_cpu_max(BUSY_CG, BUSY_QUOTA_PCT, 100000);
		if (ret) {
			printf("ktask-mm: error bench=cpumax threads=%d cgroup: %s\n",
			       threads, strerror(-ret));
			_exit(1);
		}
		for (i = 0; i < ARRAY_SIZE(callers); i++)
			busy_one(&callers[i], "cpumax", threads, patched,
				 cgroup_usage_ns, NULL);
		fflush(stdout);
		_exit(0);
	}
	if (child > 0)
		waitpid(child, NULL, 0);
	rmdir(BUSY_CG);
}

/*
 * The boot's thread counts in the order its round gives (ktask_order=down
 * on the kernel command line: the other way): a call's time depends on
 * its place in the boot (in one run, with 2 threads always after 1,
 * vfio_map_busy was slower at 2 in every boot with no helper at either),
 * so a fixed order would read as a cost of the thread count, and an
 * order drawn per boot leaves one count first in 4 or 5 of 5 boots more
 * than a third of the time.  make run gives both kernels of a round the
 * same order and alternates it from round to round, so that each count
 * of one kernel is measured in the same places as the same count of the
 * other.  Printed, for the reader.
 */
static void busy_order(const struct boot *b, int *order)
{
	const char *env = getenv("ktask_order");
	int down = env && !strcmp(env, "down");
	int i;

	for (i = 0; i < b->nthreads; i++)
		order[i] = b->threads[down ? b->nthreads - 1 - i : i];
	for (i = 0; i < b->nthreads; i++)
		ktap_diag("busy: thread count %d runs %d of %d", order[i],
			  i + 1, b->nthreads);
}

void run_busy_bench(const struct boot *b)
{
	int patched = !access(KNOB_THREADS, W_OK);
	int order[MAX_THREADS];
	int r, i;

	busy_order(b, order);
	for (r = 0; r < b->repeat; r++) {
		for (i = 0; i < b->nthreads; i++) {
			busy_hogs(b, order[i], patched);
			busy_late(b, order[i], patched);
			busy_cpumax(order[i], patched);
		}
	}
	if (patched)
		ktask_threads_set(0);
}
