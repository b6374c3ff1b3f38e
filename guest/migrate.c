// SPDX-License-Identifier: GPL-2.0
/*
 * Page migration (suite "migrate" of make test): migrate_pages_batch()
 * copies the contents of a batch's large anonymous folios with a ktask
 * job between its unmap and move phases, and unmap_and_move_huge_page()
 * those of an anonymous hugetlb folio (the mm_migrate_folios_copy event
 * says how many pages a job had to copy).  Each run maps MIG_MB of
 * transparent huge pages (thp.c; AnonHugePages says they are) or of 2 MiB
 * hugetlb pages (Private_Hugetlb) on node 0, writes a pattern, holds a
 * page of the last huge page in a pipe (vmsplice(): a reference more, so
 * that it cannot move) and moves the region to node 1; once with
 * ktask.max_threads=1, as serial code, once with the boot's limit
 * (retried up to HELPER_TRIES times until a helper took a chunk).  The
 * hugetlb pages take the code path of 1 GiB ones, which make test's
 * boot cannot have on node 0 (make run MODE=huge_move moves one).
 *
 *	migrate_move_pages	move_pages(2) of the THPs, a THP an entry:
 *				its result, each entry's status, each
 *				page's node and the growth of
 *				thp_migration_success equal to the serial
 *				run's; every byte as written; every THP but
 *				the held one on node 1, each copied by a
 *				job; no job of the serial run with a
 *				helper, and of the other one helped, every
 *				helper a thread of this process (its tgid
 *				in the trace)
 *	migrate_pages_node	the same with migrate_pages(2) of the whole
 *				process from node 0 to 1, but no status
 *	migrate_hugetlb_move_pages	the same for hugetlb pages, and
 *				pgmigrate_success grown as in the serial run
 *	migrate_hugetlb_node	migrate_pages(2) of hugetlb pages
 *	migrate_thp_writer	move_pages(2) of the THPs, none held, while
 *				another thread increments the first word
 *				of each 512 KiB in turn: every increment
 *				there (a retry never hides a run that lost
 *				one),
 *				every other word as written (a job copies
 *				a folio only once no one can write it until
 *				it is mapped again), some THPs copied by a
 *				job
 *	migrate_hugetlb_writer	the same for hugetlb pages
 *	migrate_pin_released	move_pages(2) of two 1 MiB folios in one
 *				call, one batch, to the node they are not
 *				on, round after round (one left behind,
 *				pinned, is first moved to the other's),
 *				while another thread pins a page of the
 *				first for DMA (VFIO_IOMMU_MAP_DMA) and
 *				unpins it in a loop: a copy job is sized
 *				before the unmap phase, when the pinned
 *				folio is not copyable, and a pin released
 *				before the unmap must not leave a folio
 *				moved without its contents.  Each round
 *				writes its own number into every base page
 *				of both, which each must hold after the
 *				move; both moved in one call in some
 *				rounds, and copy jobs copied pages
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <unistd.h>

#include "huge.h"
#include "lib.h"
#include "suites.h"
#include "thp.h"
#include "vfio_dev.h"

#define MIG_MB		128
#define MIG_LEN		((size_t)MIG_MB << 20)
#define MIG_PAGE	4096UL
#define MIG_PAGES	(MIG_LEN / MIG_PAGE)
#define MIG_THPS	(MIG_LEN / THP_SIZE)

enum mig_call { MIG_MOVE_PAGES, MIG_MIGRATE_PAGES };

/* What a test moves, and how. */
struct mig_case {
	const char	*name;
	enum mig_call	call;
	int		hugetlb;	/* 2 MiB hugetlb pages, not THPs */
	int		writer;		/* a thread stores during the move */
};

