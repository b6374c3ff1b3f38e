// SPDX-License-Identifier: GPL-2.0
/*
 * The tests of ktask's mm callers seen from user space: hugetlbfs
 * fallocate(), 1 GiB pages and deferred struct page init.  They compare
 * what the kernel leaves (page contents, pool counters, file blocks,
 * memory totals) when ktask runs a job serially (max_threads=1) and with
 * helpers, and where fallocate()'s pages land (placement.c).  MODE=
 * meminfo prints, as "ktask-meminfo:" and "ktask-klog:" lines for the
 * host, the memory deferred init left and its times.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/klog.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "lib.h"
#include "huge.h"
#include "placement.h"
#include "suites.h"

/* Nodes whose deferred init jobs test_deferred_init() counts. */
#define MAX_NODES	64

/* Leave @len bytes of the pool dirty: what fallocate gets must be zeroed. */
static int dirty_pages(const char *dir, unsigned long len)
{
	char path[64];
	void *p;
	int fd;

	snprintf(path, sizeof(path), "%s/dirty", dir);
	fd = open(path, O_CREAT | O_RDWR, 0600);
	if (fd < 0)
		return -errno;
	p = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	close(fd);
	if (p == MAP_FAILED)
		return -errno;
	memset(p, 0xa5, len);
	munmap(p, len);
	return unlink(path) ? -errno : 0;
}

static void print_falloc(const char *name, const char *label,
			 const struct falloc_result *r)
{
	ktap_diag("%s %s errno=%d threads=%d zero=%d size=%lld blocks=%lld total=%lld free=%lld rsvd=%lld surp=%lld",
		  name, label, r->err, r->threads, r->zero, r->size, r->blocks,
		  r->pool.total, r->pool.free, r->pool.rsvd, r->pool.surp);
}

static int falloc_same(const struct falloc_result *a,
		       const struct falloc_result *b)
{
	return a->err == b->err && a->zero && b->zero && a->size == b->size &&
	       a->blocks == b->blocks && pool_equal(&a->pool, &b->pool);
}

/*
 * fallocate() of @pages pages of @size serially, then with helpers from
 * a dirty pool: the pages read as zeros, and the file and the pool end
 * the same.  With more than one vCPU the second run must use helpers.
 */
static void test_falloc(const char *name, unsigned long size, long pages,
			int vcpus)
{
	const char *dir = huge_mount(size);
	struct falloc_result serial, threaded;
	unsigned long len = pages * size;
	int ok;

	/* The serial run is the reference: only the other one is read. */
	if (!dir || falloc_run(dir, size, len, 1, 0, 0, &serial) ||
	    dirty_pages(dir, len) ||
	    falloc_run(dir, size, len, 0, 1, 0, &threaded)) {
		report(0, name, "setup failed: %s", strerror(errno));
		return;
	}
	print_falloc(name, "serial", &serial);
	print_falloc(name, "threaded", &threaded);
	ok = !serial.err && serial.threads == 1 && threaded.zero &&
	     falloc_same(&serial, &threaded) &&
	     (vcpus < 2 || threaded.threads >= 2);
	report(ok, name, "%ld pages of %lu MiB: threads %d and %d, zeroed, same blocks and pool (free %lld)",
	       pages, size >> 20, serial.threads, threaded.threads,
	       threaded.pool.free);
}

/*
 * fallocate() of 2 MiB pages is a memory-bound job: at ktask.mem_threads=1
 * it runs alone, and at 2 on two threads at most, with ktask.max_threads
 * at 0 (falloc_2m runs the same call on two or more threads then).
 */
static void test_falloc_mem_threads(void)
{
	const char *name = "falloc_mem_threads", *dir = huge_mount(SZ_2M);
	unsigned long len = huge_free(SZ_2M) * 3 / 4 * SZ_2M;
	struct falloc_result one, two;

	if (!dir || ktask_mem_threads_set(1) ||
	    falloc_run(dir, SZ_2M, len, 0, 0, 0, &one) ||
	    ktask_mem_threads_set(2) ||
	    falloc_run(dir, SZ_2M, len, 0, 0, 0, &two)) {
		report(0, name, "setup failed: %s", strerror(errno));
		return;
	}
	print_falloc(name, "mem_threads=1", &one);
	print_falloc(name, "mem_threads=2", &two);
	report(!one.err && !two.err && one.threads == 1 &&
	       two.threads >= 1 && two.threads <= 2, name,
	       "fallocate() of %lu MiB: %d thread(s) at ktask.mem_threads=1, %d at 2",
	       len >> 20, one.threads, two.threads);
}

