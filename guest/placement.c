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
 * map in vfio.c) pinned to the CPUs of one node fills fresh memory (with
 * the policy on the VMA too, for a caller whose memory has one); the
 * ktask_helper_end events of its job say which node each helper was
 * bound to (-1: none) and how many chunks it took, move_pages(2) where
 * the pages are.  A helper must have taken a chunk: the caller alone
 * would put the pages in the same place on any kernel.  The binding is
 * what the events check: ktask keeps helpers on the caller's CPUs, so
 * with the caller pinned an unbound helper faults on the same node; the
 * pages check that helpers inherit the policy and that it was applied.
 *
 * With node 1 of CPUs only (make test's memoryless-node boot), the caller
 * runs there under every policy and every page must land on node 0, the
 * only memory, as the serial code puts it: the helpers of a policy that
 * allocates near the CPU are bound to node 1, which falls back to node 0
 * as the caller does; a policy's nodes are cut to those with memory, so
 * MPOL_BIND over both nodes names node 0 alone and its helpers run
 * unbound.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <linux/mempolicy.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "lib.h"
#include "placement.h"

#define SAMPLE		(2UL << 20)	/* one page looked up per 2 MiB */

struct policy {
	const char	*name;
	int		mode;
	unsigned long	nodes;		/* bit n: node n */
	struct mbind_req vma;		/* the VMA's, if vma.mode */
	int		run_on;		/* the caller's node */
	int		local;		/* helpers on the caller's node */
	int		node;		/* every page here, or -1 */
};

/*
 * Under the policies that allocate near the CPU, the caller runs on node
 * 1 (not the node memory falls back to first) and every page must be
 * there; under those that name node 1, on node 0.
 */
static const struct policy policies[] = {
	{ "default",		MPOL_DEFAULT,	     0, { 0, 0 }, 1, 1, 1 },
	{ "local",		MPOL_LOCAL,	     0, { 0, 0 }, 1, 1, 1 },
	{ "bind_both",		MPOL_BIND,	     3, { 0, 0 }, 1, 1, 1 },
	{ "preferred_many",	MPOL_PREFERRED_MANY, 3, { 0, 0 }, 1, 1, 1 },
	{ "bind_1",		MPOL_BIND,	     2, { 0, 0 }, 0, 0, 1 },
	{ "preferred_1",	MPOL_PREFERRED,	     2, { 0, 0 }, 0, 0, 1 },
	{ "interleave",		MPOL_INTERLEAVE,     3, { 0, 0 }, 0, 0, -1 },
	/* The VMA's policy rules, not the task's. */
	{ "vma_bind_both",	MPOL_INTERLEAVE,     3, { MPOL_BIND, 3 },
	  1, 1, 1 },
	{ "vma_bind_1",		MPOL_LOCAL,	     0, { MPOL_BIND, 2 },
	  0, 0, 1 },
};

/* Node 1 has CPUs and no memory: the caller runs there, pages go to 0. */
static const struct policy policies_memless[] = {
	{ "default",		MPOL_DEFAULT,	     0, { 0, 0 }, 1, 1, 0 },
	{ "local",		MPOL_LOCAL,	     0, { 0, 0 }, 1, 1, 0 },
	{ "bind_both",		MPOL_BIND,	     3, { 0, 0 }, 1, 0, 0 },
	{ "preferred_many",	MPOL_PREFERRED_MANY, 3, { 0, 0 }, 1, 1, 0 },
	{ "bind_0",		MPOL_BIND,	     1, { 0, 0 }, 1, 0, 0 },
	{ "preferred_0",	MPOL_PREFERRED,	     1, { 0, 0 }, 1, 0, 0 },
	{ "interleave",		MPOL_INTERLEAVE,     3, { 0, 0 }, 1, 0, 0 },
};

/* What one fill left: where its helpers were bound, where its pages are. */
struct placed {
	struct helpers_seen	seen;	/* on_node: the caller's node */
	int			pages;	/* looked up */
	int			on_node; /* of those, on policy->node */
};

/* Run on the CPUs of @node only: 0, or -1 with errno. */
static int run_on_node(int node)
{
	char path[64], list[256];
	struct cpus set;
	int ret;

	snprintf(path, sizeof(path), "/sys/devices/system/node/node%d/cpulist",
		 node);
	ret = read_line(path, list, sizeof(list));
	if (!ret)
		ret = cpulist_parse(list, &set) ? -EINVAL : run_on_cpus(&set);
	errno = -ret;
	return ret ? -1 : 0;
}

static int policy_set(int mode, unsigned long nodes)
{
	return syscall(SYS_set_mempolicy, mode, nodes ? &nodes : NULL,
		       nodes ? 8 * sizeof(nodes) : 0) ? -1 : 0;
}

int mbind_apply(void *mem, unsigned long len, const struct mbind_req *req)
{
	unsigned long nodes = req->nodes;

	if (!req->mode)
		return 0;
	return syscall(SYS_mbind, mem, len, req->mode, &nodes,
		       8 * sizeof(nodes), 0) ? errno : 0;
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

struct fill_run {
	const struct placer	*pr;
	const struct policy	*p;
	unsigned long		len;
	struct placed		*pl;
};

/* One fill; a helper took part if it took a chunk. */
static int fill_attempt(void *ctx)
{
	struct fill_run *f = ctx;
	void *mem;
	int err;

	memset(f->pl, 0, sizeof(*f->pl));
	trace_start_helpers();
	err = f->pr->fill(f->len, &f->p->vma, &mem);
	trace_stop_helpers(f->pr->func);
	trace_helpers(f->pr->func, f->p->run_on, &f->pl->seen);
	if (err)
		return -err;
	read_pages(mem, f->len, f->p->node, f->pl);
	f->pr->release(mem, f->len);
	return f->pl->seen.chunks > 0;
}

/*
 * One fill of @len bytes under policy @p, on its node, run again until a
 * helper takes a chunk (retry_for_helpers()).  0, or the errno of the fill.
 */
static int fill_once(const char *name, const struct placer *pr,
		     const struct policy *p, unsigned long len,
		     struct placed *pl)
{
	struct fill_run f = { pr, p, len, pl };
	int tries = retry_for_helpers(name, fill_attempt, &f);

	return tries < 0 ? -tries : 0;
}

/* Whether node 1 has CPUs and no memory. */
static int node1_memoryless(void)
{
	char list[64];

	return !read_line("/sys/devices/system/node/has_memory", list,
			  sizeof(list)) && !strcmp(list, "0");
}

/* This machine's policies, up to *@end; whether node 1 has no memory. */
static const struct policy *policy_table(const struct policy **end,
					 int *memless)
{
	*memless = node1_memoryless();
	if (*memless) {
		*end = policies_memless + ARRAY_SIZE(policies_memless);
		return policies_memless;
	}
	*end = policies + ARRAY_SIZE(policies);
	return policies;
}

/* The results test_placement() of @pr reports: one per policy it tries. */
int placement_tests(const struct placer *pr)
{
	const struct policy *p, *end;
	int memless, n = 0;

	if (count_nodes() < 2)
		return 1;
	for (p = policy_table(&end, &memless); p < end; p++)
		n += !p->vma.mode || pr->vma_policy;
	return n;
}

void test_placement(const struct placer *pr, unsigned long len, int vcpus)
{
	const struct policy *p, *table, *end;
	int ok, err, memless;
	char name[64];
	struct placed pl;
	cpu_set_t all;

	if (count_nodes() < 2) {
		report_skip(pr->name, "one node");
		return;
	}
	table = policy_table(&end, &memless);
	if (sched_getaffinity(0, sizeof(all), &all))
		memset(&all, 0, sizeof(all));	/* each test fails below */
	ktask_threads_set(vcpus);
	for (p = table; p < end; p++) {
		if (p->vma.mode && !pr->vma_policy)
			continue;
		snprintf(name, sizeof(name), "%s_%s", pr->name, p->name);
		if (!CPU_COUNT(&all) || run_on_node(p->run_on) ||
		    policy_set(p->mode, p->nodes)) {
			report(0, name, "policy %s: %m", p->name);
			continue;
		}
		err = fill_once(name, pr, p, len, &pl);
		policy_set(MPOL_DEFAULT, 0);
		sched_setaffinity(0, sizeof(all), &all);
		ok = !err && pl.seen.chunks > 0 && pl.pages > 0 &&
		     (p->local ? pl.seen.on_node == pl.seen.helpers :
				 pl.seen.unbound == pl.seen.helpers) &&
		     (p->node < 0 || pl.on_node == pl.pages);
		report(ok, name,
		       "policy %s, caller on node %d%s: errno %d, %d helpers (%d chunks), %d bound to its node, %d unbound (want %s), %d of %d pages on node %d%s",
		       p->name, p->run_on, memless ? " (no memory)" : "",
		       err, pl.seen.helpers,
		       pl.seen.chunks, pl.seen.on_node, pl.seen.unbound,
		       p->local ? "all bound to its node" : "all unbound",
		       pl.on_node, pl.pages, p->node,
		       p->node < 0 ? " (not checked)" : "");
	}
	ktask_threads_set(0);
}
