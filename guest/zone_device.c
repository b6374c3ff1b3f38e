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
 */
#include "lib.h"
#include "pmem.h"
#include "suites.h"

#define PMEM_CYCLES	20
#define PMEM_SLACK_KB	(8 << 10)

static void zone_device_rebind(void)
{
	const char *name = "zone_device_rebind";
	long long size = pmem_size(), free_first = -1, free_last = -1;
	long long slack = free_slack_kb(PMEM_SLACK_KB);
	int cycle, jobs = 0, helped = 0, helpers = 0, foreign = 0, n;
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
		trace_start();
		write_str(HELPER_END, "1\n");
		ret = pmem_bind(&wall);
		write_str(HELPER_END, "0\n");
		trace_helpers(PMEM_FUNC, -1, &seen);
		trace_most("ktask_job_end:", PMEM_FUNC, " threads=", &n);
		jobs += n == 1;
		helped += trace_threads(PMEM_FUNC) >= 2 && seen.chunks;
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

void run_zone_device_tests(const struct boot *b)
{
	(void)b;
	ktap_plan(1);
	zone_device_rebind();
}