/* struct sched_attr of sched_setattr(2), which glibc does not declare. */
struct dl_attr {
	uint32_t	size, policy;
	uint64_t	flags;
	int32_t		nice;
	uint32_t	priority;
	uint64_t	runtime, deadline, period;	/* ns */
};

static const char *const deadline_names[] = { "falloc_deadline", NULL };
/* In huge_mount(SZ_2M), for the parent to remove if the child dies. */
#define DEADLINE_FILE	"/mnt/huge-2M/deadline"

/*
 * A SCHED_DEADLINE caller cannot fork (sched_fork() refuses a deadline
 * task), so its fallocate() plans one thread and runs alone, rather than
 * plan helpers and fail a fork for each.  Its runtime is most of each
 * period, so throttling slows it little.
 */
static void falloc_deadline_child(int unused)
{
	const char *name = deadline_names[0], *dir = huge_mount(SZ_2M);
	unsigned long len = huge_free(SZ_2M) * 3 / 4 * SZ_2M;
	struct dl_attr attr = {
		.size		= sizeof(attr),
		.policy		= 6,		/* SCHED_DEADLINE */
		.runtime	= 90 * 1000 * 1000,
		.deadline	= 100 * 1000 * 1000,
		.period		= 100 * 1000 * 1000,
	};
	int fd, err, planned, threads;

	if (!dir || ktask_threads_set(0) ||
	    syscall(SYS_sched_setattr, 0, &attr, 0) ||
	    (fd = open(DEADLINE_FILE, O_CREAT | O_TRUNC | O_RDWR, 0600)) < 0) {
		report(0, name, "setup failed: %s", strerror(errno));
		return;
	}
	trace_start_planned();
	err = fallocate(fd, 0, 0, len) ? errno : 0;
	threads = trace_threads(FALLOC_FUNC);
	planned = trace_planned(FALLOC_FUNC);
	close(fd);
	unlink(DEADLINE_FILE);
	report(!err && planned == 1 && threads == 1, name,
	       "fallocate() of %lu MiB by a SCHED_DEADLINE task: errno %d, %d thread(s) planned, %d ran (want 1 and 1)",
	       len >> 20, err, planned, threads);
}

/*
 * fallocate() past the size limit of a hugetlbfs mount (its subpool)
 * fails as the serial code does: the same error, file size and blocks,
 * the same pool counters, and the pages before the failure all there (a
 * KEEP_SIZE fallocate() of them needs no page).  Twice the limit is
 * asked: a call the mount cannot cover does not run on several threads
 * (a reservation of the whole range would fail), so it fails where the
 * serial loop does, and no page it added has to be taken out again.
 */
static void test_falloc_enospc(void)
{
	const char *name = "falloc_enospc", *dir = "/mnt/huge-limited";
	struct falloc_result r[2];
	struct pool before;
	char opts[64];
	long limit;
	int i;

	pool_read(SZ_2M, &before);
	limit = before.free / 2;
	if (huge_mount_limited(dir, limit, opts, sizeof(opts))) {
		report(0, name, "cannot mount %s (%s): %s", dir, opts, strerror(errno));
		return;
	}
	for (i = 0; i < 2; i++)
		if (falloc_run(dir, SZ_2M, 2 * limit * SZ_2M, i ? 0 : 1, 0,
			       limit * SZ_2M, &r[i])) {
			report(0, name, "setup failed: %s", strerror(errno));
			umount(dir);
			return;
		}
	umount(dir);
	print_falloc(name, "serial", &r[0]);
	print_falloc(name, "threaded", &r[1]);
	report(r[0].err == ENOSPC && falloc_same(&r[0], &r[1]) &&
	       r[1].pool.free == before.free - limit && r[0].prefix_ok &&
	       r[1].prefix_ok && r[1].threads <= 1, name,
	       "%ld pages asked of a %ld-page mount: errno %d and %d, threads %d and %d (-1: no job), blocks %lld and %lld, free %lld, first %ld pages there: %d %d",
	       2 * limit, limit, r[0].err, r[1].err, r[0].threads, r[1].threads,
	       r[0].blocks, r[1].blocks, r[1].pool.free, limit, r[0].prefix_ok,
	       r[1].prefix_ok);
}

