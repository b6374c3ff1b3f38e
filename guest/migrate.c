// SPDX-License-Identifier: GPL-2.0
/*
 * Page migration (suite "migrate" of make test): migrate_pages_batch()
 * copies the contents of a batch's large anonymous folios with a ktask
 * job between its unmap and move phases (the mm_migrate_folios_copy
 * event says how many pages it had to copy).  Each run maps MIG_MB of
 * transparent huge pages on node 0 (thp.c; AnonHugePages says they
 * are), writes a pattern, holds a page of the last THP in a pipe (vmsplice(): a
 * reference more, so that THP cannot move) and moves the region to node
 * 1; once with ktask.max_threads=1, as serial code, once with the boot's
 * limit (retried up to HELPER_TRIES times until a helper took a chunk).
 *
 *	migrate_move_pages	move_pages(2), a THP an entry: its result,
 *				each entry's status, each page's node and
 *				the growth of thp_migration_success equal to
 *				the serial run's; every byte as written;
 *				every THP but the held one on node 1, each
 *				copied by a job; no job of the serial run
 *				with a helper, and of the other one helped,
 *				every helper a thread of this process (its
 *				tgid in the trace)
 *	migrate_pages_node	the same with migrate_pages(2) of the whole
 *				process from node 0 to 1, but no status
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/uio.h>
#include <unistd.h>

#include "lib.h"
#include "suites.h"
#include "thp.h"

#define MIG_MB		128
#define MIG_LEN		((size_t)MIG_MB << 20)
#define MIG_PAGE	4096UL
#define MIG_PAGES	(MIG_LEN / MIG_PAGE)
#define MIG_THPS	(MIG_LEN / THP_SIZE)

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

enum mig_call { MIG_MOVE_PAGES, MIG_MIGRATE_PAGES };

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

/*
 * One run: map, fill, hold the last THP, move, and look.  -errno if the
 * run could not be set up.
 */
static int mig_run(enum mig_call call, struct mig_run *r)
{
	long long pages0, thps0;
	struct thp_region region;
	int pipefd[2], ret;
	size_t i;

	memset(r, 0, sizeof(*r));
	ret = thp_map(&region, MIG_LEN, 0);
	if (ret)
		return ret;
	thp_fill(&region);
	r->huge_kb = thp_huge_kb(&region);
	ret = mig_hold(&region, pipefd);
	if (ret) {
		thp_unmap(&region);
		return ret;
	}
	pages0 = read_key("/proc/vmstat", "pgmigrate_success", ' ');
	thps0 = read_key("/proc/vmstat", "thp_migration_success", ' ');
	trace_start();
	write_str(HELPER_END, "1\n");
	write_str(TRACE THP_COPY_EVENT, "1\n");
	if (call == MIG_MOVE_PAGES)
		r->ret = thp_move_pages(&region, 1, r->status);
	else
		r->ret = thp_migrate_pages(0, 1);
	write_str(TRACE THP_COPY_EVENT, "0\n");
	write_str(HELPER_END, "0\n");
	r->helped = trace_threads(THP_COPY_FUNC);
	trace_helpers(THP_COPY_FUNC, -1, &r->seen);
	r->copied = thp_copied();
	r->pages = read_key("/proc/vmstat", "pgmigrate_success", ' ') - pages0;
	r->thps = read_key("/proc/vmstat", "thp_migration_success", ' ') -
		  thps0;
	r->bad = thp_bad(&region);
	if (thp_nodes(&region, r->node))
		r->bad = -1;
	for (i = 0; i < MIG_PAGES; i += THP_SIZE / MIG_PAGE)
		r->on_node1 += r->node[i] == 1;
	close(pipefd[0]);
	close(pipefd[1]);
	thp_unmap(&region);
	return 0;
}

struct mig_try {
	enum mig_call	call;
	struct mig_run	*run;
};

static int mig_attempt(void *ctx)
{
	struct mig_try *t = ctx;
	int ret = mig_run(t->call, t->run);

	return ret ? ret : t->run->helped >= 2 && t->run->seen.chunks;
}

/*
 * Whether run @b ended as the serial run @a, for the region: what
 * migrate_pages(2) returns counts the process's other pages too.
 */
static int mig_same(enum mig_call call, const struct mig_run *a,
		    const struct mig_run *b)
{
	return (call == MIG_MIGRATE_PAGES || a->ret == b->ret) &&
	       a->thps == b->thps &&
	       !memcmp(a->status, b->status, sizeof(a->status)) &&
	       !memcmp(a->node, b->node, sizeof(a->node));
}

static void mig_test(const char *name, enum mig_call call)
{
	static struct mig_run serial, run;
	struct mig_try t = { call, &run };
	long thps = MIG_THPS;
	long long moved = (thps - 1) * (THP_SIZE / MIG_PAGE);
	int tries, ret;

	trace_record_tgid(1);
	ret = ktask_threads_set(1) ? -errno : mig_run(call, &serial);
	ktask_threads_set(0);
	tries = ret ? ret : retry_for_helpers(name, mig_attempt, &t);
	trace_record_tgid(0);
	if (tries < 0) {
		report(0, name, "could not set up a run: %s", strerror(-tries));
		return;
	}
	report(mig_same(call, &serial, &run) && serial.ret >= 0 && run.ret >= 0 &&
	       serial.huge_kb == MIG_LEN >> 10 && run.huge_kb == MIG_LEN >> 10 &&
	       !serial.bad && !run.bad &&
	       serial.on_node1 == thps - 1 && run.on_node1 == thps - 1 &&
	       serial.copied >= moved && run.copied >= moved &&
	       serial.helped <= 1 && run.helped >= 2 && !run.seen.foreign,
	       name,
	       "%ld THPs, one held; serial: returned %ld, %lld kB huge, %lld pages and %lld THPs migrated, %lld pages copied by jobs, %ld on node 1, %ld words wrong, %d threads; ktask (%d runs): returned %ld, %lld kB, %lld and %lld, %lld copied, %ld on node 1, %ld wrong, %d threads, %d helpers of another process; %s",
	       thps, serial.ret, serial.huge_kb, serial.pages, serial.thps,
	       serial.copied, serial.on_node1, serial.bad, serial.helped,
	       tries, run.ret, run.huge_kb, run.pages, run.thps, run.copied,
	       run.on_node1, run.bad, run.helped, run.seen.foreign,
	       mig_same(call, &serial, &run) ? "as serial" : "not as serial");
}

void run_migrate_tests(const struct boot *b)
{
	(void)b;
	ktap_plan(2);
	mig_test("migrate_move_pages", MIG_MOVE_PAGES);
	mig_test("migrate_pages_node", MIG_MIGRATE_PAGES);
}
