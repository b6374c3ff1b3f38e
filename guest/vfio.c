// SPDX-License-Identifier: GPL-2.0
/*
 * VFIO type1 pinning seen from user space.  QEMU gives the guest an Intel
 * IOMMU and its "edu" test devices (vfio_dev.c), which this program
 * binds to vfio-pci; VFIO_IOMMU_MAP_DMA then pins and maps
 * a range of our memory for the device, as a VMM does for guest RAM.
 *
 * The tests of make test map anonymous and hugetlbfs memory at 1 thread
 * and at every vCPU and check what the kernel leaves: the device reads
 * through the IOMMU what we wrote (its DMA engine copies part of a page
 * of the range to another), VmLck (the mm's locked_vm) and the FOLL_PIN
 * counters grow by the range and shrink back on unmap.  A map over
 * RLIMIT_MEMLOCK fails as the serial code fails and leaves nothing
 * charged or pinned, and two maps at once, into the containers of two
 * edu devices, never pin past their process's limit.  Fresh memory that
 * a map faults in lands where the caller's policy puts it (placement.c).
 * A map over a mapped IOVA fails with EEXIST, cycles of map and unmap
 * leave the pinned pages and the free memory as they found them, and so
 * does a SIGKILL in the middle of a map.
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <linux/capability.h>
#include <linux/vfio.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/wait.h>
#include <unistd.h>

#include "lib.h"
#include "huge.h"
#include "placement.h"
#include "suites.h"
#include "thp.h"
#include "vfio_dev.h"

static void print_map(const char *name, const char *label,
		      const struct map_result *r)
{
	ktap_diag("%s %s errno=%d threads=%d locked_kb=%lld pinned=%lld unmapped=%lld locked_left=%lld pinned_left=%lld wall_ns=%lld",
		  name, label, r->err, r->threads, r->locked_kb, r->pinned,
		  r->unmapped, r->locked_left, r->pinned_left, r->wall_ns);
}

#define MAP_SIZE	(512UL << 20)	/* 4 chunks: one for each vCPU */
#define PROBES		8

/*
 * A map with @threads threads.  With 1 GiB pages a job may have only two
 * chunks, and the caller takes both if its helper's vCPU does not run in
 * time: a threaded map that used one thread is run again
 * (retry_for_helpers()).
 */
struct map_attempt_ctx {
	unsigned char		*buf;
	unsigned long		size;
	int			threads, probes, good;
	struct map_result	r;
};

/* One map; a threaded map must have used more than one thread. */
static int map_attempt(void *ctx)
{
	struct map_attempt_ctx *m = ctx;
	int ret = map_run(m->buf, m->size, m->threads, m->probes, &m->good,
			  &m->r);

	if (ret)
		return ret;
	return m->threads == 1 || m->r.threads > 1;
}

/*
 * A map of @size bytes of @buf serially, then with every vCPU: the device
 * reads our pages where we put them, locked_vm and the pinned pages grow
 * by the range, and the unmap takes them all back.
 */
static void test_map(const char *name, unsigned char *buf, unsigned long size,
		     int vcpus)
{
	struct map_attempt_ctx m = { .buf = buf, .size = size, .probes = PROBES };
	int runs[2] = { 1, vcpus }, i, ok, tries;
	struct map_result *r = &m.r;
	char label[16], test[64];

	for (i = 0; i < 2; i++) {
		snprintf(label, sizeof(label), "threads=%d", runs[i]);
		snprintf(test, sizeof(test), "%s_%s", name,
			 i ? "threaded" : "serial");
		m.threads = runs[i];
		tries = retry_for_helpers(test, map_attempt, &m);
		if (tries < 0) {
			report(0, test, "%s: %s", label, strerror(-tries));
			continue;
		}
		print_map(test, label, r);
		ok = !r->err && r->locked_kb == (long long)(size >> 10) &&
		     r->pinned == (long long)(size / PAGE) &&
		     r->unmapped == (long long)size && !r->locked_left &&
		     !r->pinned_left && m.good == PROBES &&
		     (runs[i] == 1 ? r->threads == 1 : r->threads > 1);
		report(ok, test, "%s: %lu MiB, used %d threads (run %d), %d of %d device reads right, VmLck +%lld kB then %+lld",
		       label, size >> 20, r->threads, tries, m.good, PROBES,
		       r->locked_kb, r->locked_left);
	}
}