/* What a fallocate() over a reserved range left, and the helpers it had. */
struct falloc_reserved_result {
	struct falloc_result	r;
	int			helpers;	/* ktask_helper_end events */
	int			kept;		/* the page written first kept it */
};

/*
 * Map @pages pages of a new file in @dir MAP_SHARED, which reserves them,
 * write to the first, then fallocate() the range with ktask.max_threads
 * at @threads.  The mapping goes, and the file, once the result is read.
 */
static int falloc_reserved_run(const char *dir, long pages, int threads,
			       struct falloc_reserved_result *res)
{
	unsigned long len = pages * SZ_2M;
	struct helpers_seen seen;
	char path[64];
	struct stat st;
	char *map;
	int fd;

	memset(res, 0, sizeof(*res));
	snprintf(path, sizeof(path), "%s/reserved", dir);
	fd = open(path, O_CREAT | O_TRUNC | O_RDWR, 0600);
	if (fd < 0 || ktask_threads_set(threads) || ftruncate(fd, len))
		goto fail;
	map = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	if (map == MAP_FAILED)
		goto fail;
	memset(map, 0x5a, SZ_2M);
	trace_start_helpers();
	res->r.err = fallocate(fd, 0, 0, len) ? errno : 0;
	res->r.threads = trace_stop_helpers(FALLOC_FUNC);
	trace_helpers(FALLOC_FUNC, -1, &seen);
	res->helpers = seen.helpers;
	res->kept = map[0] == 0x5a && map[SZ_2M - 1] == 0x5a;
	pool_read(SZ_2M, &res->r.pool);
	fstat(fd, &st);
	res->r.size = st.st_size;
	res->r.blocks = st.st_blocks;
	res->r.zero = 1;
	munmap(map, len);
	close(fd);
	return unlink(path) ? -errno : 0;
fail:
	if (fd >= 0)
		close(fd);
	unlink(path);
	return -errno;
}

/*
 * fallocate() of a range that a MAP_SHARED mapping has reserved runs the
 * serial loop, as a range with pages or reservations always does (see
 * hugetlbfs_falloc_start()), and knows it before it forks: not one helper
 * may be started for the call.  The range is large enough for two
 * threads and the free pool holds it besides its reservation, so only
 * the reservation keeps it serial.  The file, the pool and the page written before the call end
 * as after the serial run.
 */
static void test_falloc_reserved(void)
{
	const char *name = "falloc_reserved", *dir = huge_mount(SZ_2M);
	struct falloc_reserved_result serial, threaded;
	/* Two memory chunks (KTASK_MEM_CHUNK), what a helper wants. */
	long pages = 2 * (128L << 20) / SZ_2M;

	if (huge_free(SZ_2M) < 2 * pages) {
		report(0, name, "needs %ld free 2 MiB pages, has %lld",
		       2 * pages, huge_free(SZ_2M));
		return;
	}
	if (!dir || falloc_reserved_run(dir, pages, 1, &serial) ||
	    falloc_reserved_run(dir, pages, 0, &threaded)) {
		report(0, name, "setup failed: %s", strerror(errno));
		return;
	}
	print_falloc(name, "serial", &serial.r);
	print_falloc(name, "threaded", &threaded.r);
	report(!serial.r.err && falloc_same(&serial.r, &threaded.r) &&
	       serial.kept && threaded.kept && !threaded.helpers, name,
	       "%ld reserved pages: errno %d and %d, %d helpers started (want 0), job threads %d and %d, blocks %lld and %lld, free %lld and %lld, written page kept: %d %d",
	       pages, serial.r.err, threaded.r.err, threaded.helpers,
	       serial.r.threads, threaded.r.threads, serial.r.blocks,
	       threaded.r.blocks, serial.r.pool.free, threaded.r.pool.free,
	       serial.kept, threaded.kept);
}

/*
 * A 1 GiB page, dirtied and freed, reads as zeros when touched again, and
 * the fault cleared it in the faulting thread alone: the fault holds
 * mmap_lock, so a user task's job there cannot fork its helpers, and a
 * worker would do its work outside the task's cgroups (guarantees.c
 * measures that).
 */
