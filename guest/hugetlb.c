// SPDX-License-Identifier: GPL-2.0
/*
 * ktask's mm callers seen from user space: hugetlbfs fallocate(), 1 GiB
 * pages and deferred struct page init.  The tests of make test compare
 * what the kernel leaves (page contents, pool counters, file blocks,
 * memory totals) when ktask runs a job serially (max_threads=1) and with
 * helpers, and where fallocate()'s pages land (placement.c); make run
 * times fallocate() and the first touch of 1 GiB pages.
 *
 * The pools come from the kernel command line (scripts/run.sh):
 * hugepagesz=2M hugepages=N hugepagesz=1G hugepages=M.
 *
 * The benchmark (mode "mm") prints one line per run, for scripts/report.py:
 *
 *	ktask-mm: bench=falloc threads=2 used=2 bytes=4294967296 wall_ns=...
 *
 * for fallocate() of most of the 2 MiB pool, the first touch of a 1 GiB
 * page, and memset() of private memory by as many threads: the rate the
 * guest can write memory at, against which the other two are read.  On a
 * kernel without ktask (the unpatched one) only 1 thread runs.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/klog.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "guest.h"

/* Nodes whose deferred init jobs test_deferred_init() counts. */
#define MAX_NODES	64

#define JOB_END		TRACE "events/ktask/ktask_job_end/enable"

static long long read_num(const char *dir, const char *file)
{
	char path[256], buf[64];

	snprintf(path, sizeof(path), "%s/%s", dir, file);
	if (read_line(path, buf, sizeof(buf)))
		return -1;
	return atoll(buf);
}

void pool_read(unsigned long size, struct pool *p)
{
	char dir[128];

	snprintf(dir, sizeof(dir), "/sys/kernel/mm/hugepages/hugepages-%lukB",
		 size >> 10);
	p->total = read_num(dir, "nr_hugepages");
	p->free = read_num(dir, "free_hugepages");
	p->rsvd = read_num(dir, "resv_hugepages");
	p->surp = read_num(dir, "surplus_hugepages");
}

/* Free pages in the pool of @size pages. */
long long huge_free(unsigned long size)
{
	struct pool p;

	pool_read(size, &p);
	return p.free;
}

static int pool_equal(const struct pool *a, const struct pool *b)
{
	return a->total == b->total && a->free == b->free &&
	       a->rsvd == b->rsvd && a->surp == b->surp;
}

/*
 * Mount hugetlbfs with @size pages on /mnt/huge-@size, once (a second
 * mount would hide the first's files); the mount point.
 */
const char *huge_mount(unsigned long size)
{
	static char dirs[2][32];
	char *dir = dirs[size == SZ_1G];
	char opts[32];

	if (dir[0])
		return dir;
	snprintf(dir, sizeof(dirs[0]), "/mnt/huge-%luM", size >> 20);
	snprintf(opts, sizeof(opts), "pagesize=%luM", size >> 20);
	mkdir("/mnt", 0755);
	mkdir(dir, 0755);
	if (mount("none", dir, "hugetlbfs", 0, opts)) {
		dir[0] = '\0';
		return NULL;
	}
	return dir;
}

/*
 * Mount hugetlbfs of 2 MiB pages limited to @pages pages on @dir; its
 * options go to @opts, for the caller's messages.  0, or -1 with errno.
 */
int huge_mount_limited(const char *dir, long pages, char *opts, size_t size)
{
	snprintf(opts, size, "pagesize=2M,size=%lu", pages * SZ_2M);
	if (pages < 1) {
		errno = EINVAL;
		return -1;
	}
	mkdir("/mnt", 0755);
	mkdir(dir, 0755);
	if (mount("none", dir, "hugetlbfs", 0, opts) && errno != EBUSY)
		return -1;
	return 0;
}

int ktask_threads_set(int threads)
{
	char buf[16];

	snprintf(buf, sizeof(buf), "%d\n", threads);
	return write_str(KNOB_THREADS, buf);
}

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

/* Whether the first @len bytes of @fd read as zeros. */
static int reads_zero(int fd, unsigned long len)
{
	const unsigned long *p, *end;
	unsigned long acc = 0;
	void *map;

	map = mmap(NULL, len, PROT_READ, MAP_SHARED, fd, 0);
	if (map == MAP_FAILED)
		return 0;
	end = (const unsigned long *)((char *)map + len);
	for (p = map; p < end; p++)
		acc |= *p;
	munmap(map, len);
	return !acc;
}