/* What one run of a migration left. */
struct mig_run {
	long		ret;		/* of the syscall, or -errno */
	long long	huge_kb;	/* AnonHugePages of the region */
	long long	pages;		/* pgmigrate_success growth */
	long long	thps;		/* thp_migration_success growth */
	long long	copied;		/* pages jobs copied (of the trace) */
	long		bad;		/* 8-byte words not as written */
	long		on_node1;	/* THPs whose first page is on node 1 */
	int		helped;		/* most threads that ran a chunk */
	struct helpers_seen seen;
	int		status[MIG_THPS];	/* move_pages(2) */
	int		node[MIG_PAGES];	/* where each page is after */
};

/* Pin a page of the last THP with a pipe: that THP cannot move. */
static int mig_hold(const struct thp_region *r, int *pipefd)
{
	struct iovec iov = { r->mem + r->len - THP_SIZE, MIG_PAGE };

	if (pipe(pipefd))
		return -errno;
	if (vmsplice(pipefd[1], &iov, 1, SPLICE_F_NONBLOCK) == MIG_PAGE)
		return 0;
	close(pipefd[0]);
	close(pipefd[1]);
	return -EIO;
}

/* The region of case @c on node 0, filled; -errno if not set up. */
static int mig_map(const struct mig_case *c, struct thp_region *r)
{
	int ret = c->hugetlb ? thp_map_hugetlb(r, MIG_LEN, 0, THP_SIZE) :
			       thp_map(r, MIG_LEN, 0);

	if (!ret)
		thp_fill(r);
	return ret;
}

/* Move the region @r of case @c to node 1 into @r's result. */
static void mig_move(const struct mig_case *c, const struct thp_region *r,
		     struct mig_run *run)
{
	const char *func = c->hugetlb ? HUGE_COPY_FUNC : THP_COPY_FUNC;
	long long pages0, thps0;

	pages0 = read_key("/proc/vmstat", "pgmigrate_success", ' ');
	thps0 = read_key("/proc/vmstat", "thp_migration_success", ' ');
	trace_start_helpers();
	write_str(TRACE THP_COPY_EVENT, "1\n");
	if (c->call == MIG_MOVE_PAGES)
		run->ret = thp_move_pages(r, 1, run->status);
	else
		run->ret = thp_migrate_pages(0, 1);
	write_str(TRACE THP_COPY_EVENT, "0\n");
	run->helped = trace_stop_helpers(func);
	trace_helpers(func, -1, &run->seen);
	run->copied = thp_copied();
	run->pages = read_key("/proc/vmstat", "pgmigrate_success", ' ') -
		     pages0;
	run->thps = read_key("/proc/vmstat", "thp_migration_success", ' ') -
		    thps0;
}

/*
 * One run: map, fill, hold the last huge page, move, and look.  -errno
 * if the run could not be set up.
 */
static int mig_run(const struct mig_case *c, struct mig_run *r)
{
	struct thp_region region;
	int pipefd[2], ret;
	size_t i;

	memset(r, 0, sizeof(*r));
	ret = mig_map(c, &region);
	if (ret)
		return ret;
	r->huge_kb = thp_huge_kb(&region);
	ret = mig_hold(&region, pipefd);
	if (ret) {
		thp_unmap(&region);
		return ret;
	}
	mig_move(c, &region, r);
	r->bad = thp_bad(&region);
	if (thp_nodes(&region, r->node))
		r->bad = -1;
	for (i = 0; i < region.len / MIG_PAGE; i += region.page / MIG_PAGE)
		r->on_node1 += r->node[i] == 1;
	close(pipefd[0]);
	close(pipefd[1]);
	thp_unmap(&region);
	return 0;
}

struct mig_try {
	const struct mig_case	*c;
	struct mig_run		*run;
};

/*
 * A run that helpers took part in, or one that moved a word wrong, which
 * a retry must not hide.
 */
static int mig_attempt(void *ctx)
{
	struct mig_try *t = ctx;
	int ret = mig_run(t->c, t->run);

	return ret ? ret : (t->run->helped >= 2 && t->run->seen.chunks) ||
			   t->run->bad;
}

/*
 * Whether run @b ended as the serial run @a, for the region: what
 * migrate_pages(2) returns and migrates counts the process's other pages
 * too.
 */