static void test_gigantic_touch(int vcpus)
{
	const char *name = "gigantic_first_touch", *dir = huge_mount(SZ_1G);
	struct placement where = { .node = -1 };
	struct pool before, after;
	long long wall_ns;
	int zero = -1, threads = 0;

	pool_read(SZ_1G, &before);
	if (!dir || before.free < 1 || dirty_pages(dir, SZ_1G)) {
		report(0, name, "no 1 GiB page (free %lld): %s", before.free,
		       strerror(errno));
		return;
	}
	zero = touch_gigantic(dir, 1, &threads, &wall_ns, &where);
	pool_read(SZ_1G, &after);
	report(zero == 1 && pool_equal(&before, &after) && threads == 1 &&
	       where.node >= 0 && !where.seen.helpers, name,
	       "zero=%d, cleared by %d threads, free %lld then %lld, page on node %d, %d helpers",
	       zero, threads, before.free, after.free, where.node,
	       where.seen.helpers);
}

/*
 * Deferred struct page init at boot ran through ktask: its jobs are in
 * the trace (trace_event=ktask:ktask_job_end on the command line).  Each
 * node's pgdatinit thread runs one job, however many memblock ranges its
 * memory is cut into (the boot-time 1 GiB pages cut it), with helpers
 * when the node has several CPUs.
 */
static void test_deferred_init(int vcpus, int nodes)
{
	int want = vcpus / (nodes ? nodes : 1) >= 2 ? 2 : 1, threads;
	int jobs[MAX_NODES] = { 0 }, nid, most = 0, seen = 0;
	char line[512], *at;
	FILE *f = fopen(TRACE "trace", "r");

	while (f && fgets(line, sizeof(line), f)) {
		if (!strstr(line, "ktask_job_end:"))
			continue;
		/* Every boot-time job, for the log. */
		ktap_diag("boot job %s", line);
		at = strstr(line, "pgdatinit");
		if (!at || !strstr(line, "func=deferred_init_memmap_job"))
			continue;
		nid = atoi(at + 9);
		if (nid < 0 || nid >= MAX_NODES)
			continue;
		seen += !jobs[nid]++;
		most = jobs[nid] > most ? jobs[nid] : most;
	}
	if (f)
		fclose(f);
	/* Deferred init's jobs are those of the pgdatinit threads. */
	threads = trace_threads("pgdatinit");

	report(threads >= want && seen == nodes && most == 1, "deferred_init",
	       "nodes with a job %d of %d, most jobs of a node %d (want 1), most threads of a job %d (want >= %d)",
	       seen, nodes, most, threads, want);
}

/*
 * What deferred init and the boot-time hugetlb jobs leave, for
 * scripts/test.sh to compare between a boot with helpers and one with
 * ktask.max_threads=1 (and with what the memoryless-node boot asked for):
 * the totals, each zone's present and managed pages, and the 1 GiB pages
 * gathered into the pool.
 */
static void print_meminfo(void)
{
	char line[256], zone[256] = "";
	struct pool gigantic;
	long long v;
	FILE *f;

	pool_read(SZ_1G, &gigantic);
	printf("ktask-meminfo: MemTotal %lld kB\n",
	       read_key("/proc/meminfo", "MemTotal", ':'));
	printf("ktask-meminfo: 1G pool %lld pages\n", gigantic.total);
	/* Not compared: what boot has allocated by now varies a little. */
	printf("ktask-memfree: MemFree %lld kB\n",
	       read_key("/proc/meminfo", "MemFree", ':'));
	f = fopen("/proc/zoneinfo", "r");
	while (f && fgets(line, sizeof(line), f)) {
		if (!strncmp(line, "Node ", 5)) {
			line[strcspn(line, "\n")] = 0;
			snprintf(zone, sizeof(zone), "%s", line);
		} else if (sscanf(line, " present %lld", &v) == 1) {
			printf("ktask-meminfo: %s present %lld\n", zone, v);
		} else if (sscanf(line, " managed %lld", &v) == 1) {
			printf("ktask-meminfo: %s managed %lld\n", zone, v);
		}
	}
	if (f)
		fclose(f);
}

/*
 * The kernel log lines of deferred init and of the boot-time hugetlb
 * pools, prefixed "ktask-klog: ": how long each node's deferred init took
 * ("node 1 deferred pages initialised in 312ms"), and any pool shortfall;
 * then how many threads deferred init planned and used, from the boot's
 * trace.
 */
