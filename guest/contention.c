// SPDX-License-Identifier: GPL-2.0
/*
 * The contention table: what a ktask job does on a machine that is not
 * idle, and what the machine's other work loses to it.
 *
 * For each load (no hog, a hog on half the vCPUs, a hog on every vCPU),
 * the "cpu" job of the self-benchmark runs at 1 thread and at one thread
 * per vCPU, the latter with priority lending on and off.  A hog is a
 * process pinned to one vCPU that counts as fast as it can; its rate
 * while a job runs, over its rate just before, is what the job left it.
 * One line per run:
 *
 *	ktask-contention: load=full hogs=2 threads=2 lending=on used=2
 *		wall_ns=... cpu_ns=... job_cpu_ns=... hog_base=... hog_during=...
 *
 * (hog rates in counts per microsecond, summed over the hogs).  Repeats
 * are the outer loop; the caller (this process, at nice 0) is not pinned.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "lib.h"
#include "hogs.h"
#include "suites.h"

#define PREFIX		"ktask-contention: "
#define BASE_WINDOW_NS	200000000ULL	/* hog rate measured before a job */

static void contention_one(struct hogs *h, const char *load, int threads,
			   int lending)
{
	unsigned long long c0, c1, t0, t1;
	struct bench_result res;
	double base, during;
	int ret;

	if (write_str(KNOB_LENDING, lending ? "1\n" : "0\n")) {
		printf(PREFIX "error: cannot set %s: %s\n", KNOB_LENDING,
		       strerror(errno));
		return;
	}
	base = h->nr ? hogs_rate(h, BASE_WINDOW_NS) : 0;
	c0 = hogs_count(h);
	t0 = now_ns();
	ret = bench_run("cpu", threads, &res);
	t1 = now_ns();
	c1 = hogs_count(h);
	during = h->nr ? (c1 - c0) * 1000.0 / (t1 - t0) : 0;
	if (ret) {
		printf(PREFIX "error load=%s threads=%d errno=%d (%s)\n",
		       load, threads, -ret, strerror(-ret));
		return;
	}
	printf(PREFIX "load=%s hogs=%d threads=%d lending=%s used=%d wall_ns=%llu cpu_ns=%llu job_cpu_ns=%llu hog_base=%.1f hog_during=%.1f\n",
	       load, h->nr, threads, lending ? "on" : "off", res.used,
	       res.wall_ns, res.cpu_ns, res.job_cpu_ns, base, during);
}

void run_contention(const struct boot *b)
{
	static const char *const loads[] = { "idle", "half", "full" };
	struct hogs h;
	int vcpus = b->vcpus, r, l, nr_hogs;

	if (hogs_init(&h)) {
		printf(PREFIX "error: mmap: %s\n", strerror(errno));
		return;
	}
	for (r = 0; r < b->repeat; r++) {
		for (l = 0; l < 3; l++) {
			nr_hogs = l == 0 ? 0 : l == 1 ? (vcpus + 1) / 2 : vcpus;
			if (hogs_start(&h, nr_hogs, vcpus)) {
				printf(PREFIX "error: fork: %s\n", strerror(errno));
				hogs_stop(&h);
				break;
			}
			contention_one(&h, loads[l], 1, 1);
			if (vcpus > 1) {
				contention_one(&h, loads[l], vcpus, 1);
				contention_one(&h, loads[l], vcpus, 0);
			}
			hogs_stop(&h);
		}
	}
	write_str(KNOB_LENDING, "1\n");
	hogs_exit(&h);
}