static int mig_same(enum mig_call call, const struct mig_run *a,
		    const struct mig_run *b)
{
	return (call == MIG_MIGRATE_PAGES ||
		(a->ret == b->ret && a->pages == b->pages)) &&
	       a->thps == b->thps &&
	       !memcmp(a->status, b->status, sizeof(a->status)) &&
	       !memcmp(a->node, b->node, sizeof(a->node));
}

/*
 * What run @r of @call must show: one page not moved, the held one, and
 * every other on node 1; the region in huge pages; every word as
 * written; each page moved copied by a job, once (the held one never:
 * it has a reference more); for move_pages(2), as many base pages
 * migrated.  migrate_pages(2) moves the process's other pages too, and
 * counts those it could not move with the held one (make run SCALE=1's
 * guest of 4 nodes: 253 in both runs).
 */
static int mig_expected(enum mig_call call, const struct mig_run *r)
{
	long moved = MIG_THPS - 1;
	long long pages = moved * (long long)(THP_SIZE / MIG_PAGE);

	return (call == MIG_MIGRATE_PAGES ? r->ret >= 1 : r->ret == 1) &&
	       r->huge_kb == MIG_LEN >> 10 && !r->bad &&
	       r->on_node1 == moved && r->copied == pages &&
	       (call == MIG_MIGRATE_PAGES ? r->pages >= pages :
					    r->pages == pages);
}

static void mig_test(const struct mig_case *c)
{
	static struct mig_run serial, run;
	struct mig_try t = { c, &run };
	int tries, ret;

	if (c->hugetlb && (huge_node_free(THP_SIZE, 0) < (long)MIG_THPS ||
			   huge_node_free(THP_SIZE, 1) < (long)MIG_THPS)) {
		report(0, c->name, "2 MiB pool: %lld free on node 0, %lld on node 1; a run needs %lu on each",
		       huge_node_free(THP_SIZE, 0), huge_node_free(THP_SIZE, 1),
		       MIG_THPS);
		return;
	}
	trace_record_tgid(1);
	ret = ktask_threads_set(1) ? -errno : mig_run(c, &serial);
	ktask_threads_set(0);
	tries = ret ? ret : retry_for_helpers(c->name, mig_attempt, &t);
	trace_record_tgid(0);
	if (tries < 0) {
		report(0, c->name, "could not set up a run: %s",
		       strerror(-tries));
		return;
	}
	report(mig_same(c->call, &serial, &run) &&
	       mig_expected(c->call, &serial) && mig_expected(c->call, &run) &&
	       serial.helped <= 1 && run.helped >= 2 &&
	       !run.seen.foreign,
	       c->name,
	       "%lu %s, one held; serial: returned %ld, status %d, %lld kB huge, %lld pages and %lld THPs migrated, %lld pages copied by jobs, %ld on node 1, %ld words wrong, %d threads; ktask (%d runs): returned %ld, status %d, %lld kB, %lld and %lld, %lld copied, %ld on node 1, %ld wrong, %d threads, %d helpers of another process; %s",
	       MIG_THPS, c->hugetlb ? "2 MiB hugetlb pages" : "THPs",
	       serial.ret, serial.status[0], serial.huge_kb, serial.pages,
	       serial.thps, serial.copied, serial.on_node1, serial.bad,
	       serial.helped, tries, run.ret, run.status[0], run.huge_kb,
	       run.pages, run.thps, run.copied, run.on_node1, run.bad,
	       run.helped, run.seen.foreign,
	       mig_same(c->call, &serial, &run) ? "as serial" : "not as serial");
}

/*
 * The other thread of the writer tests: an increment of the first word
 * of each MIG_WRITE_STRIDE (a copy job's smallest chunk) of the region in
 * turn, without a pause, until told to stop; how many it made in each.
 * An increment stored in the old page after its copy is missing from the
 * new one for good, as the next ones add to the copy.
 */
#define MIG_WRITE_STRIDE	(512UL << 10)
#define MIG_WORDS		(MIG_LEN / MIG_WRITE_STRIDE)

