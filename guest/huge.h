/* SPDX-License-Identifier: GPL-2.0 */
/* The hugetlb pools and callers (huge.c). */
#ifndef KTASK_GUEST_HUGE_H
#define KTASK_GUEST_HUGE_H

#include <stddef.h>

#include "lib.h"

/* Huge page sizes: the 2 MiB and 1 GiB pools. */
#define SZ_2M		(2UL << 20)
#define SZ_1G		(1UL << 30)
/* The thread function of hugetlbfs fallocate()'s job, in the trace. */
#define FALLOC_FUNC	"hugetlbfs_falloc_chunk"
/* The thread function that zeroes a gigantic page in a fault. */
#define CLEAR_GIGANTIC_FUNC	"clear_gigantic_chunk"

/* HugePages_Total/Free/Rsvd/Surp of one page size. */
struct pool {
	long long	total, free, rsvd, surp;
};

/* What one fallocate() left behind, for comparing two runs. */
struct falloc_result {
	int		err;		/* errno, 0 on success */
	int		threads;	/* the job's threads, -1 if no job */
	int		zero;		/* the pages read as zeros */
	int		prefix_ok;	/* the first @prefix bytes were there */
	long long	size, blocks;	/* the file's st_size and st_blocks */
	struct pool	pool;		/* the pool right after */
	long long	wall_ns;
};

/* Where a page is, and where the helpers that cleared it were queued. */
struct placement {
	int			node;	/* the page's (move_pages(2)), or -1 */
	struct helpers_seen	seen;	/* on_node: bound to the page's node */
};

void pool_read(unsigned long size, struct pool *p);
long long huge_free(unsigned long size);
long long huge_node_free(unsigned long size, int node);
int pool_equal(const struct pool *a, const struct pool *b);
const char *huge_mount(unsigned long size);
int huge_mount_limited(const char *dir, long pages, char *opts, size_t size);
int reads_zero(int fd, unsigned long len);
int falloc_run(const char *dir, unsigned long size, unsigned long len,
	       int threads, int check_zero, unsigned long prefix,
	       struct falloc_result *r);
void read_placement(void *p, const char *func, struct placement *where);
int touch_gigantic(const char *dir, int check_zero, int *threads,
		   long long *wall_ns, struct placement *where);

#endif
