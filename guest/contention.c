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

#include "guest.h"

#define PREFIX		"ktask-contention: "
#define MAX_HOGS	64
#define BASE_WINDOW_NS	200000000ULL	/* hog rate measured before a job */

/* One counter per cache line, so hogs do not slow each other down. */
struct hog_counter {
	volatile unsigned long	count;
	char			pad[64 - sizeof(unsigned long)];
};

struct hogs {
	int			nr;
	pid_t			pids[MAX_HOGS];
	struct hog_counter	*counters;
};

static void hog(volatile unsigned long *count, int cpu)
{
	cpu_set_t set;

	CPU_ZERO(&set);
	CPU_SET(cpu, &set);
	sched_setaffinity(0, sizeof(set), &set);
	for (;;)
		(*count)++;
}

/* Start @nr hogs on the last @nr vCPUs; 0 or -errno. */
static int hogs_start(struct hogs *h, int nr, int vcpus)
{
	int i;

	h->nr = 0;
	for (i = 0; i < nr && i < MAX_HOGS; i++) {
		pid_t pid = fork();

		if (pid < 0)
			return -errno;
		if (!pid)
			hog(&h->counters[i].count, vcpus - 1 - i);
		h->pids[h->nr++] = pid;
	}
	return 0;
}

static void hogs_stop(struct hogs *h)
{
	int i;

	for (i = 0; i < h->nr; i++) {
		kill(h->pids[i], SIGKILL);
		waitpid(h->pids[i], NULL, 0);
	}
	h->nr = 0;
}

/* Hogs on every vCPU while the mm benchmark runs a "busy" case. */
static struct hogs busy;

int busy_start(int vcpus)
{
	if (!busy.counters) {
		busy.counters = mmap(NULL, MAX_HOGS * sizeof(*busy.counters),
				     PROT_READ | PROT_WRITE,
				     MAP_SHARED | MAP_ANONYMOUS, -1, 0);
		if (busy.counters == MAP_FAILED) {
			busy.counters = NULL;
			return -errno;
		}
	}
	return hogs_start(&busy, vcpus, vcpus);
}

void busy_stop(void)
{
	hogs_stop(&busy);
}

static unsigned long long hogs_count(struct hogs *h)
{
	unsigned long long sum = 0;
	int i;

	for (i = 0; i < h->nr; i++)
		sum += h->counters[i].count;
	return sum;
}

/* The hogs' summed rate over the next @ns nanoseconds, per microsecond. */
static double hogs_rate(struct hogs *h, unsigned long long ns)
{
	unsigned long long c0 = hogs_count(h), t0 = now_ns(), t1;
	struct timespec ts = { ns / 1000000000ULL, ns % 1000000000ULL };

	nanosleep(&ts, NULL);
	t1 = now_ns();
	return (hogs_count(h) - c0) * 1000.0 / (t1 - t0);
}

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

void run_contention(int vcpus, int repeat)
{
	static const char *const loads[] = { "idle", "half", "full" };
	struct hogs h = { 0 };
	int r, l, nr_hogs;

	h.counters = mmap(NULL, MAX_HOGS * sizeof(*h.counters),
			  PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS,
			  -1, 0);
	if (h.counters == MAP_FAILED) {
		printf(PREFIX "error: mmap: %s\n", strerror(errno));
		return;
	}
	for (r = 0; r < repeat; r++) {
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
	munmap(h.counters, MAX_HOGS * sizeof(*h.counters));
}
