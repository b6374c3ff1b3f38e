// SPDX-License-Identifier: GPL-2.0
/*
 * hugetlbfs fallocate() that stops half way while another thread of the
 * process writes to pages of its range: no byte the other thread wrote
 * may be lost, and the pool must end as the serial code leaves it.
 *
 * fallocate() on several threads adds pages in any order.  If it then
 * took out the pages it added past the point where the serial loop would
 * have failed, a page another thread had faulted in, written to and
 * unmapped (MADV_DONTNEED keeps it in the file) would go, and its data
 * with it.  The writer here does exactly that, from the end of the range
 * down, each page once, while the call runs into:
 *
 *	falloc_race_mount	the size limit of the mount (its subpool)
 *	falloc_race_cgroup	the hugetlb.2MB.max of the caller's hugetlb
 *				cgroup, which a reservation does not cover
 *	falloc_race_signal	a signal, sent by the writer once it has
 *				written a few pages
 *	falloc_race_pin		the cgroup limit, the first page the writer
 *				wrote held by a FOLL_LONGTERM pin (the
 *				kernel's gup_test) from before the call
 *				fails until after it: unmapped, but not gone
 *	falloc_race_shared	the cgroup limit, the writer's mapping a
 *				plain MAP_SHARED one, which reserves the
 *				range before the call (so it runs serially)
 *
 * falloc_race_limit_signal has no writer: the call runs into the cgroup
 * limit, and a signal comes as soon as the limit refused a page, while
 * other threads of the call may still be on theirs.  The serial loop
 * stops at the first of the two it meets and never sees both: once a
 * page was refused, the call fails with ENOSPC, never EINTR, which
 * would also set the file's size.
 *
 * The writer's mapping is MAP_SHARED|MAP_NORESERVE but in the last test.
 * Each test runs RACE_ROUNDS calls and checks after every call that each
 * page the writer wrote still reads back its pattern (pread(), so that a
 * page taken out reads as a hole, zeros), that no reservation is left but
 * a plain MAP_SHARED mapping's for the pages still missing, that the file
 * holds as many pages as the pool lost, and, once the file is gone, that
 * the pool is back where it started.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <unistd.h>

#include "lib.h"
#include "huge.h"
#include "suites.h"

#define RACE_ROUNDS	4
#define RACE_MAGIC	0x6b7461736b000000ULL	/* | page index */
#define RACE_SIGNAL_AT	2	/* pages written before the signal */
/*
 * Before its first write, the writer waits until the call has reserved
 * its range (HugePages_Rsvd goes up), and, before a signal, until it has
 * a helper, for at most RACE_START_US each: a range that has pages
 * already runs serially, and the tests want the threaded path.  A call
 * that runs serially reserves nothing.
 */
#define RACE_START_US	300000
#ifndef MADV_POPULATE_WRITE
#define MADV_POPULATE_WRITE	23
#endif
#define RACE_CG		CGROOT "/falloc-race"

/* The kernel's gup_test (CONFIG_GUP_TEST): its ABI, from mm/gup_test.h. */
#define GUP_TEST		"/sys/kernel/debug/gup_test"
struct pin_longterm_test {
	unsigned long long	addr;
	unsigned long long	size;
	unsigned int		flags;
};
#define PIN_LONGTERM_TEST_START	_IOW('g', 7, struct pin_longterm_test)
#define PIN_LONGTERM_TEST_STOP	_IO('g', 8)
#define PIN_LONGTERM_TEST_FLAG_USE_WRITE	1

/* How the writer maps the range, and what it holds. */
enum race_kind {
	RACE_NORESERVE,		/* MAP_SHARED|MAP_NORESERVE */
	RACE_PIN,		/* that, and a FOLL_LONGTERM pin of a page */
	RACE_SHARED,		/* MAP_SHARED: the range is reserved by it */
};

/* One fallocate() against the writer. */
struct race {
	char			*map;		/* see enum race_kind */
	enum race_kind		kind;
	int			gup_fd;		/* RACE_PIN: gup_test */
	long			pinned_at;	/* the page pinned, or -1 */
	int			pinned_early;	/* before the call returned */
	long			pages;		/* in the range */
	volatile int		done;		/* the call returned */
	pthread_t		caller;
	int			signal_at;	/* 0: send no signal */
	long long		rsvd;		/* HugePages_Rsvd before */
	int			threaded;	/* wait for the reservation */
	unsigned char		*written;	/* per page, by the writer */
	long			nr_written;
};

