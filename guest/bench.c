// SPDX-License-Identifier: GPL-2.0
/*
 * The self-benchmark (mode "bench"): ktask's debugfs jobs at several
 * thread counts, one line per run on the console, for scripts/report.py:
 *
 *	ktask-bench: job=cpu threads=2 used=2 units=4096 wall_ns=... cpu_ns=... job_cpu_ns=...
 *	ktask-bench: error job=mem threads=4 errno=12 (Cannot allocate memory)
 *
 * Writing "<job> <threads>\n" to /sys/kernel/debug/ktask/bench runs the
 * job synchronously; reading the file then returns the result line.
 * Every user task that writes the file is the caller of the job, so its
 * helpers are threads of this process.  Repeats are the outermost loop,
 * so any drift spreads over all cases.
 */
#include <stdio.h>
#include <string.h>

#include "lib.h"
#include "suites.h"

#define PREFIX		"ktask-bench: "

static const char *const jobs[] = { "cpu", "mem" };

static void bench_one(const char *job, int threads)
{
	struct bench_result res;
	int ret = bench_run(job, threads, &res);

	if (ret)
		printf(PREFIX "error job=%s threads=%d errno=%d (%s)\n",
		       job, threads, -ret, strerror(-ret));
	else
		printf(PREFIX "%s\n", res.line);
}

void run_bench(const struct boot *b)
{
	int r, j, i;

	for (r = 0; r < b->repeat; r++)
		for (j = 0; j < (int)ARRAY_SIZE(jobs); j++)
			for (i = 0; i < b->nthreads; i++)
				bench_one(jobs[j], b->threads[i]);
}
