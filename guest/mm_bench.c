// SPDX-License-Identifier: GPL-2.0
/*
 * The mm benchmark (mode "mm"): ktask's callers timed from user space,
 * one line per run, for scripts/report.py:
 *
 *	ktask-mm: bench=falloc threads=2 used=2 bytes=4294967296 wall_ns=...
 *
 * fallocate() of most of the 2 MiB pool and the first touch of a 1 GiB
 * page (huge.c); VFIO_IOMMU_MAP_DMA of fresh anonymous memory, which the
 * pinning faults in and zeroes (a VM's RAM that its VMM has not touched),
 * of memory populated once per boot, which it only pins and maps
 * (vfio_map_warm) (vfio_dev.c); the pmem driver bound to the boot's
 * persistent memory, which maps it with struct pages (memmap, pmem.c; also
 * alone, mode "memmap"); move_pages(2) of THPs, or of a 1 GiB hugetlb
 * page, from node 0 to node 1, in a boot of two nodes (thp.c; alone,
 * modes "thp_move" and "huge_move", each also beside a nice-0 CPU hog on
 * every vCPU as row NAME_busy, read with the busy benchmark's); and
 * memset() of
 * private memory by as many threads: the rate the guest can write memory
 * at, against which the others are read.  On a kernel without ktask (the unpatched one) only 1
 * thread runs.  The same callers on a busy machine: busy_bench.c.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "lib.h"
#include "hogs.h"
#include "huge.h"
#include "pmem.h"
#include "suites.h"
#include "thp.h"
#include "vfio_dev.h"

#define MEMSET_BYTES	(256UL << 20)	/* per thread */
#define MEMSET_PASSES	1
#define BENCH_FRESH	SZ_1G		/* the VFIO maps */
#define BENCH_WARM	(4 * SZ_1G)

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
 * One map of @size bytes of @buf at ktask.max_threads @threads
 * (unpatched: the serial kernel), and its unmap, as benchmark @name.
 */
static void bench_map(const char *name, unsigned char *buf,
		      unsigned long size, int threads, int patched)
{
	struct map_result r;

	if (!buf || map_run(buf, size, patched ? threads : -1, 0, NULL, &r) ||
	    r.err || r.unmapped != (long long)size) {
		printf("ktask-mm: error bench=%s threads=%d errno=%d\n", name,
		       threads, buf ? r.err : errno);
		return;
	}
	printf("ktask-mm: bench=%s threads=%d used=%d bytes=%lu wall_ns=%lld unmap_ns=%lld\n",
	       name, threads, patched ? r.threads : 1, size, r.wall_ns,
	       r.unmap_ns);
}