/* What all rounds of one test saw. */
struct race_total {
	int	rounds, bad_errno, lost, rsvd_left, blocks_wrong, pool_wrong;
	int	interrupted;	/* rounds that returned EINTR */
	int	pinned;		/* rounds with a pin held across the call */
	int	max_threads;
	long	written;
};

/* Whether the call has reserved its range. */
static int race_reserved(struct race *r)
{
	struct pool p;

	pool_read(SZ_2M, &p);
	return p.rsvd > r->rsvd;
}

/* Whether the call has a helper: a thread beside the caller and writer. */
static int race_helped(struct race *r)
{
	return read_key("/proc/self/status", "Threads", ':') > 2;
}

/* Until @cond, the call's return or RACE_START_US, whichever is first. */
static void race_wait(struct race *r, int (*cond)(struct race *r))
{
	long long t0 = now_ns();

	while (!cond(r) && !r->done && now_ns() - t0 < RACE_START_US * 1000LL)
		usleep(1000);
}

/*
 * RACE_PIN: pin the page at @p, once, with FOLL_LONGTERM, as an io_uring
 * fixed buffer or a VFIO map would; the pin stays until race_round()
 * has checked the file.
 */
static void race_pin(struct race *r, char *p, long j)
{
	struct pin_longterm_test pin = {
		.addr	= (unsigned long)p,
		.size	= SZ_2M,
		.flags	= PIN_LONGTERM_TEST_FLAG_USE_WRITE,
	};

	if (r->kind != RACE_PIN || r->pinned_at >= 0 ||
	    ioctl(r->gup_fd, PIN_LONGTERM_TEST_START, &pin))
		return;
	r->pinned_at = j;
	r->pinned_early = !r->done;
}

/* Write a pattern to each page of the range it can fault in, once. */
static void *race_writer(void *arg)
{
	struct race *r = arg;
	long j;

	if (r->threaded)
		race_wait(r, race_reserved);
	/*
	 * The signal ends the call: a helper that has not taken a chunk by
	 * then never does, and the round tests the serial path.  Give one
	 * the time to start and take a chunk first.
	 */
	if (r->signal_at) {
		race_wait(r, race_helped);
		usleep(2000);
	}
	while (!r->done) {
		for (j = r->pages - 1; j >= 0 && !r->done; j--) {
			char *p = r->map + j * SZ_2M;

			if (r->written[j] ||
			    madvise(p, SZ_2M, MADV_POPULATE_WRITE))
				continue;
			*(volatile unsigned long long *)p = RACE_MAGIC | j;
			r->written[j] = 1;
			race_pin(r, p, j);
			madvise(p, SZ_2M, MADV_DONTNEED);
			if (++r->nr_written == r->signal_at)
				pthread_kill(r->caller, SIGUSR1);
		}
		usleep(1000);
	}
	return NULL;
}

static void race_on_signal(int sig)
{
	(void)sig;
}

/* Pages the writer wrote that no longer read back its pattern. */
static int race_lost(int fd, const struct race *r)
{
	unsigned long long v;
	int lost = 0;
	long j;

	for (j = 0; j < r->pages; j++) {
		if (!r->written[j])
			continue;
		if (pread(fd, &v, sizeof(v), j * SZ_2M) != sizeof(v) ||
		    v != (RACE_MAGIC | j))
			lost++;
	}
	return lost;
}

/*
 * One round in @dir: fallocate() of @pages pages of a new file, which
 * must fail with @want_errno (or succeed, with @want_errno EINTR: the
 * signal may come late), beside a writer that maps the range as @kind
 * says; with @threaded, the writer first waits for the call to reserve
 * its range.
 */