/* Start recording ktask_job_end events, from an empty trace. */
void trace_start(void)
{
	trace_clear();
	write_str(JOB_END, "1\n");
}

/*
 * Most threads a job used in the events recorded so far whose line has
 * @match (the thread function, or the caller's name), or -1 if none has.
 */
int trace_threads(const char *match)
{
	char line[512], *at;
	int max = -1;
	FILE *f;

	write_str(JOB_END, "0\n");
	f = fopen(TRACE "trace", "r");
	while (f && fgets(line, sizeof(line), f)) {
		if (!strstr(line, "ktask_job_end:") || !strstr(line, match))
			continue;
		at = strstr(line, " threads=");
		if (at && atoi(at + 9) > max)
			max = atoi(at + 9);
	}
	if (f)
		fclose(f);
	return max;
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
		at = strstr(line, " chunks=");
		seen->chunks += at ? atoi(at + 8) : 0;
	}
	if (f)
		fclose(f);
}

/* What one fallocate() left behind, for comparing two runs. */
struct falloc_result {
	int		err;		/* errno, 0 on success */
	int		threads;	/* the job's threads, -1 if no job */
	int		zero;		/* the pages read as zeros */
	int		prefix_ok;	/* the first @prefix bytes were there */
	long long	size, blocks;	/* the file's st_size and st_blocks */
	struct pool	pool;		/* the pool right after */
	long long	wall_ns;
};

/*
 * fallocate() @len bytes of a new file in @dir with ktask.max_threads at
 * @threads (unless negative), then check what it left: @check_zero reads
 * every byte, and a KEEP_SIZE fallocate() of the first @prefix bytes,
 * which needs no page if they are all there, sets r->prefix_ok.  The file
 * is removed, which returns its pages to the pool.
 */
static int falloc_run(const char *dir, unsigned long size, unsigned long len,
		      int threads, int check_zero, unsigned long prefix,
		      struct falloc_result *r)
{
	char path[64];
	struct stat st;
	long long t0;
	int fd;

	memset(r, 0, sizeof(*r));
	/* No knob (@threads < 0) on a kernel without ktask. */
	if (threads >= 0 && ktask_threads_set(threads))
		return -errno;
	snprintf(path, sizeof(path), "%s/falloc", dir);
	fd = open(path, O_CREAT | O_TRUNC | O_RDWR, 0600);
	if (fd < 0)
		return -errno;
	trace_start();
	t0 = now_ns();
	r->err = fallocate(fd, 0, 0, len) ? errno : 0;
	r->wall_ns = now_ns() - t0;
	r->threads = trace_threads("hugetlbfs_falloc_chunk");
	pool_read(size, &r->pool);
	if (prefix)
		r->prefix_ok = !fallocate(fd, FALLOC_FL_KEEP_SIZE, 0, prefix);
	fstat(fd, &st);
	r->size = st.st_size;
	r->blocks = st.st_blocks;
	r->zero = !r->err && check_zero ? reads_zero(fd, len) : 1;
	close(fd);
	unlink(path);
	return 0;
}