/* bench_map() of @size bytes of fresh anonymous memory. */
static void bench_fresh(const char *name, unsigned long size, int threads,
			int patched)
{
	unsigned char *fresh = mmap(NULL, size, PROT_READ | PROT_WRITE,
				    MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	bench_map(name, fresh == MAP_FAILED ? NULL : fresh, size, threads,
		  patched);
	if (fresh != MAP_FAILED)
		munmap(fresh, size);
}

static void bench_vfio_map(int threads, int patched)
{
	static unsigned char *warm;

	if (vfio_open()) {
		printf("ktask-mm: error bench=vfio_map threads=%d no VFIO device\n",
		       threads);
		return;
	}
	bench_fresh("vfio_map", BENCH_FRESH, threads, patched);
	if (!warm)
		warm = tagged_buffer(BENCH_WARM);
	bench_map("vfio_map_warm", warm, BENCH_WARM, threads, patched);
}

/*
 * The pmem driver bound to the boot's persistent memory again, at
 * ktask.max_threads=@threads: the write's wall time (the whole bind:
 * memremap_pages() allocates the range's struct pages, the job
 * initialises them, the driver adds its disk), and on a patched kernel
 * the job's own (job_ns, -1 unpatched).
 */
static void bench_memmap(int threads, int patched)
{
	long long size = pmem_size(), job = -1;
	unsigned long long wall;
	int used = 1, ret;

	ret = size > 0 ? pmem_unbind() : -ENODEV;
	if (!ret && patched) {
		ktask_threads_set(threads);
		trace_start();
	}
	if (!ret)
		ret = pmem_bind(&wall);
	if (ret) {
		printf("ktask-mm: error bench=memmap threads=%d errno=%d\n",
		       threads, -ret);
		return;
	}
	if (patched) {
		job = trace_most("ktask_job_end:", PMEM_FUNC, " wall_ns=", NULL);
		used = trace_threads(PMEM_FUNC);
	}
	printf("ktask-mm: bench=memmap threads=%d used=%d bytes=%lld wall_ns=%llu job_ns=%lld\n",
	       threads, used, size, wall, job);
}

/* A row of move_pages(2) from node 0 to node 1. */
struct move_row {
	const char	*name;
	size_t		len;
	int		hugetlb;	/* a 1 GiB hugetlb page, not THPs */
	const char	*func;		/* the copy's thread function */
};

static const struct move_row thp_move = {
	"thp_move", 512UL << 20, 0, THP_COPY_FUNC
};
static const struct move_row huge_move = {
	"huge_move", HUGETLB_1G, 1, HUGE_COPY_FUNC
};

static int move_map(const struct move_row *m, struct thp_region *r)
{
	return m->hugetlb ? thp_map_hugetlb(r, m->len, 0, HUGETLB_1G) :
			    thp_map(r, m->len, 0);
}

/*
 * move_pages(2) of row @m's region, written on node 0, to node 1, at
 * ktask.max_threads=@threads, beside @hogs if not NULL (started and
 * stopped around the call, as row NAME_busy): the call's wall time and
 * the CPU time it cost this process and, patched, the most threads a copy
 * ran on; an error line if a word moved wrong, if the hogs did not run,
 * or if not every base page moved as part of a huge page (the region's
 * huge pages, AnonHugePages or Private_Hugetlb: huge_kb=; THPs moved,
 * pgmigrate_success for a hugetlb page: moved=).
 */
static void bench_move(const struct move_row *m, int threads, int patched,
		       struct hogs *hogs, int vcpus)
{
	const char *counter = m->hugetlb ? "pgmigrate_success" :
					   "thp_migration_success";
	long long want = m->len / (m->hugetlb ? 4096 : THP_SIZE);
	int *status = calloc(m->len / THP_SIZE, sizeof(*status));
	unsigned long long t0, wall = 0;
	long long huge_kb = -1, moved = -1, cpu = 0;
	unsigned long long hogged = 0;
	const char *load = hogs ? "_busy" : "";
	struct thp_region r;
	long ret = -ENOMEM;
	int used = 1;

	if (status && !(ret = move_map(m, &r))) {
		thp_fill(&r);
		huge_kb = thp_huge_kb(&r);
		if (patched) {
			ktask_threads_set(threads);
			trace_start();
		}
		moved = read_key("/proc/vmstat", counter, ' ');
		/*
		 * Not in the hogs: fork() shares the region (and a page
		 * mapped twice does not move), or, once the process has
		 * pinned pages, copies a hugetlb page into the pool's page
		 * the move needs (copy_hugetlb_page_range()).
		 */
		ret = madvise(r.mem, r.len, MADV_DONTFORK) ? -errno : 0;
		if (!ret && hogs)
			ret = hogs_start(hogs, vcpus, vcpus);
		if (hogs)
			hogged = hogs_count(hogs);
		cpu = self_cpu_ns();
		t0 = now_ns();
		if (!ret)
			ret = thp_move_pages(&r, 1, status);
		wall = now_ns() - t0;
		cpu = self_cpu_ns() - cpu;
		/* The hogs must have run during the call. */
		if (!ret && hogs && hogs_count(hogs) == hogged)
			ret = -ESRCH;
		if (hogs)
			hogs_stop(hogs);
		moved = read_key("/proc/vmstat", counter, ' ') - moved;
		if (patched)
			used = trace_threads(m->func);
		if (!ret && thp_bad(&r))
			ret = -EIO;
		/* Not what it measures: the region was not all huge pages. */
		if (!ret && (moved != want || huge_kb != (long long)m->len >> 10))
			ret = -ENOMEM;
		thp_unmap(&r);
	}
	free(status);
	if (ret) {
		printf("ktask-mm: error bench=%s%s threads=%d errno=%ld huge_kb=%lld moved=%lld\n",
		       m->name, load, threads, ret < 0 ? -ret : EAGAIN,
		       huge_kb, moved);
		return;
	}
	printf("ktask-mm: bench=%s%s threads=%d used=%d bytes=%zu wall_ns=%llu cpu_ns=%lld huge_kb=%lld moved=%lld\n",
	       m->name, load, threads, used, m->len, wall, cpu, huge_kb,
	       moved);
}

/* Row @m idle, then beside a hog on every vCPU. */
static void bench_move_rows(const struct move_row *m, int threads,
			    int patched, int vcpus)
{
	static struct hogs h;

	bench_move(m, threads, patched, NULL, vcpus);
	if (!h.counters && hogs_init(&h)) {
		printf("ktask-mm: error bench=%s_busy threads=%d hogs: %s\n",
		       m->name, threads, strerror(errno));
		return;
	}
	bench_move(m, threads, patched, &h, vcpus);
}

/* The rows of the mm benchmark: every one, or one alone. */
enum mm_rows { MM_ALL, MM_MEMMAP, MM_THP_MOVE, MM_HUGE_MOVE };

/*
 * Binds per repeat of the pmem bind alone: a bind takes about 20 ms a
 * GiB, and now and then one takes twice its neighbours' time (a 2-thread
 * job of a GiB's struct pages 8.2 ms between two of 4.2 ms; run.sh says
 * why), so each boot gives the median several binds, not one bind's luck.
 */
#define MEMMAP_BINDS	5

/*
 * The mm benchmark at each thread count (1 only without ktask), repeats
 * outermost, or one of its rows alone (@rows).  fallocate() takes the
 * 2 MiB pool but 16 pages.
 */
static void mm_bench(const struct boot *b, enum mm_rows rows)
{
	int patched = !access(KNOB_THREADS, W_OK);
	int repeat = b->repeat * (rows == MM_MEMMAP ? MEMMAP_BINDS : 1);
	struct pool p;
	int r, i;

	pool_read(SZ_1G, &p);
	printf("ktask-mm: kernel=%s pool_1g=%lld", patched ? "patched" : "unpatched",
	       p.free);
	pool_read(SZ_2M, &p);
	printf(" pool_2m=%lld\n", p.free);
	for (r = 0; r < repeat; r++) {
		for (i = 0; i < b->nthreads; i++) {
			if (!patched && b->threads[i] != 1)
				continue;
			if (rows == MM_THP_MOVE || rows == MM_HUGE_MOVE) {
				bench_move_rows(rows == MM_THP_MOVE ?
						&thp_move : &huge_move,
						b->threads[i], patched,
						b->vcpus);
				continue;
			}
			if (rows == MM_ALL) {
				bench_memset(b->threads[i]);
				if (p.free > 16)
					bench_falloc(b->threads[i], p.free - 16,
						     patched);
				bench_touch(b->threads[i], patched);
				bench_vfio_map(b->threads[i], patched);
			}
			bench_memmap(b->threads[i], patched);
		}
	}
	if (patched)
		ktask_threads_set(0);
}

void run_mm_bench(const struct boot *b)
{
	mm_bench(b, MM_ALL);
}

void run_memmap_bench(const struct boot *b)
{
	mm_bench(b, MM_MEMMAP);
}

void run_thp_move_bench(const struct boot *b)
{
	mm_bench(b, MM_THP_MOVE);
}

void run_huge_move_bench(const struct boot *b)
{
	mm_bench(b, MM_HUGE_MOVE);
}