static void race_round(const char *dir, long pages, int want_errno,
		       enum race_kind kind, int threaded, struct race_total *t)
{
	struct race r = {
		.kind		= kind,
		.gup_fd		= -1,
		.pinned_at	= -1,
		.pages		= pages,
		.caller		= pthread_self(),
		.threaded	= threaded,
	};
	struct pool before, after, end;
	long long want_rsvd;
	struct stat st;
	pthread_t writer;
	char path[64];
	int fd, err, threads;

	if (want_errno == EINTR)
		r.signal_at = RACE_SIGNAL_AT;
	if (kind == RACE_PIN)
		r.gup_fd = open(GUP_TEST, O_RDWR);
	snprintf(path, sizeof(path), "%s/race", dir);
	pool_read(SZ_2M, &before);
	fd = open(path, O_CREAT | O_TRUNC | O_RDWR, 0600);
	r.written = calloc(pages, 1);
	if (fd < 0 || !r.written || ftruncate(fd, pages * SZ_2M)) {
		t->bad_errno++;
		goto out;
	}
	r.map = mmap(NULL, pages * SZ_2M, PROT_READ | PROT_WRITE,
		     MAP_SHARED | (kind == RACE_SHARED ? 0 : MAP_NORESERVE),
		     fd, 0);
	if (r.map == MAP_FAILED) {
		t->bad_errno++;
		goto out;
	}
	trace_start();
	r.rsvd = before.rsvd;
	pthread_create(&writer, NULL, race_writer, &r);
	err = fallocate(fd, 0, 0, pages * SZ_2M) ? errno : 0;
	r.done = 1;
	pthread_join(writer, NULL);
	threads = trace_threads(FALLOC_FUNC);
	if (threads > t->max_threads)
		t->max_threads = threads;
	t->interrupted += err == EINTR;
	t->pinned += r.pinned_at >= 0 && r.pinned_early;
	pool_read(SZ_2M, &after);
	fstat(fd, &st);
	t->bad_errno += err != want_errno && !(want_errno == EINTR && !err);
	t->lost += race_lost(fd, &r);
	if (r.pinned_at >= 0)
		ioctl(r.gup_fd, PIN_LONGTERM_TEST_STOP);
	/* A plain MAP_SHARED mapping keeps the pages still missing reserved. */
	want_rsvd = before.rsvd;
	if (kind == RACE_SHARED)
		want_rsvd += pages - (before.free - after.free);
	t->rsvd_left += after.rsvd != want_rsvd;
	t->blocks_wrong += st.st_blocks / (long long)(SZ_2M / 512) !=
			   before.free - after.free;
	t->written += r.nr_written;
	munmap(r.map, pages * SZ_2M);
out:
	if (fd >= 0)
		close(fd);
	if (r.gup_fd >= 0)
		close(r.gup_fd);
	unlink(path);
	free(r.written);
	pool_read(SZ_2M, &end);
	t->pool_wrong += end.free != before.free || end.rsvd != before.rsvd;
	t->rounds++;
}

/*
 * The test passes if no round lost a page or left the pool wrong, pages
 * were written beside the calls, and the rounds took the path the test is
 * for: with @threaded, at least one ran on several threads (with more
 * than one vCPU); for RACE_PIN, at least one had a pin held across the
 * call; for RACE_SHARED, none ran on several threads.
 */
static void race_report(const char *name, const char *why,
			const struct race_total *t, int vcpus,
			enum race_kind kind, int threaded)
{
	report(t->rounds == RACE_ROUNDS && !t->bad_errno && !t->lost &&
	       !t->rsvd_left && !t->blocks_wrong && !t->pool_wrong &&
	       t->written && (!threaded || vcpus < 2 || t->max_threads >= 2) &&
	       (kind != RACE_PIN || t->pinned) &&
	       (kind != RACE_SHARED || t->max_threads <= 1),
	       name,
	       "%d rounds %s (%d EINTR), %ld pages written beside it: %d lost, %d with an unexpected errno, %d with reservations left, %d with blocks unlike the pool, %d with the pool changed after; %d with a pin held across the call; at most %d threads",
	       t->rounds, why, t->interrupted, t->written, t->lost,
	       t->bad_errno, t->rsvd_left, t->blocks_wrong, t->pool_wrong,
	       t->pinned, t->max_threads);
}

