// SPDX-License-Identifier: GPL-2.0
/*
 * Huge pages for the migration tests and benchmark: a region of
 * transparent huge pages or of 1 GiB hugetlb pages on one node, written
 * with a pattern each 8-byte word of which says where it is, and moved to
 * another node by move_pages(2) or migrate_pages(2), with no libnuma.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "lib.h"
#include "thp.h"

#define MPOL_BIND	2

void thp_unmap(struct thp_region *r)
{
	munmap(r->map, r->maplen);
}

/* Bind @r's memory to node @node (mbind()): 0, or -errno, unmapped. */
static int thp_bind(struct thp_region *r, int node)
{
	unsigned long nodes = 1UL << node;
	int err;

	if (!syscall(SYS_mbind, r->mem, r->len, MPOL_BIND, &nodes,
		     sizeof(nodes) * 8, 0))
		return 0;
	err = -errno;
	thp_unmap(r);
	return err;
}

/*
 * @len bytes (a multiple of THP_SIZE) of private anonymous memory that
 * faults in as THPs: aligned to THP_SIZE, madvise()d; munmap() of @len
 * at the address returned frees it.  NULL, errno set, if not.
 */
void *thp_mmap(size_t len)
{
	char *map = mmap(NULL, len + THP_SIZE, PROT_READ | PROT_WRITE,
			 MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	char *mem;
	size_t head;

	if (map == MAP_FAILED)
		return NULL;
	mem = (char *)(((uintptr_t)map + THP_SIZE - 1) & ~(THP_SIZE - 1));
	head = mem - map;
	if (head)
		munmap(map, head);
	munmap(mem + len, THP_SIZE - head);
	if (madvise(mem, len, MADV_HUGEPAGE)) {
		int err = errno;

		munmap(mem, len);
		errno = err;
		return NULL;
	}
	return mem;
}

/*
 * Map @len bytes of memory that faults in as THPs of node @node (bound
 * by mbind(), and madvise()d), or of any node if @node is -1: 0, or
 * -errno.
 */
int thp_map(struct thp_region *r, size_t len, int node)
{
	r->len = len;
	r->page = THP_SIZE;
	r->maplen = len;
	r->hugetlb = 0;
	r->map = thp_mmap(len);
	if (!r->map)
		return -errno;
	r->mem = r->map;
	return node < 0 ? 0 : thp_bind(r, node);
}

/*
 * Map @len bytes of private anonymous hugetlb pages of @page bytes that
 * fault in on node @node: 0, or -errno.
 */
int thp_map_hugetlb(struct thp_region *r, size_t len, int node, size_t page)
{
	r->len = len;
	r->page = page;
	r->maplen = len;
	r->hugetlb = 1;
	r->map = mmap(NULL, len, PROT_READ | PROT_WRITE,
		      MAP_PRIVATE | MAP_ANONYMOUS | MAP_HUGETLB |
		      __builtin_ctzl(page) << MAP_HUGE_SHIFT, -1, 0);
	if (r->map == MAP_FAILED)
		return -errno;
	r->mem = r->map;
	return thp_bind(r, node);
}

/* The word thp_fill() writes at 8-byte word @i of a region. */
uint64_t thp_word(size_t i)
{
	return (i * 0x9e3779b97f4a7c15ULL) ^ 0x6b7461736b6d6967ULL;
}

void thp_fill(const struct thp_region *r)
{
	uint64_t *w = (uint64_t *)r->mem;
	size_t i;

	for (i = 0; i < r->len / sizeof(*w); i++)
		w[i] = thp_word(i);
}

/* 8-byte words of the region not as thp_fill() wrote them. */
long thp_bad(const struct thp_region *r)
{
	const uint64_t *w = (const uint64_t *)r->mem;
	long bad = 0;
	size_t i;

	for (i = 0; i < r->len / sizeof(*w); i++)
		bad += w[i] != thp_word(i);
	return bad;
}

/*
 * The region's mapping in huge pages, in kB (/proc/self/smaps):
 * AnonHugePages, or for hugetlb pages Private_Hugetlb and Shared_Hugetlb
 * (smaps counts a private page as shared when it cannot tell: some boots
 * of make run MODE=huge_move saw it for the 1 GiB page).
 */
long long thp_huge_kb(const struct thp_region *r)
{
	FILE *f = fopen("/proc/self/smaps", "r");
	unsigned long start, end;
	long long kb = -1, n;
	char line[256];
	int in = 0;

	while (f && fgets(line, sizeof(line), f)) {
		if (sscanf(line, "%lx-%lx ", &start, &end) == 2) {
			in = start <= (uintptr_t)r->mem &&
			     (uintptr_t)r->mem < end;
			continue;
		}
		if (!in)
			continue;
		if ((!r->hugetlb && sscanf(line, "AnonHugePages: %lld", &n) == 1) ||
		    (r->hugetlb && (sscanf(line, "Private_Hugetlb: %lld", &n) == 1 ||
				    sscanf(line, "Shared_Hugetlb: %lld", &n) == 1)))
			kb = (kb < 0 ? 0 : kb) + n;
	}
	if (f)
		fclose(f);
	return kb;
}

/*
 * move_pages(2) of the region to @node, one entry a huge page (a THP
 * moves whole; its other pages would be -EBUSY, its folio being off the
 * LRU already), each entry's status into @status: what the call
 * returned, or -errno.  move_pages(2) stops at the first page it cannot
 * move.
 */
long thp_move_pages(const struct thp_region *r, int node, int *status)
{
	size_t i, n = r->len / r->page;
	void **pages = calloc(n, sizeof(*pages));
	int *to = calloc(n, sizeof(*to));
	long ret = -ENOMEM;

	if (pages && to) {
		for (i = 0; i < n; i++) {
			pages[i] = r->mem + i * r->page;
			to[i] = node;
		}
		ret = syscall(SYS_move_pages, 0, n, pages, to, status,
			      MPOL_MF_MOVE);
		if (ret < 0)
			ret = -errno;
	}
	free(pages);
	free(to);
	return ret;
}

/* Where each base page of the region is, into @node: 0, or -errno. */
int thp_nodes(const struct thp_region *r, int *node)
{
	size_t i, n = r->len / 4096;
	void **pages = calloc(n, sizeof(*pages));
	long ret = -ENOMEM;

	if (pages) {
		for (i = 0; i < n; i++)
			pages[i] = r->mem + i * 4096;
		ret = syscall(SYS_move_pages, 0, n, pages, NULL, node, 0);
		if (ret < 0)
			ret = -errno;
	}
	free(pages);
	return ret;
}

/* migrate_pages(2) of this process from node @from to @to. */
long thp_migrate_pages(int from, int to)
{
	unsigned long from_nodes = 1UL << from, to_nodes = 1UL << to;
	long ret = syscall(SYS_migrate_pages, 0, sizeof(from_nodes) * 8,
			   &from_nodes, &to_nodes);

	return ret < 0 ? -errno : ret;
}

/* Pages the mm_migrate_folios_copy events of the trace say were copied. */
long long thp_copied(void)
{
	FILE *f = fopen(TRACE "trace", "r");
	long long pages = 0;
	char line[512], *at;

	while (f && fgets(line, sizeof(line), f)) {
		at = strstr(line, "mm_migrate_folios_copy:");
		if (at && strstr(at, " err=0") && strstr(at, "nr_pages="))
			pages += atoll(strstr(at, "nr_pages=") + 9);
	}
	if (f)
		fclose(f);
	return pages;
}
