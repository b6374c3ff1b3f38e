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
 *				every helper a thread of this process (a
 *				"ktask" thread in the trace, never a kworker),
 *				and free memory (free_kb()) after the last
 *				cycle is within free_slack_kb(PMEM_SLACK_KB)
 *				of its value after the first, though each
 *				cycle frees and allocates the range's struct
 *				pages (16 MiB a GiB): a leak of them would be
 *				304 MiB.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "pmem.h"
#include "suites.h"

#define PMEM_CYCLES	20
#define PMEM_SLACK_KB	(8 << 10)

/* The ktask events of PMEM_FUNC since trace_start(). */
struct pmem_seen {
	int	jobs;		/* ktask_job_end */
	int	threads;	/* the most threads= of those */
	int	helpers;	/* ktask_helper_end of a thread ("ktask-") */
	int	workers;	/* ktask_helper_end of a kworker */
};

static void pmem_trace(struct pmem_seen *s)
{
	char line[512], *at;
	FILE *f = fopen(TRACE "trace", "r");

	memset(s, 0, sizeof(*s));
	while (f && fgets(line, sizeof(line), f)) {
		if (line[0] == '#' || !strstr(line, PMEM_FUNC))
			continue;
		if (strstr(line, "ktask_job_end:")) {
			s->jobs++;
			at = strstr(line, " threads=");
			if (at && atoi(at + 9) > s->threads)
				s->threads = atoi(at + 9);
		} else if (strstr(line, "ktask_helper_end:")) {
			at = line + strspn(line, " ");
			s->helpers += !strncmp(at, "ktask-", 6);
			s->workers += !strncmp(at, "kworker", 7);
		}
	}
	if (f)
		fclose(f);
}

static void zone_device_rebind(void)
{
	const char *name = "zone_device_rebind";
	long long size = pmem_size(), free_first = -1, free_last = -1;
	long long slack = free_slack_kb(PMEM_SLACK_KB);
	int cycle, jobs = 0, helped = 0, helpers = 0, workers = 0;
	unsigned long long wall;
	struct pmem_seen s;
	int ret = 0;

	if (size <= 0 || !pmem_bound()) {
		report(0, name, "no persistent memory bound to nd_pmem (memmap= at boot)");
		return;
	}
	for (cycle = 0; cycle < PMEM_CYCLES && !ret; cycle++) {
		ret = pmem_unbind();
		if (ret)
			break;
		trace_start();
		write_str(HELPER_END, "1\n");
		ret = pmem_bind(&wall);
		write_str(HELPER_END, "0\n");
		pmem_trace(&s);
		jobs += s.jobs == 1;
		helped += s.threads >= 2 && s.helpers;
		helpers += s.helpers;
		workers += s.workers;
		free_last = free_kb();
		if (!cycle)
			free_first = free_last;
	}
	report(!ret && jobs == PMEM_CYCLES && helped && !workers &&
	       free_last >= free_first - slack && pmem_bound(), name,
	       "%d cycles of %lld MiB (error %d): %d with one job, %d helped, helpers %d threads %d kworkers, free memory %+lld kB after the first (slack %lld kB)",
	       cycle, size >> 20, ret, jobs, helped, helpers, workers,
	       free_last - free_first, slack);
}

void run_zone_device_tests(const struct boot *b)
{
	(void)b;
	ktap_plan(1);
	zone_device_rebind();
}