/*
 * Twice the pages of a mount limited to a quarter of the free pool: the call
 * fails with ENOSPC.  The pool cannot cover the range, so the call runs
 * serially (the threshold is the reservation, see hugetlbfs_falloc_start()).
 */
static void test_race_mount(int vcpus)
{
	const char *dir = "/mnt/huge-race";
	struct race_total t = { 0 };
	long limit = huge_free(SZ_2M) / 4;
	char opts[64];
	int i;

	if (huge_mount_limited(dir, limit, opts, sizeof(opts))) {
		report(0, "falloc_race_mount", "cannot mount %s (%s): %s", dir,
		       opts, strerror(errno));
		return;
	}
	for (i = 0; i < RACE_ROUNDS; i++)
		race_round(dir, 2 * limit, ENOSPC, RACE_NORESERVE, 0, &t);
	umount(dir);
	race_report("falloc_race_mount", "of ENOSPC from the mount", &t,
		    vcpus, RACE_NORESERVE, 0);
}

/* Three quarters of the free pool, interrupted by a signal. */
static void test_race_signal(int vcpus)
{
	struct sigaction sa = { .sa_handler = race_on_signal };
	const char *dir = huge_mount(SZ_2M);
	struct race_total t = { 0 };
	int i;

	/* No SA_RESTART: the call returns EINTR. */
	sigaction(SIGUSR1, &sa, NULL);
	for (i = 0; dir && i < RACE_ROUNDS; i++)
		race_round(dir, huge_free(SZ_2M) * 3 / 4, EINTR, RACE_NORESERVE,
			   1, &t);
	signal(SIGUSR1, SIG_DFL);
	/* A call that finished before the signal tests nothing. */
	if (!t.interrupted)
		t.bad_errno++;
	race_report("falloc_race_signal", "interrupted", &t, vcpus,
		    RACE_NORESERVE, 1);
}

/* The tests that run into the limit of the hugetlb cgroup, in order. */
static const char *const race_cgroup_names[] = {
	"falloc_race_cgroup", "falloc_race_pin", "falloc_race_shared",
	"falloc_race_limit_signal", NULL
};

/* The "max" count of hugetlb.2MB.events of the test's cgroup, or -1. */
static long long race_limit_hits(int fd)
{
	char buf[64], *at;
	ssize_t n = pread(fd, buf, sizeof(buf) - 1, 0);

	if (n <= 0)
		return -1;
	buf[n] = 0;
	at = strstr(buf, "max ");
	return at ? atoll(at + 4) : -1;
}

/* A signal to the call once the limit refused a page, and when it came. */
struct race_signal {
	struct race	*r;
	int		events;		/* hugetlb.2MB.events */
	long long	hits;		/* its max count before the call */
	int		sent_early;	/* before the call returned */
};

/*
 * Wait for the cgroup's events file to say the limit refused a page (a
 * change wakes poll() with POLLPRI) and send the caller SIGUSR1: no busy
 * loop, which would leave no idle CPU for a helper.
 */
static void *race_signaller(void *arg)
{
	struct race_signal *s = arg;
	struct pollfd p = { .fd = s->events, .events = POLLPRI };

	race_wait(s->r, race_reserved);
	while (!s->r->done && race_limit_hits(s->events) <= s->hits)
		poll(&p, 1, 10);
	if (s->r->done)
		return NULL;
	pthread_kill(s->r->caller, SIGUSR1);
	s->sent_early = !s->r->done;
	return NULL;
}

/*
 * RACE_ROUNDS * 8 calls of twice the limit, each with a signal once the
 * limit refused a page: every call must fail with ENOSPC.  A round tests
 * something only where the call had helpers and the signal came before
 * it returned, and catches a call that lets the signal hide the failure
 * only where the caller was still on a page then, not the thread that
 * failed: before the fix, 7 rounds of 32 returned EINTR, so 32 rounds
 * rarely miss it.
 */
