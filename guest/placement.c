// SPDX-License-Identifier: GPL-2.0
/*
 * Where the memory of ktask's callers lands, under each task memory
 * policy.  A caller's helpers are its threads and inherit its policy;
 * under a policy that allocates near the CPU a task runs on (the default,
 * MPOL_LOCAL, MPOL_BIND or MPOL_PREFERRED_MANY over several nodes) they
 * must run on the caller's node, or they fill another node than the
 * serial code fills (ktask_mem_node()).  Under a policy that names its
 * node they may run anywhere, and the memory is on that node.
 *
 * For each policy, a caller (hugetlbfs fallocate() in hugetlb.c, a VFIO
 * map in vfio.c) fills fresh memory; the ktask_helper_end events of its
 * job say which node each helper was bound to (-1: none), move_pages(2)
 * where the pages are.
 */
#define _GNU_SOURCE
#include <linux/mempolicy.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "guest.h"

#define TRACE		"/sys/kernel/tracing/"
#define HELPER_END	TRACE "events/ktask/ktask_helper_end/enable"
#define SAMPLE		(2UL << 20)	/* one page looked up per 2 MiB */

struct policy {
	const char	*name;
	int		mode;
	unsigned long	nodes;		/* bit n: node n */
	int		local;		/* helpers on the caller's node */
	int		node;		/* every page here, or -1 */
};

static const struct policy policies[] = {
	{ "default",		MPOL_DEFAULT,		0, 1, -1 },
	{ "local",		MPOL_LOCAL,		0, 1, -1 },
	{ "bind_both",		MPOL_BIND,		3, 1, -1 },
	{ "preferred_many",	MPOL_PREFERRED_MANY,	3, 1, -1 },
	{ "bind_1",		MPOL_BIND,		2, 0, 1 },
	{ "preferred_1",	MPOL_PREFERRED,		2, 0, 1 },
	{ "interleave",		MPOL_INTERLEAVE,	3, 0, -1 },
};

/* What one fill left: where its helpers were bound, where its pages are. */
struct placed {
	int	node0, node1;	/* the caller's node before and after */
	int	helpers;	/* ktask_helper_end events of the job */
	int	on_caller;	/* of those, bound to the caller's node */
	int	unbound;	/* of those, bound to none */
	int	pages, on_node;	/* pages looked up, and on policy->node */
};

static int node_now(void)
{
	unsigned int cpu, node;

	return syscall(SYS_getcpu, &cpu, &node, NULL) ? -1 : (int)node;
}

static int policy_set(const struct policy *p)
{
	unsigned long mask = p->nodes;

	return syscall(SYS_set_mempolicy, p->mode, p->nodes ? &mask : NULL,
		       p->nodes ? 8 * sizeof(mask) : 0) ? -1 : 0;
}

/* Count the helpers of thread function @func in the trace into @pl. */
static void read_helpers(const char *func, struct placed *pl)
{
	char line[512], *at;
	FILE *f;
	int nid;

	write_str(HELPER_END, "0\n");
	f = fopen(TRACE "trace", "r");
	while (f && fgets(line, sizeof(line), f)) {
		if (!strstr(line, "ktask_helper_end:") || !strstr(line, func) ||
		    !(at = strstr(line, " nid=")))
			continue;
		nid = atoi(at + 5);
		pl->helpers++;
		pl->on_caller += nid == pl->node0;
		pl->unbound += nid == -1;
	}
	if (f)
		fclose(f);
}

/*
 * Look up one page per SAMPLE of @mem, read first so that a page of a
 * file is mapped: how many are on @node.
 */
static void read_pages(char *mem, unsigned long len, int node,
		       struct placed *pl)
{
	unsigned long i, n = len / SAMPLE;
	void **pages = calloc(n, sizeof(*pages));
	int *status = calloc(n, sizeof(*status));

	for (i = 0; pages && status && i < n; i++) {
		pages[i] = mem + i * SAMPLE;
		(void)*(volatile char *)pages[i];
	}
	if (pages && status &&
	    !syscall(SYS_move_pages, 0, n, pages, NULL, status, 0))
		for (i = 0; i < n; i++) {
			pl->pages++;
			pl->on_node += status[i] == node;
		}
	free(pages);
	free(status);
}

/*
 * One fill of @len bytes under policy @p, with helpers: up to HELPER_TRIES
 * until a job has helpers and the caller is on the same node after as
 * before.  0, or the errno of the fill.
 */
static int fill_once(const struct placer *pr, const struct policy *p,
		     unsigned long len, struct placed *pl)
{
	void *mem;
	int tries, err = 0;

	for (tries = 0; tries < HELPER_TRIES; tries++) {
		memset(pl, 0, sizeof(*pl));
		trace_clear();
		write_str(HELPER_END, "1\n");
		pl->node0 = node_now();
		err = pr->fill(len, &mem);
		pl->node1 = node_now();
		read_helpers(pr->func, pl);
		if (err)
			return err;
		read_pages(mem, len, p->node, pl);
		pr->release(mem, len);
		if (pl->helpers && pl->node0 == pl->node1)
			break;
	}
	return 0;
}

void test_placement(const struct placer *pr, unsigned long len, int vcpus)
{
	const struct policy *p;
	struct placed pl;
	int ok, err;

	if (count_nodes() < 2)
		return;
	ktask_threads_set(vcpus);
	for (p = policies; p < policies + sizeof(policies) / sizeof(*p); p++) {
		if (policy_set(p)) {
			report(0, pr->name, "set_mempolicy(%s): %m", p->name);
			continue;
		}
		err = fill_once(pr, p, len, &pl);
		policy_set(&policies[0]);
		ok = !err && pl.helpers > 0 && pl.pages > 0 &&
		     (p->local ? pl.on_caller == pl.helpers :
				 pl.unbound == pl.helpers) &&
		     (p->node < 0 || pl.on_node == pl.pages);
		report(ok, pr->name,
		       "policy %s: errno %d, caller on node %d then %d, %d helpers, %d bound to its node, %d unbound (want %s), %d of %d pages on node %d%s",
		       p->name, err, pl.node0, pl.node1, pl.helpers,
		       pl.on_caller, pl.unbound,
		       p->local ? "all bound to its node" : "all unbound",
		       pl.on_node, pl.pages, p->node,
		       p->node < 0 ? " (not checked)" : "");
	}
	ktask_threads_set(0);
}
