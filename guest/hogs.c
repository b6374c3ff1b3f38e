// SPDX-License-Identifier: GPL-2.0
/* CPU hogs (hogs.h). */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
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
 * Late hogs wait for a ktask helper to start, as this trace instance
 * records it: its one event is ktask_helper_start, of any job (the guest
 * runs none but the call's meanwhile; a helper is no fork that
 * set_event_pid's event-fork would follow).  The watching hog sleeps in
 * a read of its trace_pipe, costing no CPU, and wakes as the helper
 * starts.  It used to look at the process's Threads: in /proc every
 * 10 ms, and a call that returns within a few looks, a VFIO map of
 * 256 MiB of THPs on make run's kernel, returned before the hogs ran in
 * 40 calls of 40 (4 vCPUs).
 */
#define HOGS_TRACE	"/sys/kernel/tracing/instances/ktask-hogs/"
#define HOGS_EVENT	HOGS_TRACE "events/ktask/ktask_helper_start/enable"

/* A trace_pipe that will read a line once a ktask helper starts. */
static int helper_start_pipe(void)
{
	int fd, err;

	if (mkdir(HOGS_TRACE, 0700) && errno != EEXIST)
		return -errno;
	err = write_str(HOGS_EVENT, "1\n") ?:
	      write_trunc(HOGS_TRACE "trace", "");
	if (err)
		return err;
	fd = open(HOGS_TRACE "trace_pipe", O_RDONLY | O_CLOEXEC);
	return fd < 0 ? -errno : fd;
}

/*
 * Hog number @i of @nr, with @watch a trace_pipe from
 * helper_start_pipe() (-1: none): the first waits for a helper to
 * start and lets the others go at once, one byte each down @go; they wait
 * in read(), which costs no CPU.  Waiting 2 ms more, for the helper to
 * take a chunk first, let 38 of 40 such maps return before the hogs ran:
 * a helper that the hogs starve before its first chunk is a busy call
 * too.  A hog whose parent dies exits.
 */
static void hog_wait(int i, int nr, int watch, const int go[2])
{
	char c = 0, line[256];

	prctl(PR_SET_PDEATHSIG, SIGKILL);
	if (watch < 0)
		return;
	if (i) {
		if (read(go[0], &c, 1) != 1)
			_exit(0);
		return;
	}
	if (read(watch, line, sizeof(line)) <= 0)
		_exit(0);
	for (nr = (nr < MAX_HOGS ? nr : MAX_HOGS) - 1; nr > 0; nr--)
		if (write(go[1], &c, 1) != 1)
			_exit(0);
}

/*
 * Start @nr hogs on the last @nr vCPUs, at once or, if @late, once a
 * ktask helper starts (whose job found every vCPU idle when it planned
 * it, and which finds a hog beside it from then on); 0 or -errno, once
 * the load has settled (wait_load_settle()).  A hog is on its vCPU before
 * it waits: the scheduler puts a new task on an idle CPU, and there it is
 * load (a new task's average starts at half the CPU's capacity) wherever
 * it waits.
 */
int hogs_start_late(struct hogs *h, int nr, int vcpus, bool late)
{
	int i, ret = 0, pipe_fd = -1, go[2] = { -1, -1 };

	h->nr = 0;
	if (late) {
		h->late = true;
		pipe_fd = helper_start_pipe();
		if (pipe_fd < 0)
			return pipe_fd;
		if (pipe(go)) {
			ret = -errno;
			close(pipe_fd);
			return ret;
		}
	}
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
			hog_wait(i, nr, pipe_fd, go);
			hog(&h->counters[i].count);
		}
		h->pids[h->nr++] = pid;
	}
	if (late) {
		close(pipe_fd);
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
	return hogs_start_late(h, nr, vcpus, false);
}

/*
 * Kill the hogs, and return once their load has left the average
 * (wait_load_settle()): a job started right after would find a vCPU busy
 * whenever anything ran there, and plan no helper for it.  Late hogs'
 * event goes off too: with an event on, every job takes a trace id.
 */
void hogs_stop(struct hogs *h)
{
	int i, ran = h->nr;

	for (i = 0; i < h->nr; i++) {
		kill(h->pids[i], SIGKILL);
		waitpid(h->pids[i], NULL, 0);
	}
	h->nr = 0;
	if (h->late)
		write_str(HOGS_EVENT, "0\n");
	h->late = false;
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