static void race_limit_signal(const char *dir, long limit)
{
	struct sigaction sa = { .sa_handler = race_on_signal };
	int i, fd, err, rounds = RACE_ROUNDS * 8, eintr = 0, other = 0;
	int helped, tested = 0;
	struct race r = { .threaded = 1 };
	struct race_signal s = { .r = &r };
	pthread_t signaller;
	char path[64];

	snprintf(path, sizeof(path), "%s/race", dir);
	s.events = open(RACE_CG "/hugetlb.2MB.events", O_RDONLY);
	sigaction(SIGUSR1, &sa, NULL);
	for (i = 0; i < rounds && s.events >= 0; i++) {
		struct pool before;

		fd = open(path, O_CREAT | O_TRUNC | O_RDWR, 0600);
		if (fd < 0)
			break;
		pool_read(SZ_2M, &before);
		r.rsvd = before.rsvd;
		r.done = 0;
		r.caller = pthread_self();
		s.hits = race_limit_hits(s.events);
		s.sent_early = 0;
		trace_start();
		pthread_create(&signaller, NULL, race_signaller, &s);
		err = fallocate(fd, 0, 0, 2 * limit * SZ_2M) ? errno : 0;
		r.done = 1;
		pthread_join(signaller, NULL);
		helped = trace_threads(FALLOC_FUNC) >= 2;
		tested += helped && s.sent_early;
		eintr += err == EINTR;
		other += err != EINTR && err != ENOSPC;
		close(fd);
		unlink(path);
	}
	signal(SIGUSR1, SIG_DFL);
	if (s.events >= 0)
		close(s.events);
	report(i == rounds && !eintr && !other && tested,
	       "falloc_race_limit_signal",
	       "%d rounds of %d, %d with helpers and the signal before the call returned: %d EINTR, %d other than ENOSPC",
	       i, rounds, tested, eintr, other);
}

static const struct {
	const char	*why;
	enum race_kind	kind;
} race_cgroup_tests[] = {
	{ "of ENOSPC from the hugetlb cgroup", RACE_NORESERVE },
	{ "of ENOSPC from the hugetlb cgroup, a page pinned", RACE_PIN },
	{ "of ENOSPC from the hugetlb cgroup, the range mapped MAP_SHARED",
	  RACE_SHARED },
};

/*
 * In a child in a hugetlb cgroup whose hugetlb.2MB.max is a quarter of the
 * free pool, twice that: the call reserves its range and then fails half
 * way, on several threads; or, when the writer's plain MAP_SHARED mapping
 * has reserved the range already, serially.
 */
static void race_cgroup_child(int vcpus)
{
	const char *dir = huge_mount(SZ_2M);
	long limit = huge_free(SZ_2M) / 4;
	struct race_total t;
	enum race_kind kind;
	char max[32];
	size_t n;
	int i;

	snprintf(max, sizeof(max), "%lu\n", limit * SZ_2M);
	if (!dir || write_str(RACE_CG "/hugetlb.2MB.max", max) ||
	    write_str(RACE_CG "/cgroup.procs", "0\n")) {
		report_setup_failed(race_cgroup_names,
				    "cannot join %s with hugetlb.2MB.max %s: %s",
				    RACE_CG, max, strerror(errno));
		return;
	}
	for (n = 0; n < ARRAY_SIZE(race_cgroup_tests); n++) {
		kind = race_cgroup_tests[n].kind;
		memset(&t, 0, sizeof(t));
		for (i = 0; i < RACE_ROUNDS; i++)
			race_round(dir, 2 * limit, ENOSPC, kind,
				   kind != RACE_SHARED, &t);
		race_report(race_cgroup_names[n], race_cgroup_tests[n].why,
			    &t, vcpus, kind, kind != RACE_SHARED);
	}
	race_limit_signal(dir, limit);
}

static void test_race_cgroup(int vcpus)
{
	int ret = cgroup_make("hugetlb", RACE_CG);

	if (ret) {
		report_setup_failed(race_cgroup_names, "cannot set up %s: %s",
				    RACE_CG, strerror(-ret));
		return;
	}
	in_child(race_cgroup_child, vcpus, race_cgroup_names);
	rmdir(RACE_CG);
}

void run_falloc_race_tests(const struct boot *b)
{
	int vcpus = b->vcpus;

	ktap_plan(ARRAY_SIZE(race_cgroup_names) + 1);
	test_race_mount(vcpus);
	test_race_signal(vcpus);
	test_race_cgroup(vcpus);
}