struct mig_writer {
	const struct thp_region	*r;
	volatile int		stop;
	uint64_t		adds[MIG_WORDS];
	volatile long		stores;
};

static void *mig_write(void *arg)
{
	struct mig_writer *w = arg;
	volatile uint64_t *word;
	size_t i;

	while (!w->stop) {
		for (i = 0; i < MIG_WORDS && !w->stop; i++) {
			word = (uint64_t *)(w->r->mem + i * MIG_WRITE_STRIDE);
			*word = *word + 1;
			w->adds[i]++;
			w->stores++;
		}
	}
	return NULL;
}

/*
 * First words of @w's region not as filled plus the writer's increments,
 * each put back as filled for thp_bad().
 */
static long mig_writer_lost(const struct mig_writer *w)
{
	long lost = 0;
	size_t i, at;

	for (i = 0; i < MIG_WORDS; i++) {
		uint64_t *word = (uint64_t *)(w->r->mem + i * MIG_WRITE_STRIDE);

		at = i * MIG_WRITE_STRIDE / sizeof(*word);
		lost += *word != thp_word(at) + w->adds[i];
		*word = thp_word(at);
	}
	return lost;
}

struct mig_writer_run {
	struct mig_run		run;
	long			lost;
	long			stores;		/* during the move */
};

/*
 * One run of a writer test: map and fill, move with the writer on,
 * and look.  -errno if the run could not be set up.
 */
static int mig_writer_run(const struct mig_case *c, struct mig_writer_run *r)
{
	static struct mig_writer w;
	struct thp_region region;
	pthread_t tid;
	int ret;

	memset(r, 0, sizeof(*r));
	ret = mig_map(c, &region);
	if (ret)
		return ret;
	memset(&w, 0, sizeof(w));
	w.r = &region;
	r->run.huge_kb = thp_huge_kb(&region);
	ret = -pthread_create(&tid, NULL, mig_write, &w);
	if (!ret) {
		usleep(1000);
		r->stores = -w.stores;
		mig_move(c, &region, &r->run);
		r->stores += w.stores;
		w.stop = 1;
		pthread_join(tid, NULL);
		r->lost = mig_writer_lost(&w);
		r->run.bad = thp_bad(&region);
	}
	thp_unmap(&region);
	return ret;
}

struct mig_writer_try {
	const struct mig_case	*c;
	struct mig_writer_run	*r;
};

/*
 * A run in which a job copied a page early, with a helper's chunk, or one
 * that lost an increment or a word, which a retry must not hide.
 */
static int mig_writer_attempt(void *ctx)
{
	struct mig_writer_try *t = ctx;
	int ret = mig_writer_run(t->c, t->r);

	return ret ? ret : (t->r->run.copied > 0 && t->r->run.seen.chunks) ||
			   t->r->lost || t->r->run.bad;
}

static void mig_writer_test(const struct mig_case *c)
{
	static struct mig_writer_run r;
	struct mig_writer_try t = { c, &r };
	int tries;

	trace_record_tgid(1);
	tries = retry_for_helpers(c->name, mig_writer_attempt, &t);
	trace_record_tgid(0);
	if (tries < 0) {
		report(0, c->name, "could not set up a run: %s",
		       strerror(-tries));
		return;
	}
	/* A run without a helper's chunk raced nothing against the writer. */
	report(r.run.ret >= 0 && r.run.huge_kb == MIG_LEN >> 10 && !r.lost &&
	       !r.run.bad && r.stores && r.run.copied > 0 &&
	       r.run.seen.chunks && !r.run.seen.foreign,
	       c->name,
	       "%lu %s, the first word of each 512 KiB in turn incremented (%ld times during the move): returned %ld, %lld kB huge, %lld pages copied by jobs, %d threads, %d chunks by helpers (want > 0), %d helpers of another process, %ld first words missing increments, %ld other words wrong (%d runs)",
	       MIG_THPS, c->hugetlb ? "2 MiB hugetlb pages" : "THPs",
	       r.stores, r.run.ret, r.run.huge_kb, r.run.copied,
	       r.run.helped, r.run.seen.chunks, r.run.seen.foreign, r.lost,
	       r.run.bad, tries);
}