/*
 * MAP_SIZE of anonymous memory, and the free 1 GiB pages of the pool
 * through hugetlbfs: runs of 1 GiB that chunk boundaries split.
 */
static void test_maps(int vcpus)
{
	static const char *const anon[] = {
		"vfio_map_serial", "vfio_map_threaded", NULL
	}, *const hugetlb[] = {
		"vfio_map_hugetlb_serial", "vfio_map_hugetlb_threaded", NULL
	};
	unsigned long huge = huge_free(SZ_1G) * SZ_1G;
	unsigned char *buf = tagged_buffer(MAP_SIZE);
	const char *dir = huge_mount(SZ_1G);
	char path[64];
	int fd;

	if (!buf) {
		report_setup_failed(anon, "mmap: %s", strerror(errno));
	} else {
		test_map("vfio_map", buf, MAP_SIZE, vcpus);
		munmap(buf, MAP_SIZE);
	}
	if (huge < SZ_1G || !dir) {
		report_skip(hugetlb[0], "no free 1 GiB page");
		report_skip(hugetlb[1], "no free 1 GiB page");
		return;
	}
	snprintf(path, sizeof(path), "%s/vfio", dir);
	fd = open(path, O_CREAT | O_RDWR, 0600);
	buf = mmap(NULL, huge, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	if (fd < 0 || buf == MAP_FAILED) {
		report_setup_failed(hugetlb, "%s: %s", path, strerror(errno));
	} else {
		tag_pages(buf, huge);
		test_map("vfio_map_hugetlb", buf, huge, vcpus);
		munmap(buf, huge);
	}
	if (fd >= 0)
		close(fd);
	unlink(path);
}

/* Drop CAP_IPC_LOCK, which lets VFIO pin past RLIMIT_MEMLOCK. */
static int drop_ipc_lock(void)
{
	return cap_set(CAP_IPC_LOCK, 0, 0);
}

#define LIMIT_MAP	(512UL << 20)	/* 4 chunks */

/*
 * In a child without CAP_IPC_LOCK, RLIMIT_MEMLOCK at a little over half
 * of LIMIT_MAP (not on a chunk boundary): the map fails with ENOMEM
 * serially and with helpers, and leaves nothing locked, pinned or
 * mapped.  Under a limit above LIMIT_MAP it succeeds.  With helpers, two
 * threads, and one must take part: two chunks of 128 MiB in flight hold
 * less than the limit, so one has been pinned whole, and is to be undone,
 * when the limit is hit.
 */
static const char *const memlock_tests[] = {
	"vfio_memlock_serial", "vfio_memlock_threaded", "vfio_memlock_above",
	NULL
};

static void memlock_child(int vcpus)
{
	struct rlimit lim = { LIMIT_MAP / 2 + (3 << 20), LIMIT_MAP / 2 + (3 << 20) };
	struct map_attempt_ctx m = { .buf = tagged_buffer(LIMIT_MAP),
				     .size = LIMIT_MAP };
	int runs[2] = { 1, 2 }, i, ret, tries;
	struct map_result r;
	char label[16];

	if (!m.buf || drop_ipc_lock() || setrlimit(RLIMIT_MEMLOCK, &lim)) {
		report_setup_failed(memlock_tests, "setup: %s", strerror(errno));
		return;
	}
	for (i = 0; i < 2; i++) {
		snprintf(label, sizeof(label), "threads=%d", runs[i]);
		m.threads = runs[i];
		tries = retry_for_helpers(memlock_tests[i], map_attempt, &m);
		if (tries < 0) {
			report(0, memlock_tests[i], "%s: %s", label,
			       strerror(-tries));
			continue;
		}
		print_map(memlock_tests[i], label, &m.r);
		report(m.r.err == ENOMEM && !m.r.locked_kb && !m.r.pinned &&
		       m.r.unmapped == 0 &&
		       (runs[i] == 1 ? m.r.threads == 1 : m.r.threads > 1),
		       memlock_tests[i],
		       "%s: errno %d (want ENOMEM), used %d threads (run %d), VmLck %+lld kB, pinned %+lld, unmapped %lld",
		       label, m.r.err, m.r.threads, tries, m.r.locked_kb,
		       m.r.pinned, m.r.unmapped);
	}
	lim.rlim_cur = lim.rlim_max = LIMIT_MAP + (1 << 20);
	if (setrlimit(RLIMIT_MEMLOCK, &lim))
		ret = -errno;
	else
		ret = map_run(m.buf, LIMIT_MAP, vcpus, 0, NULL, &r);
	report(!ret && !r.err && r.unmapped == (long long)LIMIT_MAP,
	       memlock_tests[2], "under a limit above the range: errno %d",
	       ret ? -ret : r.err);
}

#define TWO_MAP		(256UL << 20)
/*
 * What a map may pin past the limit for a moment: each thread pins a
 * batch of up to 512 pages before it counts them, as the serial code
 * does.
 */
#define BATCH_PAGES	512

/* One of vfio_memlock_two's maps, on a thread of its own. */
struct two_map {
	const struct vfio	*v;
	unsigned char		*buf;
	pthread_barrier_t	*start;
	int			err;
	int			done;
};

static void *two_map_thread(void *arg)
{
	struct two_map *m = arg;

	pthread_barrier_wait(m->start);
	m->err = dma_map_in(m->v, m->buf, IOVA_BASE, TWO_MAP);
	__atomic_store_n(&m->done, 1, __ATOMIC_RELEASE);
	return NULL;
}

/* A round of vfio_memlock_two: what is asked, and what it saw. */
struct two_round {
	const char	*name;
	int		vcpus, want_enomem;
	unsigned long	limit;
	long long	slack;		/* pages a map may pin past the limit */
	long long	most, vm, pins;	/* pages pinned at most; VmLck, pins left */
	int		err[2], threads, ok;
};

/*
 * Two threads map TWO_MAP of fresh memory each, at once, into the
 * containers of two devices, under an RLIMIT_MEMLOCK of @r->limit bytes,
 * while this thread samples the pinned pages: they never go past the
 * limit (but for a batch per thread), @r->want_enomem maps fail with
 * ENOMEM and the others succeed, and afterwards nothing is left locked
 * or pinned.  The budget is the helpers': a round in which no map job
 * ran a chunk on a helper tested none of it.  1 if the round failed or
 * had a helper, 0 if it is worth another; -errno if it could not run.
 */
static int two_maps_attempt(void *ctx)
{
	struct two_round *r = ctx;
	struct rlimit lim = { r->limit, r->limit };
	struct two_map maps[2] = { { .v = &vfio }, { .v = &second } };
	long long pins0 = pinned_pages(), vm0 = vmlck_kb(), pins;
	pthread_barrier_t start;
	pthread_t tids[2];
	int i, enomem = 0, mapped = 0;

	if (setrlimit(RLIMIT_MEMLOCK, &lim))
		return -errno;
	i = pthread_barrier_init(&start, NULL, 3);
	if (i)
		return -i;
	trace_start();
	for (i = 0; i < 2; i++) {
		maps[i].start = &start;
		maps[i].buf = mmap(NULL, TWO_MAP, PROT_READ | PROT_WRITE,
				   MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		if (maps[i].buf == MAP_FAILED ||
		    pthread_create(&tids[i], NULL, two_map_thread, &maps[i])) {
			/* A thread may wait at the barrier: end the child. */
			report(0, r->name, "setup: %s", strerror(errno));
			_exit(1);
		}
	}
	pthread_barrier_wait(&start);
	r->most = 0;
	while (!__atomic_load_n(&maps[0].done, __ATOMIC_ACQUIRE) ||
	       !__atomic_load_n(&maps[1].done, __ATOMIC_ACQUIRE)) {
		pins = pinned_pages() - pins0;
		if (pins > r->most)
			r->most = pins;
		usleep(1000);
	}
	for (i = 0; i < 2; i++) {
		pthread_join(tids[i], NULL);
		r->err[i] = maps[i].err;
		enomem += maps[i].err == ENOMEM;
		if (!maps[i].err && dma_unmap_in(maps[i].v, IOVA_BASE,
						 TWO_MAP) == (long long)TWO_MAP)
			mapped++;
		munmap(maps[i].buf, TWO_MAP);
	}
	pthread_barrier_destroy(&start);
	r->threads = trace_threads(VFIO_MAP_FUNC);
	r->vm = vmlck_kb() - vm0;
	r->pins = pinned_pages() - pins0;
	r->ok = r->most > 0 &&
		r->most <= (long long)(r->limit / PAGE) + r->slack &&
		enomem == r->want_enomem && mapped == 2 - r->want_enomem &&
		!r->vm && !r->pins;
	return !r->ok || r->threads >= 2;
}

/* two_maps_attempt() as @name, until a helper took part (3 runs at most). */
static void two_maps(const char *name, int vcpus, unsigned long limit,
		     int want_enomem)
{
	struct two_round r = {
		.name = name, .vcpus = vcpus, .want_enomem = want_enomem,
		.limit = limit, .slack = 2LL * vcpus * BATCH_PAGES,
	};
	int tries = retry_for_helpers(name, two_maps_attempt, &r);

	if (tries < 0) {
		report(0, name, "setup: %s", strerror(-tries));
		return;
	}
	report(r.ok && r.threads >= 2, name,
	       "two maps of %lu MiB under a limit of %lu MiB: errno %d and %d (want %d ENOMEM, the rest mapped), at most %lld MiB pinned at once (limit and a batch per thread: %lld MiB), then VmLck %+lld kB, pinned %+lld; most threads of a map %d (want 2 or more; %d runs)",
	       TWO_MAP >> 20, limit >> 20, r.err[0], r.err[1], want_enomem,
	       (long long)(r.most * PAGE >> 20),
	       (long long)((limit / PAGE + r.slack) * PAGE >> 20), r.vm,
	       r.pins, r.threads, tries);
}

/*
 * In a child without CAP_IPC_LOCK: two maps at once under a limit a
 * little over one map (one fails), then over both (both succeed).
 */
static const char *const memlock_two_tests[] = {
	"vfio_memlock_two_one_fits", "vfio_memlock_two_both_fit", NULL
};

static void memlock_two_child(int vcpus)
{
	if (drop_ipc_lock() || ktask_threads_set(vcpus)) {
		report_setup_failed(memlock_two_tests, "setup: %s",
				    strerror(errno));
		return;
	}
	two_maps(memlock_two_tests[0], vcpus, TWO_MAP + (3 << 20), 1);
	two_maps(memlock_two_tests[1], vcpus, 2 * TWO_MAP + (3 << 20), 0);
}

#define EXIST_MAP	(256UL << 20)

/*
 * A map over an IOVA range that is mapped already fails with EEXIST and
 * charges nothing; the first mapping is whole.  The memory is not tagged
 * first, which would only take time: the device does not read it.
 */
static void test_exist(int vcpus)
{
	unsigned char *buf = mmap(NULL, 2 * EXIST_MAP, PROT_READ | PROT_WRITE,
				  MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	long long vm0, pins0, vm1, pins1, unmapped;
	int err1, err2;

	if (buf == MAP_FAILED) {
		report(0, "vfio_eexist", "mmap: %s", strerror(errno));
		return;
	}
	ktask_threads_set(vcpus);
	vm0 = vmlck_kb();
	pins0 = pinned_pages();
	err1 = dma_map(buf, IOVA_BASE, EXIST_MAP);
	vm1 = vmlck_kb();
	pins1 = pinned_pages();
	err2 = dma_map(buf + EXIST_MAP, IOVA_BASE + EXIST_MAP / 2, EXIST_MAP);
	report(!err1 && err2 == EEXIST && vmlck_kb() == vm1 &&
	       pinned_pages() == pins1, "vfio_eexist",
	       "first map errno %d, overlapping map errno %d (want EEXIST), VmLck %+lld kB, pinned %+lld",
	       err1, err2, vmlck_kb() - vm1, pinned_pages() - pins1);
	unmapped = dma_unmap(IOVA_BASE, EXIST_MAP);
	report(unmapped == (long long)EXIST_MAP && vmlck_kb() == vm0 &&
	       pinned_pages() == pins0, "vfio_eexist_unmap",
	       "unmapped %lld of %lu, VmLck %+lld kB, pinned %+lld",
	       unmapped, EXIST_MAP, vmlck_kb() - vm0, pinned_pages() - pins0);
	munmap(buf, 2 * EXIST_MAP);
}

#define CYCLES		4
#define CYCLE_MAP	(256UL << 20)	/* 2 chunks: the least that splits */
#define FREE_SLACK_KB	(8 << 10)	/* far below one chunk, 128 MiB */

/*
 * mmap, map, unmap and munmap CYCLE_MAP of THPs (as map_fill()); whether
 * the map and unmap worked, and one more in *@helped if a helper took
 * part.
 */
static int map_cycle(int threads, int *helped)
{
	unsigned char *buf = thp_mmap(CYCLE_MAP);
	struct map_result r;
	int ok;

	if (!buf)
		return 0;
	ok = !map_run(buf, CYCLE_MAP, threads, 0, NULL, &r) && !r.err &&
	     r.unmapped == (long long)CYCLE_MAP;
	*helped += ok && r.threads > 1;
	munmap(buf, CYCLE_MAP);
	return ok;
}

/*
 * Cycles of mmap, map with helpers, unmap and munmap leave the pinned
 * pages and the free memory where they were.  A first cycle, not
 * counted, lets the kernel set up what it keeps.  A helper must have
 * taken part in one of the cycles counted at least: what a helper leaves
 * behind is what is looked for, per job or chunk.  The map pins THPs, a
 * few runs a chunk: a leak per run of 4 KiB pages would be below the
 * slack here; the leftovers suite's kmemleak check finds leaked objects
 * of any size.
 */
static void test_cycles(int vcpus)
{
	long long pins0, free0, avail0, freed, avail;
	long long slack = free_slack_kb(FREE_SLACK_KB);
	int i, good = 0, helped = 0, ignored = 0;

	map_cycle(vcpus, &ignored);
	pins0 = pinned_pages();
	free0 = free_kb();
	avail0 = read_key("/proc/meminfo", "MemAvailable", ':');
	for (i = 0; i < CYCLES; i++)
		good += map_cycle(vcpus, &helped);
	freed = free_kb() - free0;
	avail = read_key("/proc/meminfo", "MemAvailable", ':') - avail0;
	report(good == CYCLES && helped && pinned_pages() == pins0 &&
	       freed > -slack, "vfio_cycles",
	       "%d cycles of %lu MiB, %d worked, %d with helpers (want 1 or more), pinned %+lld, free memory %+lld kB (MemAvailable %+lld kB, slack %lld kB)",
	       CYCLES, CYCLE_MAP >> 20, good, helped, pinned_pages() - pins0,
	       freed, avail, slack);
}

/*
 * Fork a child that maps and unmaps 2 GiB in a loop, SIGKILL it 700 ms
 * after it is ready, and reap it into *@status: 0, or -errno.
 */
static int kill_mapper(int *status)
{
	int pipefd[2], err = 0;
	char c;
	pid_t pid;

	if (pipe(pipefd))
		return -errno;
	pid = fork();
	if (!pid) {
		unsigned char *buf = mmap(NULL, 2 * SZ_1G, PROT_READ | PROT_WRITE,
					  MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

		if (buf == MAP_FAILED || write(pipefd[1], "x", 1) != 1)
			_exit(1);
		for (;;) {
			dma_map(buf, IOVA_BASE, 2 * SZ_1G);
			dma_unmap(IOVA_BASE, 2 * SZ_1G);
		}
	}
	if (pid < 0)
		err = -errno;
	close(pipefd[1]);
	if (pid > 0 && read(pipefd[0], &c, 1) != 1)
		err = -EIO;	/* the child exited before it was ready */
	close(pipefd[0]);
	if (pid < 0)
		return err;
	if (!err)
		usleep(700000);
	kill(pid, SIGKILL);
	waitpid(pid, status, 0);
	return err;
}

/* What vfio_kill saw over its runs. */
struct kill_runs {
	long long	unmapped;	/* bytes the killed children left mapped */
	int		killed, interrupted;
};

/*
 * A run of vfio_kill: kill_mapper(), then unmap what the child left.  1
 * once a map job ended with -EINTR (its ktask_job_end event), 0 if the
 * signal landed elsewhere, -errno if the run failed.
 */
static int kill_attempt(void *ctx)
{
	struct kill_runs *k = ctx;
	struct vfio_iommu_type1_dma_unmap all = {
		.argsz	= sizeof(all),
		.flags	= VFIO_DMA_UNMAP_FLAG_ALL,
	};
	int status = 0, err;

	trace_start();
	err = kill_mapper(&status);
	trace_stop();
	if (err)
		return err;
	k->killed &= WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL;
	/* The largest -errno a map job ended with: EINTR, or none. */
	k->interrupted = trace_most("ktask_job_end:", VFIO_MAP_FUNC,
				    " error=-", NULL) == EINTR;
	if (ioctl(vfio.container, VFIO_IOMMU_UNMAP_DMA, &all))
		return -errno;
	k->unmapped += all.size;
	return k->interrupted;
}

/*
 * SIGKILL a child that maps and unmaps 2 GiB in a loop, until the signal
 * lands in a map (retry_until(), 3 runs at most): the map job fails and
 * undoes itself, and once the child's mappings are unmapped nothing
 * stays pinned.
 */
static void test_kill(int vcpus)
{
	long long pins0 = pinned_pages(), pinned;
	struct kill_runs k = { .killed = 1 };
	int tries;

	ktask_threads_set(vcpus);
	tries = retry_until("vfio_kill", "the signal landed outside a map",
			    kill_attempt, &k);
	if (tries < 0) {
		report(0, "vfio_kill", "a run failed: %s", strerror(-tries));
		return;
	}
	pinned = pinned_pages() - pins0;
	report(k.killed && k.interrupted && !pinned, "vfio_kill",
	       "%d runs: killed %d, a map stopped by the signal %d (want 1), %lld bytes left mapped (unmapped now), pinned %+lld",
	       tries, k.killed, k.interrupted, k.unmapped, pinned);
}

/*
 * Map @len bytes of fresh anonymous memory under @vma's policy, and unmap
 * them: at *@mem.  THPs, as QEMU's guest memory is where it can be: the
 * map pins runs of 2 MiB, not 4 KiB pages one by one (vfio_map_* pin
 * those), and the placement is of the helpers and the memory they fault
 * in, whatever its page size.
 */
static int map_fill(unsigned long len, const struct mbind_req *vma,
		    void **mem)
{
	int err;

	*mem = thp_mmap(len);
	if (!*mem)
		return errno;
	err = mbind_apply(*mem, len, vma);
	if (!err)
		err = dma_map(*mem, IOVA_BASE, len);
	if (!err)
		dma_unmap(IOVA_BASE, len);
	else
		munmap(*mem, len);
	return err;
}

static void map_release(void *mem, unsigned long len)
{
	munmap(mem, len);
}

static const struct placer map_placer = {
	.name		= "vfio_placement",
	.func		= VFIO_MAP_FUNC,
	.vma_policy	= 1,
	.fill		= map_fill,
	.release	= map_release,
};

void run_vfio_tests(const struct boot *b)
{
	int vcpus = b->vcpus;
	int ret = vfio_open();

	/*
	 * vfio_setup, vfio_map and vfio_map_hugetlb serially and threaded,
	 * memlock_tests, memlock_two_tests, the placement, vfio_eexist and
	 * vfio_eexist_unmap, vfio_cycles, vfio_kill.
	 */
	ktap_plan(14 + placement_tests(&map_placer));
	if (ret) {
		report(0, "vfio_setup", "edu device through vfio-pci: %s",
		       strerror(-ret));
		return;
	}
	report(1, "vfio_setup", "edu device %s through vfio-pci", vfio.addr);
	test_maps(vcpus);
	in_child(memlock_child, vcpus, memlock_tests);
	ret = vfio_open_nth(&second, 1);
	if (ret)
		report_setup_failed(memlock_two_tests, "a second edu device: %s",
				    strerror(-ret));
	else
		in_child(memlock_two_child, vcpus, memlock_two_tests);
	/* Two chunks of 2 MiB blocks: one for the caller, one for a helper. */
	test_placement(&map_placer, 256UL << 20, vcpus);
	test_exist(vcpus);
	test_cycles(vcpus);
	test_kill(vcpus);
	ktask_threads_set(0);
}
