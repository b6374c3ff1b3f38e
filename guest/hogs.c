// SPDX-License-Identifier: GPL-2.0
/* CPU hogs (hogs.h). */
#define _GNU_SOURCE
#include <errno.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "lib.h"
#include "hogs.h"

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
 * helper to take a chunk.  The watching hog sleeps 10 ms between looks,
 * so that its vCPU stays idle by the load average meanwhile: looking
 * every millisecond, a look taking most of one under TCG, kept it busy,
 * and a job whose caller shared its node found no idle core there for a
 * helper in about half the calls (ktask_job_start: wanted 2, planned 1).
 * Returns 0, or -1 once @pid is gone: its hogs then have nothing to load.
 */
static int wait_for_threads(pid_t pid)
{
	struct timespec ms = { 0, 10000000 }, two_ms = { 0, 2000000 };
	long long threads;
	char path[64];

	snprintf(path, sizeof(path), "/proc/%d/status", pid);
	while ((threads = read_key(path, "Threads", ':')) == 1)
		nanosleep(&ms, NULL);
	if (threads < 0)
		return -1;
	nanosleep(&two_ms, NULL);
	return 0;
}

/*
 * Hog number @i of @nr, with @watch > 0: the first watches process @watch
 * and then lets the others go, one byte each down @go; they wait in
 * read(), which costs no CPU.  One hog looks at /proc, not each: four
 * reading one process's status every millisecond spun on its locks, vCPUs
 * the host had descheduled holding them, and kept every vCPU busy.  A hog
 * whose parent dies, or whose watched process is gone, exits.
 */
static void hog_wait(int i, int nr, pid_t watch, const int go[2])
{
	char c = 0;

	prctl(PR_SET_PDEATHSIG, SIGKILL);
	if (watch <= 0)
		return;
	if (i) {
		if (read(go[0], &c, 1) != 1)
			_exit(0);
		return;
	}
	if (wait_for_threads(watch))
		_exit(0);
	for (nr = (nr < MAX_HOGS ? nr : MAX_HOGS) - 1; nr > 0; nr--)
		if (write(go[1], &c, 1) != 1)
			_exit(0);
}

/*
 * Start @nr hogs on the last @nr vCPUs, at once or, with @watch > 0,
 * once process @watch has more than one thread (its ktask helpers, which
 * find every vCPU idle when they start and a hog beside them from then
 * on); 0 or -errno, once the load has settled (wait_load_settle()).  A
 * hog is on its vCPU before it waits: the scheduler puts a new task on an
 * idle CPU, and there it is load (a new task's average starts at half the
 * CPU's capacity) wherever it waits.
 */
int hogs_start_with_threads(struct hogs *h, int nr, int vcpus, pid_t watch)
{
	int i, ret = 0, go[2] = { -1, -1 };

	h->nr = 0;
	if (watch > 0 && pipe(go))
		return -errno;
	for (i = 0; i < nr && i < MAX_HOGS; i++) {
		pid_t pid;

		h->counters[i].count = 0;
		pid = fork();
		if (pid < 0) {
			ret = -errno;
			break;
		}
		if (!pid) {
			pin_to(vcpus - 1 - i);
			hog_wait(i, nr, watch, go);
			hog(&h->counters[i].count);
		}
		h->pids[h->nr++] = pid;
	}
	if (watch > 0) {
		close(go[0]);
		close(go[1]);
	}
	/*
	 * Running hogs are load by then; waiting ones have left the average
	 * with the load of their start, and a job finds their vCPUs idle.
	 */
	if (!ret)
		wait_load_settle();
	return ret;
}

int hogs_start(struct hogs *h, int nr, int vcpus)
{
	return hogs_start_with_threads(h, nr, vcpus, 0);
}

/*
 * Kill the hogs, and return once their load has left the average
 * (wait_load_settle()): a job started right after would find a vCPU busy
 * whenever anything ran there, and plan no helper for it.
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
		wait_load_settle();
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
