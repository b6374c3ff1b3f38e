// SPDX-License-Identifier: GPL-2.0
/*
 * The start-up table (mode "startup"): what a job's start costs its
 * caller.  The self-benchmark's cpu job at each thread count, called by
 * a user task (helpers: threads of its process) and by a kernel thread
 * (helpers: ktask's workqueue workers), twice in a row in a new process,
 * the first job of that process and a repeated one; then the tiny job
 * (one unit, below a minimum chunk) against a direct call of its thread
 * function.  One line per run:
 *
 *	ktask-startup: run=first job=cpu threads=4 caller=user used=4 ...
 *		caller_first_ns=... helper_first_ns=... direct_ns=0
 *
 * the self-benchmark's own line (lib/ktask_bench.c) after the run's
 * name; caller_first_ns is how long the caller took to reach its first
 * chunk, helper_first_ns how long until a helper ran one.
 */
#include <stdio.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "lib.h"
#include "suites.h"

#define PREFIX		"ktask-startup: "

static const char *const callers[] = { "user", "kernel" };

static void startup_print(const char *run, const char *job, int threads,
			  const char *caller)
{
	struct bench_result res;
	int ret = bench_run_as(job, threads, caller, &res);

	if (ret)
		printf(PREFIX "error run=%s job=%s threads=%d caller=%s errno=%d (%s)\n",
		       run, job, threads, caller, -ret, strerror(-ret));
	else
		printf(PREFIX "run=%s %s\n", run, res.line);
}

/* A first and a repeated job, from a process that ran none before. */
static void startup_pair(int threads, const char *caller)
{
	pid_t pid;

	fflush(stdout);
	pid = fork();
	if (!pid) {
		startup_print("first", "cpu", threads, caller);
		startup_print("repeat", "cpu", threads, caller);
		fflush(stdout);
		_exit(0);
	}
	if (pid < 0 || waitpid(pid, NULL, 0) < 0)
		printf(PREFIX "error threads=%d caller=%s: cannot run a child\n",
		       threads, caller);
}

void run_startup(const struct boot *b)
{
	int r, c, i;

	trace_stop();
	for (r = 0; r < b->repeat; r++)
		for (c = 0; c < (int)ARRAY_SIZE(callers); c++) {
			for (i = 0; i < b->nthreads; i++)
				startup_pair(b->threads[i], callers[c]);
			startup_print("tiny", "tiny", 1, callers[c]);
		}
}