#define PIN_ROUNDS	400
#define PIN_FOLIOS	2
#define PIN_FOLIO	(1UL << 20)
#define MTHP		"/sys/kernel/mm/transparent_hugepage/hugepages-"
#define MTHP_1M_FAULTS	MTHP "1024kB/stats/anon_fault_alloc"

struct mig_pinner {
	void		*page;
	volatile int	stop;
	volatile long	cycles;		/* pins released */
	int		err;		/* of the first map that failed */
};

/* Pin @arg's page for DMA and unpin it, until told to stop. */
static void *mig_pin(void *arg)
{
	struct mig_pinner *p = arg;

	while (!p->stop) {
		p->err = dma_map(p->page, IOVA_BASE, PAGE);
		if (p->err)
			break;
		dma_unmap(IOVA_BASE, PAGE);
		p->cycles++;
	}
	return NULL;
}

/* Write @round into the first word of each base page of @r. */
static void mig_pin_stamp(const struct thp_region *r, uint64_t round)
{
	size_t i;

	for (i = 0; i < r->len; i += MIG_PAGE)
		*(volatile uint64_t *)(r->mem + i) = round;
}

/* Base pages of @r whose first word is not @round. */
static long mig_pin_stale(const struct thp_region *r, uint64_t round)
{
	long stale = 0;
	size_t i;

	for (i = 0; i < r->len; i += MIG_PAGE)
		stale += *(volatile uint64_t *)(r->mem + i) != round;
	return stale;
}

/*
 * move_pages(2) of both folios of @r to the node they are not on, one
 * call and so one batch: 1 if both moved, 0 if not; or, if they are on
 * different nodes (a pinned one did not move), the first moved to the
 * second's, 2; or -errno.
 */
static long mig_pin_swap(const struct thp_region *r)
{
	void *pages[PIN_FOLIOS];
	int from[PIN_FOLIOS], to[PIN_FOLIOS], status[PIN_FOLIOS];
	int i, apart;
	long ret;

	for (i = 0; i < PIN_FOLIOS; i++)
		pages[i] = r->mem + i * PIN_FOLIO;
	if (syscall(SYS_move_pages, 0, PIN_FOLIOS, pages, NULL, from, 0))
		return -errno;
	apart = from[0] != from[1];
	for (i = 0; i < PIN_FOLIOS; i++) {
		to[i] = apart ? from[1] : !from[0];
		status[i] = -1;
	}
	ret = syscall(SYS_move_pages, 0, PIN_FOLIOS, pages, to, status,
		      MPOL_MF_MOVE);
	if (ret < 0)
		return -errno;
	if (apart)
		return 2;
	/* A page not moved: move_pages(2) says how many, not which. */
	if (ret > 0)
		return 0;
	for (i = 0; i < PIN_FOLIOS; i++)
		if (status[i] != to[i])
			return 0;
	return 1;
}

/*
 * The setting of one size of anonymous folio (MTHP "2048kB/enabled"):
 * the bracketed word of @buf, or "never" if none.
 */
static const char *mig_pin_mode(char *buf, size_t size, const char *file)
{
	char *open, *close;

	if (read_line(file, buf, size) || !(open = strchr(buf, '[')) ||
	    !(close = strchr(open, ']')))
		return "never";
	*close = '\0';
	return open + 1;
}

struct mig_pin_run {
	long	rounds, together, stale;
	long long faults, copied;
	int	err;
};

/*
 * Rounds of moves of @r's two folios while @p pins and unpins the first,
 * each round's number in every base page before it, until a page lacks
 * it or PIN_ROUNDS.
 */
static void mig_pin_rounds(const struct thp_region *r, struct mig_pinner *p,
			   struct mig_pin_run *run)
{
	long moved;

