// SPDX-License-Identifier: GPL-2.0
/*
 * Device memory's struct pages (suite "zone_device" of make test): the
 * pmem driver maps the boot's legacy persistent memory with struct pages
 * each time it binds it (pmem.c), and memmap_init_zone_device()
 * initialises them with a ktask job.
 *
 *	zone_device_rebind	PMEM_CYCLES unbinds and binds of the namespace
 *				from this process: each bind ran one job, in
 *				one of them at least a helper took a chunk,
 *				every helper a thread of this process (its
 *				tgid in the trace, never a kworker's), and
 *				free memory (free_kb()) after the last
 *				cycle is within free_slack_kb(PMEM_SLACK_KB)
 *				of its value after the first, though each
 *				cycle frees and allocates the range's struct
 *				pages (16 MiB a GiB): a leak of them would be
 *				304 MiB.
 *	zone_device_devdax_2m	the namespace given to a dax device of 2 MiB
 *				compound pages, struct pages in RAM, as
 *				ndctl create-namespace -m devdax does: the
 *				bind ran one job, a helper took a chunk of
 *				it (a bind in which none did is made again,
 *				3 at most), every helper a thread of this
 *				process; a word written to each 4 KiB
 *				page of /dev/daxR.N through a shared
 *				mapping reads back with process_vm_readv(),
 *				through each page's struct page; once the
 *				namespace is back with the pmem driver,
 *				free memory is within
 *				free_slack_kb(PMEM_SLACK_KB) of its value
 *				before
 *	zone_device_devdax_2m_altmap	the same with the struct pages in the
 *				device (an altmap)
 *	zone_device_devdax_4k	the same of base pages
 *	zone_device_fsdax_2m_altmap	the namespace given to a pfn device
 *				(fsdax) with its struct pages in the device:
 *				the same but the mapping.  No 1 GiB pages:
 *				the GiB of memmap= has no room for the info
 *				block before a GiB-aligned page.
 */
#include <string.h>

#include "lib.h"
#include "pmem.h"
#include "suites.h"

#define PMEM_CYCLES	20
#define PMEM_SLACK_KB	(8 << 10)

/*
 * The jobs that initialised device struct pages since trace_start()
 * (ktask_job_end events), their helpers into @seen and the most threads
 * one ran on into @threads; the events off.
 */
static int zone_device_jobs(struct helpers_seen *seen, int *threads)
{
	int jobs = 0;

	*threads = trace_stop_helpers(PMEM_FUNC);
	trace_helpers(PMEM_FUNC, -1, seen);
	trace_most("ktask_job_end:", PMEM_FUNC, " threads=", &jobs);
	return jobs;
}

static void zone_device_rebind(void)
{
	const char *name = "zone_device_rebind";
	long long size = pmem_size(), free_first = -1, free_last = -1;
	long long slack = free_slack_kb(PMEM_SLACK_KB);
	int cycle, jobs = 0, helped = 0, helpers = 0, foreign = 0, threads;
	struct helpers_seen seen;
	unsigned long long wall;
	int ret = 0;

	if (size <= 0 || !pmem_bound()) {
		report(0, name, "no persistent memory bound to nd_pmem (memmap= at boot)");
		return;
	}
	trace_record_tgid(1);
	for (cycle = 0; cycle < PMEM_CYCLES && !ret; cycle++) {
		ret = pmem_unbind();
		if (ret)
			break;
		trace_start_helpers();
		ret = pmem_bind(&wall);
		jobs += zone_device_jobs(&seen, &threads) == 1;
		helped += threads >= 2 && seen.chunks;
		helpers += seen.helpers;
		foreign += seen.foreign;
		free_last = free_kb();
		if (!cycle)
			free_first = free_last;
	}
	trace_record_tgid(0);
	report(!ret && jobs == PMEM_CYCLES && helped && !foreign &&
	       free_last >= free_first - slack && pmem_bound(), name,
	       "%d cycles of %lld MiB (error %d): %d with one job, %d helped, %d helpers, %d of another process, free memory %+lld kB after the first (slack %lld kB)",
	       cycle, size >> 20, ret, jobs, helped, helpers, foreign,
	       free_last - free_first, slack);
}

