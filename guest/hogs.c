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
#include <sys/prctl.h>
#include <sys/stat.h>
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

/*
 * Late hogs wait for a helper of a job of the thread function they were
 * given to start, as this trace instance records it (ktask_helper_start,
 * filtered by the function): a helper is made by copy_process() alone, no
 * fork that set_event_pid's event-fork would follow, and the event's
 * function is what only the call under test runs.  The watching hog
 * sleeps in a read of its trace_pipe, costing no CPU, and wakes as the
 * helper starts; a look at /proc for the process's threads, however
 * often, lets a call of a few milliseconds return first.
 */
#define HOGS_TRACE	TRACE "instances/ktask-hogs/"
#define HOGS_EVENT	HOGS_TRACE "events/ktask/ktask_helper_start/"

void hogs_exit(struct hogs *h)
{
	hogs_stop(h);
	/* The instance's buffers, a page or so per CPU, and its event. */
	rmdir(HOGS_TRACE);
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

/* A trace_pipe that reads a line once a helper of a job of @func starts. */
static int helper_start_pipe(const char *func)
{
	char filter[128];
	int fd, err;

	if (mkdir(HOGS_TRACE, 0755) && errno != EEXIST)
		return -errno;
	snprintf(filter, sizeof(filter), "func.function == %s\n", func);
	err = write_str(HOGS_TRACE "buffer_size_kb", "8\n") ?:
	      write_str(HOGS_EVENT "filter", filter) ?:
	      write_str(HOGS_EVENT "enable", "1\n") ?:
	      trace_clear_in(HOGS_TRACE);
	if (err)
		return err;
	fd = open(HOGS_TRACE "trace_pipe", O_RDONLY | O_CLOEXEC);
	return fd < 0 ? -errno : fd;
}

/*
 * Hog number @i of @nr, with @watch a trace_pipe from helper_start_pipe()
 * (-1: none): the first waits for the helper to start and lets the others
 * go at once, one byte each down @go; they wait in read(), which costs no
 * CPU.  A hog whose parent dies exits.
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
 * Start @nr hogs on the last @nr vCPUs, at once or, with @func, once a
 * helper of a job of thread function @func starts (a job that found every
 * vCPU idle when it planned the helper, which finds a hog beside it from
 * then on); 0 or -errno, once the load has settled (wait_load_settle()).
 * A hog is on its vCPU before it waits: the scheduler puts a new task on
 * an idle CPU, and there it is load (a new task's average starts at half
 * the CPU's capacity) wherever it waits.
 */
int hogs_start_late(struct hogs *h, int nr, int vcpus, const char *func)
{
	int i, ret = 0, pipe_fd = -1, go[2] = { -1, -1 };

	h->nr = 0;
	if (func) {
		h->late = true;
		pipe_fd = helper_start_pipe(func);
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
	if (func) {
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
	return hogs_start_late(h, nr, vcpus, NULL);
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
		write_str(HOGS_EVENT "enable", "0\n");
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
