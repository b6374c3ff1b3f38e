// SPDX-License-Identifier: GPL-2.0
/* CPU hogs (hogs.h). */
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

/*
 * ktask counts a CPU that runs a task as busy by the scheduler's average
 * of its load, whose half-life is about 32 ms: a hog of a moment ago is
 * not load yet, and one killed a moment ago still is, whenever anything
 * else runs there.  100 ms is three half-lives.
 */
static const struct timespec load_settle = { 0, 100000000 };

/* Map @h's counters, which its hogs write: 0 or -errno. */
int hogs_init(struct hogs *h)
{
	memset(h, 0, sizeof(*h));
	h->counters = mmap(NULL, MAX_HOGS * sizeof(*h->counters),
			   PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS,
			   -1, 0);
	if (h->counters == MAP_FAILED) {
		h->counters = NULL;
		return -errno;
	}
	return 0;
}

void hogs_exit(struct hogs *h)
{
	hogs_stop(h);
	munmap(h->counters, MAX_HOGS * sizeof(*h->counters));
	h->counters = NULL;
}

static void pin_to(int cpu)
{
	cpu_set_t set;

	CPU_ZERO(&set);
	CPU_SET(cpu, &set);
	sched_setaffinity(0, sizeof(set), &set);
}

static void hog(volatile unsigned long *count)
{
	for (;;)
		(*count)++;
}

/*
 * Until process @pid has had more than one thread for 2 ms, time for its
 * helper to take a chunk: the hog sleeps a millisecond between looks, so
 * its vCPU stays idle meanwhile.
 */
static void wait_for_threads(pid_t pid)
{
	struct timespec ms = { 0, 1000000 }, two_ms = { 0, 2000000 };
	char path[64];

	snprintf(path, sizeof(path), "/proc/%d/status", pid);
	while (read_key(path, "Threads", ':') == 1)
		nanosleep(&ms, NULL);
	nanosleep(&two_ms, NULL);
}

/*
 * Start @nr hogs on the last @nr vCPUs, at once or, with @watch > 0,
 * once process @watch has more than one thread (its ktask helpers, which
 * find every vCPU idle when they start and a hog beside them from then
 * on); 0 or -errno.  A hog is on its vCPU before it waits: the scheduler
 * puts a new task on an idle CPU, and there it is load (a new task's
 * average starts at half the CPU's capacity) wherever it waits.
 */
static int hogs_fork(struct hogs *h, int nr, int vcpus, pid_t watch)
{
	int i;

	h->nr = 0;
	for (i = 0; i < nr && i < MAX_HOGS; i++) {
		pid_t pid = fork();

		if (pid < 0)
			return -errno;
		if (!pid) {
			pin_to(vcpus - 1 - i);
			if (watch > 0)
				wait_for_threads(watch);
			hog(&h->counters[i].count);
		}
		h->pids[h->nr++] = pid;
	}
	return 0;
}

/* The hogs, load by the time it returns (load_settle). */
int hogs_start(struct hogs *h, int nr, int vcpus)
{
	int ret = hogs_fork(h, nr, vcpus, 0);

	if (!ret)
		nanosleep(&load_settle, NULL);
	return ret;
}

/*
 * The hogs, waiting for @watch's threads by the time it returns, and the
 * load of their start gone from the average (load_settle): a job started
 * then finds its vCPUs idle.
 */
int hogs_start_with_threads(struct hogs *h, int nr, int vcpus, pid_t watch)
{
	int ret = hogs_fork(h, nr, vcpus, watch);

	if (!ret)
		nanosleep(&load_settle, NULL);
	return ret;
}

/*
 * Kill the hogs, and return once their load has left the average
 * (load_settle): a job right after would otherwise find its CPUs busy and
 * plan no helper, as the busy cases of guarantees.c's left_behind() did
 * in 10 of 10 VFIO maps, each started as the last one's hogs died.
 */
void hogs_stop(struct hogs *h)
{
	int i, ran = h->nr;

	for (i = 0; i < h->nr; i++) {
		kill(h->pids[i], SIGKILL);
		waitpid(h->pids[i], NULL, 0);
	}
	h->nr = 0;
	if (ran)
		nanosleep(&load_settle, NULL);
}

unsigned long long hogs_count(struct hogs *h)
{
	unsigned long long sum = 0;
	int i;

	for (i = 0; i < h->nr; i++)
		sum += h->counters[i].count;
	return sum;
}

/* The hogs' summed rate over the next @ns nanoseconds, per microsecond. */
double hogs_rate(struct hogs *h, unsigned long long ns)
{
	unsigned long long c0 = hogs_count(h), t0 = now_ns(), t1;
	struct timespec ts = { ns / 1000000000ULL, ns % 1000000000ULL };

	nanosleep(&ts, NULL);
	t1 = now_ns();
	return (hogs_count(h) - c0) * 1000.0 / (t1 - t0);
}