static const struct pmem_mode zone_device_modes[] = {
	{ "zone_device_devdax_2m", "dax_seed", "dax_pmem", 2UL << 20, "ram" },
	{ "zone_device_devdax_2m_altmap", "dax_seed", "dax_pmem", 2UL << 20,
	  "pmem" },
	{ "zone_device_devdax_4k", "dax_seed", "dax_pmem", 4096, "ram" },
	{ "zone_device_fsdax_2m_altmap", "pfn_seed", "nd_pmem", 2UL << 20,
	  "pmem" },
};

/* Binds of the namespace in a mode (struct pmem_mode): the last one's. */
struct mode_bind {
	const struct pmem_mode	*m;
	long long		free0, slack;	/* free memory before, in kB */
	long long		freed;		/* free memory after, less before */
	char			dev[32];
	unsigned long long	wall;
	struct helpers_seen	seen;
	int			ret, undo, jobs, threads, ok;
	long			bad;
};

/*
 * The namespace in mode @ctx->m, looked at, and back with the pmem driver:
 * 1 if the bind failed a check or a helper took a chunk of its job, 0 if
 * it is worth another (retry_for_helpers()).
 */
static int zone_device_mode_attempt(void *ctx)
{
	struct mode_bind *r = ctx;
	const struct pmem_mode *m = r->m;

	r->dev[0] = '\0';
	r->wall = 0;
	r->bad = 0;
	trace_record_tgid(1);
	trace_start_helpers();
	r->ret = pmem_mode_bind(m, r->dev, sizeof(r->dev), &r->wall);
	r->jobs = zone_device_jobs(&r->seen, &r->threads);
	trace_record_tgid(0);
	if (!r->ret && !strcmp(m->driver, "dax_pmem"))
		r->bad = pmem_dax_check(0x9e3779b97f4a7c15ULL + m->align +
					m->memmap[0]);
	r->undo = pmem_mode_unbind(m, r->dev);
	r->freed = free_kb() - r->free0;
	r->ok = !r->ret && !r->undo && r->jobs == 1 && !r->seen.foreign &&
		!r->bad && pmem_bound() && r->freed >= -r->slack;
	return !r->ok || (r->threads >= 2 && r->seen.chunks);
}

/* zone_device_mode_attempt() until a helper took part (3 binds at most). */
static void zone_device_mode(const struct pmem_mode *m)
{
	struct mode_bind r = {
		.m = m, .free0 = free_kb(),
		.slack = free_slack_kb(PMEM_SLACK_KB),
	};
	int tries = retry_for_helpers(m->name, zone_device_mode_attempt, &r);

	report(r.ok && r.threads >= 2 && r.seen.chunks, m->name,
	       "%s, %lu-byte pages, struct pages in %s: bind error %d in %llu ms, %d jobs, %d helpers (%d chunks; want 1 or more, %d binds), %d of another process; %s %ld; back to the pmem driver: error %d, free memory %+lld kB since the first bind (slack %lld kB)",
	       r.dev, m->align, m->memmap, r.ret, r.wall / 1000000, r.jobs,
	       r.seen.helpers, r.seen.chunks, tries, r.seen.foreign,
	       strcmp(m->driver, "dax_pmem") ?
			"not mapped" :
			"words wrong through the mapping (or -errno)",
	       r.bad, r.undo, r.freed, r.slack);
}

void run_zone_device_tests(const struct boot *b)
{
	size_t i;

	(void)b;
	ktap_plan(1 + ARRAY_SIZE(zone_device_modes));
	zone_device_rebind();
	for (i = 0; i < ARRAY_SIZE(zone_device_modes); i++)
		zone_device_mode(&zone_device_modes[i]);
}