static void print_falloc(const char *name, const char *label,
			 const struct falloc_result *r)
{
	printf("ktask-test: info %s %s errno=%d threads=%d zero=%d size=%lld blocks=%lld total=%lld free=%lld rsvd=%lld surp=%lld\n",
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
	trace_start();
	write_str(HELPER_END, "1\n");
	res->r.err = fallocate(fd, 0, 0, len) ? errno : 0;
	res->r.threads = trace_threads("hugetlbfs_falloc_chunk");
	write_str(HELPER_END, "0\n");
	trace_helpers("hugetlbfs_falloc_chunk", -1, &seen);
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

/* Where a page is, and where the helpers that cleared it were queued. */
struct placement {
	int			node;	/* the page's (move_pages(2)), or -1 */
	struct helpers_seen	seen;	/* on_node: bound to the page's node */
};

/* Fill @where for the page at @p, cleared by thread function @func. */
static void read_placement(void *p, const char *func, struct placement *where)
{
	if (syscall(SYS_move_pages, 0, 1UL, &p, NULL, &where->node, 0))
		where->node = -1;
	trace_helpers(func, where->node, &where->seen);
}

/*
 * Write a new 1 GiB file's first byte once, which zeroes its page in
 * the fault; how long that took, how many threads cleared it (-1 if no
 * job was seen), with @where (if not NULL) where the page and its
 * helpers were, and, with @check_zero, whether it reads as zeros (1
 * without).  -1 on error.
 */
static int touch_gigantic(const char *dir, int check_zero, int *threads,
			  long long *wall_ns, struct placement *where)
{
	volatile char *p;
	char path[64];
	int fd, zero;
	long long t0;

	snprintf(path, sizeof(path), "%s/touch", dir);
	fd = open(path, O_CREAT | O_TRUNC | O_RDWR, 0600);
	if (fd < 0 || ftruncate(fd, SZ_1G) ||
	    (p = mmap(NULL, SZ_1G, PROT_READ | PROT_WRITE, MAP_SHARED, fd,
		      0)) == MAP_FAILED) {
		if (fd >= 0)
			close(fd);
		unlink(path);
		return -1;
	}
	trace_start();
	if (where)
		write_str(HELPER_END, "1\n");
	t0 = now_ns();
	p[0] = 0;	/* a write fault that leaves the contents as they are */
	*wall_ns = now_ns() - t0;
	*threads = trace_threads("clear_gigantic_chunk");
	if (where) {
		write_str(HELPER_END, "0\n");
		read_placement((void *)p, "clear_gigantic_chunk", where);
	}
	zero = !check_zero || reads_zero(fd, SZ_1G);
	munmap((void *)p, SZ_1G);
	close(fd);
	unlink(path);
	return zero;
}

/*
 * A 1 GiB page, dirtied and freed, reads as zeros when touched again, and
 * the fault cleared it with ktask's workers, each queued on the page's
 * node.  Workers start when the workqueue gets to them, so the caller may
 * clear a page alone: up to HELPER_TRIES touches for one with helpers.
 */
static void test_gigantic_touch(int vcpus)
{
	const char *name = "gigantic_first_touch", *dir = huge_mount(SZ_1G);
	struct pool before, after;
	struct placement where;
	int zero, threads, tries = 1;
	long long wall_ns;

	pool_read(SZ_1G, &before);
	if (!dir || before.free < 1 || dirty_pages(dir, SZ_1G)) {
		report(0, name, "no 1 GiB page (free %lld): %s", before.free,
		       strerror(errno));
		return;
	}
	zero = touch_gigantic(dir, 1, &threads, &wall_ns, &where);
	while (vcpus > 1 && threads < 2 && tries < HELPER_TRIES) {
		touch_gigantic(dir, 0, &threads, &wall_ns, &where);
		tries++;
	}
	pool_read(SZ_1G, &after);
	report(zero == 1 && pool_equal(&before, &after) &&
	       (vcpus < 2 || threads >= 2) && where.node >= 0 &&
	       where.seen.on_node == where.seen.helpers, name,
	       "zero=%d, cleared by %d threads (touch %d), free %lld then %lld, page on node %d, %d of %d helpers bound to it",
	       zero, threads, tries, before.free, after.free, where.node,
	       where.seen.on_node, where.seen.helpers);
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
		printf("ktask-test: info boot job %s", line);
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
void print_meminfo(void)
{
	char line[256], zone[256] = "";
	long long v;
	FILE *f;

	printf("ktask-meminfo: MemTotal %lld kB\n",
	       read_key("/proc/meminfo", "MemTotal", ':'));
	printf("ktask-meminfo: 1G pool %lld pages\n",
	       read_num("/sys/kernel/mm/hugepages/hugepages-1048576kB",
			"nr_hugepages"));
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
 * then how many threads deferred init used, from the boot's trace.
 */
void print_boot_log(void)
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
	.func		= "hugetlbfs_falloc_chunk",
	.fill		= falloc_fill,
	.release	= falloc_release,
};

/*
 * Where fallocate()'s pages land under each memory policy: two chunks of
 * 2 MiB pages, one for the caller, one for a helper.  Also MODE=placement,
 * for the memoryless-node boot.
 */
void run_falloc_placement(int vcpus)
{
	test_placement(&falloc_placer, 256UL << 20, vcpus);
}

/* The fallocate() tests of 2 MiB pages: make test's, and MODE=falloc's. */
void run_falloc_tests(int vcpus)
{
	test_falloc("falloc_2m", SZ_2M, huge_free(SZ_2M) * 3 / 4, vcpus);
	test_falloc_enospc();
	test_falloc_reserved();
	run_falloc_placement(vcpus);
	run_falloc_race_tests(vcpus);
}

void run_mm_tests(int vcpus, int nodes)
{
	struct pool p;

	test_deferred_init(vcpus, nodes);
	run_falloc_tests(vcpus);
	pool_read(SZ_1G, &p);
	if (p.free >= 2)
		test_falloc("falloc_1g", SZ_1G, 2, vcpus);
	test_gigantic_touch(vcpus);
	ktask_threads_set(0);
}

#define MEMSET_BYTES	(256UL << 20)	/* per thread */
#define MEMSET_PASSES	1

static void *memset_thread(void *arg)
{
	int pass;

	for (pass = 0; pass < MEMSET_PASSES; pass++)
		memset(arg, pass, MEMSET_BYTES);
	return NULL;
}

/* @threads threads memset() their own, already faulted, memory. */
static void bench_memset(int threads)
{
	pthread_t tid[64];
	void *buf[64];
	long long t0, wall;
	int i, n = 0;

	for (i = 0; i < threads && i < 64; i++) {
		buf[i] = mmap(NULL, MEMSET_BYTES, PROT_READ | PROT_WRITE,
			      MAP_PRIVATE | MAP_ANONYMOUS | MAP_POPULATE, -1, 0);
		if (buf[i] == MAP_FAILED)
			break;
	}
	threads = i;
	t0 = now_ns();
	for (i = 0; i < threads; i++)
		n += !pthread_create(&tid[i], NULL, memset_thread, buf[i]);
	for (i = 0; i < n; i++)
		pthread_join(tid[i], NULL);
	wall = now_ns() - t0;
	for (i = 0; i < threads; i++)
		munmap(buf[i], MEMSET_BYTES);
	if (n == threads && n)
		printf("ktask-mm: bench=memset threads=%d used=%d bytes=%lu wall_ns=%lld\n",
		       threads, n, n * MEMSET_BYTES * MEMSET_PASSES, wall);
	else
		printf("ktask-mm: error bench=memset threads=%d\n", threads);
}

/* fallocate() of @pages 2 MiB pages, at ktask.max_threads=@threads. */
static void bench_falloc(int threads, long pages, int patched)
{
	const char *dir = huge_mount(SZ_2M);
	struct falloc_result r;

	if (!dir || falloc_run(dir, SZ_2M, pages * SZ_2M,
			       patched ? threads : -1, 0, 0, &r) || r.err) {
		printf("ktask-mm: error bench=falloc threads=%d errno=%d\n",
		       threads, errno);
		return;
	}
	printf("ktask-mm: bench=falloc threads=%d used=%d bytes=%lu wall_ns=%lld\n",
	       threads, patched ? r.threads : 1, pages * SZ_2M, r.wall_ns);
}

/* The first touch of a 1 GiB page, which zeroes it in the fault. */
static void bench_touch(int threads, int patched)
{
	const char *dir = huge_mount(SZ_1G);
	long long wall;
	int used;

	if (patched)
		ktask_threads_set(threads);
	if (!dir || touch_gigantic(dir, 0, &used, &wall, NULL) < 0) {
		printf("ktask-mm: error bench=touch_1g threads=%d errno=%d\n",
		       threads, errno);
		return;
	}
	printf("ktask-mm: bench=touch_1g threads=%d used=%d bytes=%lu wall_ns=%lld\n",
	       threads, patched ? used : 1, SZ_1G, wall);
}

/*
 * The mm benchmark at each thread count (1 only without ktask), repeats
 * outermost.  fallocate() takes the 2 MiB pool but 16 pages.
 */
void run_mm_bench(const int *threads, int nthreads, int repeat, int vcpus)
{
	int patched = !access(KNOB_THREADS, W_OK);
	struct pool p;
	int r, i;

	pool_read(SZ_1G, &p);
	printf("ktask-mm: kernel=%s pool_1g=%lld", patched ? "patched" : "unpatched",
	       p.free);
	pool_read(SZ_2M, &p);
	printf(" pool_2m=%lld\n", p.free);
	for (r = 0; r < repeat; r++) {
		for (i = 0; i < nthreads; i++) {
			if (!patched && threads[i] != 1)
				continue;
			bench_memset(threads[i]);
			if (p.free > 16)
				bench_falloc(threads[i], p.free - 16, patched);
			bench_touch(threads[i], patched);
			bench_vfio_map(threads[i], patched);
			bench_vfio_map_busy(threads[i], patched, vcpus);
		}
	}
	if (patched)
		ktask_threads_set(0);
}