	trace_start();
	write_str(TRACE THP_COPY_EVENT, "1\n");
	while (!run->err && !run->stale && !p->err && run->rounds < PIN_ROUNDS) {
		mig_pin_stamp(r, ++run->rounds);
		moved = mig_pin_swap(r);
		if (moved < 0)
			run->err = moved;
		run->together += moved == 1;
		run->stale = mig_pin_stale(r, run->rounds);
	}
	write_str(TRACE THP_COPY_EVENT, "0\n");
	trace_stop();
	run->copied = thp_copied();
}

/*
 * Anonymous memory in 1 MiB folios, not 2 MiB ones, for @r: a batch of
 * migrate_pages() stops at 512 base pages, so two 1 MiB folios are one
 * batch where two 2 MiB ones are two.  The settings are put back.
 */
static void mig_pin_test(const char *name)
{
	char mode_1m[64], mode_2m[64], buf[128];
	struct mig_pinner p = {};
	struct mig_pin_run run = {};
	struct thp_region r;
	pthread_t tid;

	snprintf(mode_1m, sizeof(mode_1m), "%s\n",
		 mig_pin_mode(buf, sizeof(buf), MTHP "1024kB/enabled"));
	snprintf(mode_2m, sizeof(mode_2m), "%s\n",
		 mig_pin_mode(buf, sizeof(buf), MTHP "2048kB/enabled"));
	run.err = vfio_open();
	if (!run.err && (write_str(MTHP "1024kB/enabled", "madvise\n") ||
			 write_str(MTHP "2048kB/enabled", "never\n")))
		run.err = -errno;
	if (!run.err)
		run.err = thp_map(&r, PIN_FOLIOS * PIN_FOLIO, 0);
	if (!run.err) {
		run.faults = -read_num(MTHP_1M_FAULTS);
		mig_pin_stamp(&r, 0);
		run.faults += read_num(MTHP_1M_FAULTS);
		p.page = r.mem;
		run.err = -pthread_create(&tid, NULL, mig_pin, &p);
		if (!run.err) {
			mig_pin_rounds(&r, &p, &run);
			p.stop = 1;
			pthread_join(tid, NULL);
		}
		thp_unmap(&r);
	}
	write_str(MTHP "1024kB/enabled", mode_1m);
	write_str(MTHP "2048kB/enabled", mode_2m);
	report(!run.err && !p.err && run.faults == PIN_FOLIOS && !run.stale &&
	       run.together > 0 && run.copied > 0 && p.cycles > 0, name,
	       "%d folios of 1 MiB (%lld faulted in), the first pinned and unpinned %ld times meanwhile (map errno %d): %ld rounds, both moved in one call in %ld (want > 0), %lld pages copied by the copy jobs the trace kept (want > 0), %ld base pages without the round's number (want 0), %s",
	       PIN_FOLIOS, run.faults, p.cycles, p.err, run.rounds,
	       run.together, run.copied, run.stale,
	       run.err ? strerror(-run.err) : "no error");
}

static const struct mig_case mig_cases[] = {
	{ "migrate_move_pages", MIG_MOVE_PAGES, 0, 0 },
	{ "migrate_pages_node", MIG_MIGRATE_PAGES, 0, 0 },
	{ "migrate_hugetlb_move_pages", MIG_MOVE_PAGES, 1, 0 },
	{ "migrate_hugetlb_node", MIG_MIGRATE_PAGES, 1, 0 },
	{ "migrate_thp_writer", MIG_MOVE_PAGES, 0, 1 },
	{ "migrate_hugetlb_writer", MIG_MOVE_PAGES, 1, 1 },
};

void run_migrate_tests(const struct boot *b)
{
	size_t i;

	(void)b;
	ktap_plan(ARRAY_SIZE(mig_cases) + 1);
	for (i = 0; i < ARRAY_SIZE(mig_cases); i++) {
		if (mig_cases[i].writer)
			mig_writer_test(&mig_cases[i]);
		else
			mig_test(&mig_cases[i]);
	}
	mig_pin_test("migrate_pin_released");
}