static void print_boot_log(void)
{
	static char buf[1 << 20];
	char *line, *save;
	int len;

	len = klogctl(3 /* SYSLOG_ACTION_READ_ALL */, buf, sizeof(buf) - 1);
	if (len < 0) {
		printf("ktask-klog: error %s\n", strerror(errno));
		return;
	}
	buf[len] = 0;
	for (line = strtok_r(buf, "\n", &save); line;
	     line = strtok_r(NULL, "\n", &save))
		if (strstr(line, "deferred pages initialised") ||
		    strstr(line, "HugeTLB"))
			printf("ktask-klog: %s\n", line);
	/* With ktask, the most threads a node's deferred init job used. */
	len = trace_planned("pgdatinit");
	if (len > 0)
		printf("ktask-klog: deferred_init_planned=%d\n", len);
	len = trace_threads("pgdatinit");
	if (len > 0)
		printf("ktask-klog: deferred_init_threads=%d\n", len);
}

static int place_fd = -1;

/*
 * fallocate() @len bytes of a new file, mapped at *@mem; the file's pages
 * come from the task policy (fallocate() has no VMA).
 */
static int falloc_fill(unsigned long len, const struct mbind_req *vma,
		       void **mem)
{
	const char *dir = huge_mount(SZ_2M);
	char path[64];
	int err;

	(void)vma;
	if (!dir)
		return errno;
	snprintf(path, sizeof(path), "%s/place", dir);
	place_fd = open(path, O_CREAT | O_TRUNC | O_RDWR, 0600);
	if (place_fd < 0 || fallocate(place_fd, 0, 0, len))
		goto fail;
	*mem = mmap(NULL, len, PROT_READ, MAP_SHARED, place_fd, 0);
	if (*mem != MAP_FAILED)
		return 0;
fail:
	err = errno;
	if (place_fd >= 0)
		close(place_fd);
	place_fd = -1;
	unlink(path);
	return err;
}

static void falloc_release(void *mem, unsigned long len)
{
	char path[64];

	munmap(mem, len);
	close(place_fd);
	place_fd = -1;
	snprintf(path, sizeof(path), "%s/place", huge_mount(SZ_2M));
	unlink(path);
}

static const struct placer falloc_placer = {
	.name		= "falloc_placement",
	.func		= FALLOC_FUNC,
	.fill		= falloc_fill,
	.release	= falloc_release,
};

/*
 * Where fallocate()'s pages land under each memory policy: two chunks of
 * 2 MiB pages, one for the caller, one for a helper.  Also MODE=placement,
 * for the memoryless-node boot.
 */
void run_falloc_placement(const struct boot *b)
{
	ktap_plan(placement_tests(&falloc_placer));
	test_placement(&falloc_placer, 256UL << 20, b->vcpus);
	ktask_threads_set(0);
}

/* The fallocate() tests of 2 MiB pages: make test's, and MODE=falloc's. */
void run_falloc_tests(const struct boot *b)
{
	ktap_plan(5);
	test_falloc("falloc_2m", SZ_2M, huge_free(SZ_2M) * 3 / 4, b->vcpus);
	test_falloc_mem_threads();
	ktask_mem_threads_set(0);
	in_child(falloc_deadline_child, 0, deadline_names);
	/* Its file, if the child died before it removed it. */
	unlink(DEADLINE_FILE);
	test_falloc_enospc();
	test_falloc_reserved();
	ktask_threads_set(0);
}

/* First in make test: it reads the events of boot-time jobs. */
void run_deferred_init_tests(const struct boot *b)
{
	ktap_plan(1);
	test_deferred_init(b->vcpus, count_nodes());
}

/* fallocate() of 1 GiB pages and their first touch. */
void run_gigantic_tests(const struct boot *b)
{
	int vcpus = b->vcpus;
	struct pool p;

	ktap_plan(2);
	pool_read(SZ_1G, &p);
	if (p.free >= 2)
		test_falloc("falloc_1g", SZ_1G, 2, vcpus);
	else
		report_skip("falloc_1g", "%lld free pages of 1 GiB, want 2",
			    p.free);
	test_gigantic_touch(vcpus);
	ktask_threads_set(0);
}

/* MODE=meminfo: deferred init's times and the memory it left, as data. */
void run_meminfo(const struct boot *b)
{
	print_boot_log();
	print_meminfo();
}
