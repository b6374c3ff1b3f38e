/* SPDX-License-Identifier: GPL-2.0 */
/*
 * CPU hogs: processes pinned one per vCPU that count as fast as they can,
 * the load of contention.c, mm_bench.c, busy_bench.c and guarantees.c's
 * busy calls.  Their rate while a job runs, over their rate before, is
 * what the job left them.
 */
#ifndef KTASK_GUEST_HOGS_H
#define KTASK_GUEST_HOGS_H

#include <stdbool.h>
#include <sys/types.h>

#define MAX_HOGS	64

/* One counter per cache line, so hogs do not slow each other down. */
struct hog_counter {
	volatile unsigned long	count;
	char			pad[64 - sizeof(unsigned long)];
};

struct hogs {
	int			nr;		/* running */
	bool			late;		/* its trace event is on */
	pid_t			pids[MAX_HOGS];
	struct hog_counter	*counters;	/* shared with the hogs */
};

int hogs_init(struct hogs *h);
void hogs_exit(struct hogs *h);
int hogs_start(struct hogs *h, int nr, int vcpus);
int hogs_start_late(struct hogs *h, int nr, int vcpus, const char *func);
void hogs_stop(struct hogs *h);
unsigned long long hogs_count(struct hogs *h);
double hogs_rate(struct hogs *h, unsigned long long ns);

#endif
