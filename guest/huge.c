// SPDX-License-Identifier: GPL-2.0
/*
 * The hugetlb pools and the two hugetlb callers of ktask seen from user
 * space, one call each: fallocate() of a hugetlbfs file and the first
 * touch of a 1 GiB page, with what they leave behind.  The pools come
 * from the kernel command line (scripts/run.sh): hugepagesz=2M
 * hugepages=N hugepagesz=1G hugepages=M.  hugetlb.c tests them,
 * mm_bench.c times them.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "lib.h"
#include "huge.h"

static long long read_pool_num(const char *dir, const char *file)
{
	char path[256];

	snprintf(path, sizeof(path), "%s/%s", dir, file);
	return read_num(path);
}

void pool_read(unsigned long size, struct pool *p)
{
	char dir[128];

	snprintf(dir, sizeof(dir), "/sys/kernel/mm/hugepages/hugepages-%lukB",
		 size >> 10);
	p->total = read_pool_num(dir, "nr_hugepages");
	p->free = read_pool_num(dir, "free_hugepages");
	p->rsvd = read_pool_num(dir, "resv_hugepages");
	p->surp = read_pool_num(dir, "surplus_hugepages");
}

/* Free pages in the pool of @size pages. */
long long huge_free(unsigned long size)
{
	struct pool p;

	pool_read(size, &p);
	return p.free;
}

/* Free pages of @size on node @node. */
long long huge_node_free(unsigned long size, int node)
{
	char dir[128];

	snprintf(dir, sizeof(dir),
		 "/sys/devices/system/node/node%d/hugepages/hugepages-%lukB",
		 node, size >> 10);
	return read_pool_num(dir, "free_hugepages");
}

int pool_equal(const struct pool *a, const struct pool *b)
{
	return a->total == b->total && a->free == b->free &&
	       a->rsvd == b->rsvd && a->surp == b->surp;
}

/*
 * Mount hugetlbfs with @size pages on /mnt/huge-@size, once (a second
 * mount would hide the first's files); the mount point.
 */
const char *huge_mount(unsigned long size)
{
	static char dirs[2][32];
	char *dir = dirs[size == SZ_1G];
	char opts[32];

	if (dir[0])
		return dir;
	snprintf(dir, sizeof(dirs[0]), "/mnt/huge-%luM", size >> 20);
	snprintf(opts, sizeof(opts), "pagesize=%luM", size >> 20);
	mkdir("/mnt", 0755);
	mkdir(dir, 0755);
	if (mount("none", dir, "hugetlbfs", 0, opts)) {
		dir[0] = '\0';
		return NULL;
	}
	return dir;
}

/*
 * Mount hugetlbfs of 2 MiB pages limited to @pages pages on @dir; its
 * options go to @opts, for the caller's messages.  0, or -1 with errno.
 */
int huge_mount_limited(const char *dir, long pages, char *opts, size_t size)
{
	snprintf(opts, size, "pagesize=2M,size=%lu", pages * SZ_2M);
	if (pages < 1) {
		errno = EINVAL;
		return -1;
	}
	mkdir("/mnt", 0755);
	mkdir(dir, 0755);
	if (mount("none", dir, "hugetlbfs", 0, opts) && errno != EBUSY)
		return -1;
	return 0;
}

/* Whether the first @len bytes of @fd read as zeros. */
int reads_zero(int fd, unsigned long len)
{
	const unsigned long *p, *end;
	unsigned long acc = 0;
	void *map;

	map = mmap(NULL, len, PROT_READ, MAP_SHARED, fd, 0);
	if (map == MAP_FAILED)
		return 0;
	end = (const unsigned long *)((char *)map + len);
	for (p = map; p < end; p++)
		acc |= *p;
	munmap(map, len);
	return !acc;
}

/*
 * fallocate() @len bytes of a new file in @dir with ktask.max_threads at
 * @threads (unless negative), then check what it left: @check_zero reads
 * every byte, and a KEEP_SIZE fallocate() of the first @prefix bytes,
 * which needs no page if they are all there, sets r->prefix_ok.  The file
 * is removed, which returns its pages to the pool.
 */
int falloc_run(const char *dir, unsigned long size, unsigned long len,
		      int threads, int check_zero, unsigned long prefix,
		      struct falloc_result *r)
{
	char path[64];
	struct stat st;
	long long t0;
	int fd;

	memset(r, 0, sizeof(*r));
	/* No knob (@threads < 0) on a kernel without ktask. */
	if (threads >= 0 && ktask_threads_set(threads))
		return -errno;
	snprintf(path, sizeof(path), "%s/falloc", dir);
	fd = open(path, O_CREAT | O_TRUNC | O_RDWR, 0600);
	if (fd < 0)
		return -errno;
	trace_start();
	t0 = now_ns();
	r->err = fallocate(fd, 0, 0, len) ? errno : 0;
	r->wall_ns = now_ns() - t0;
	r->threads = trace_threads(FALLOC_FUNC);
	pool_read(size, &r->pool);
	if (prefix)
		r->prefix_ok = !fallocate(fd, FALLOC_FL_KEEP_SIZE, 0, prefix);
	fstat(fd, &st);
	r->size = st.st_size;
	r->blocks = st.st_blocks;
	r->zero = !r->err && check_zero ? reads_zero(fd, len) : 1;
	close(fd);
	unlink(path);
	return 0;
}

/* Fill @where for the page at @p, cleared by thread function @func. */
void read_placement(void *p, const char *func, struct placement *where)
{
	if (syscall(SYS_move_pages, 0, 1UL, &p, NULL, &where->node, 0))
		where->node = -1;
	trace_helpers(func, where->node, &where->seen);
}

/*
 * Write a new 1 GiB file's first byte once, which zeroes its page in
 * the fault; how long that took, how many threads cleared it (-1 if no
 * job was seen), with @where (if not NULL) where the page and its
 * helpers were, and, with @check_zero, whether it reads as zeros (1
 * without).  -1 on error.
 */
int touch_gigantic(const char *dir, int check_zero, int *threads,
			  long long *wall_ns, struct placement *where)
{
	volatile char *p;
	char path[64];
	int fd, zero;
	long long t0;

	snprintf(path, sizeof(path), "%s/touch", dir);
	fd = open(path, O_CREAT | O_TRUNC | O_RDWR, 0600);
	if (fd < 0 || ftruncate(fd, SZ_1G) ||
	    (p = mmap(NULL, SZ_1G, PROT_READ | PROT_WRITE, MAP_SHARED, fd,
		      0)) == MAP_FAILED) {
		if (fd >= 0)
			close(fd);
		unlink(path);
		return -1;
	}
	trace_start_helpers();
	t0 = now_ns();
	p[0] = 0;	/* a write fault that leaves the contents as they are */
	*wall_ns = now_ns() - t0;
	*threads = trace_stop_helpers(CLEAR_GIGANTIC_FUNC);
	if (where)
		read_placement((void *)p, CLEAR_GIGANTIC_FUNC, where);
	zero = !check_zero || reads_zero(fd, SZ_1G);
	munmap((void *)p, SZ_1G);
	close(fd);
	unlink(path);
	return zero;
}
