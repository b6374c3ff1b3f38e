// SPDX-License-Identifier: GPL-2.0
/*
 * The boot's legacy persistent memory: run.sh's memmap=1G!5G makes a GiB
 * of RAM (4 GiB in make run MODE=memmap) an e820 persistent memory
 * region, whose namespace
 * the pmem driver maps with struct pages (memremap_pages(), as
 * MEMORY_DEVICE_FS_DAX memory) each time the namespace is bound to it:
 * at boot, in the driver's asynchronous probe, and from user space
 * through the driver's bind file, in the writer's task.  The namespace
 * can also be given, as ndctl create-namespace does, to a pfn device
 * (fsdax) or a dax device (devdax, /dev/daxR.N) of a chosen alignment
 * (compound pages) with its struct pages in RAM or in the device itself
 * (an altmap): pmem_mode_bind(), and pmem_mode_unbind() to go back.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <glob.h>
#include <stdio.h>
#include <stdlib.h>
#include <stdint.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/uio.h>
#include <sys/stat.h>
#include <unistd.h>

#include "lib.h"
#include "pmem.h"

#define ND_PMEM		"/sys/bus/nd/drivers/nd_pmem/"
#define ND_DEVICES	"/sys/bus/nd/devices/"
#define PMEM_IOV	1024	/* IOV_MAX */

/* Wait for the nd bus's asynchronous probes and registrations. */
static void pmem_wait_probe(void)
{
	char line[16];

	read_line("/sys/bus/nd/devices/ndbus0/wait_probe", line, sizeof(line));
}

/*
 * The first namespace of the nd bus ("namespace0.0"), or NULL.  The bus
 * registers and probes its devices in an asynchronous domain of its own,
 * which the boot does not wait for: its wait_probe file does.
 */
static const char *pmem_namespace(void)
{
	static char name[64];
	glob_t g;

	if (name[0])
		return name;
	pmem_wait_probe();
	if (!glob("/sys/bus/nd/devices/namespace*", 0, NULL, &g) && g.gl_pathc)
		snprintf(name, sizeof(name), "%s",
			 strrchr(g.gl_pathv[0], '/') + 1);
	globfree(&g);
	return name[0] ? name : NULL;
}

/* Bytes of the namespace, or -1 if there is none. */
long long pmem_size(void)
{
	const char *ns = pmem_namespace();
	char path[128], line[64];

	if (!ns)
		return -1;
	snprintf(path, sizeof(path), "/sys/bus/nd/devices/%s/size", ns);
	if (read_line(path, line, sizeof(line)))
		return -1;
	return strtoll(line, NULL, 0);
}

/* Whether the pmem driver has the namespace: its pages are mapped. */
int pmem_bound(void)
{
	const char *ns = pmem_namespace();
	char path[128];

	if (!ns)
		return 0;
	snprintf(path, sizeof(path), ND_PMEM "%s", ns);
	return !access(path, F_OK);
}

/* Take the namespace from the pmem driver: memunmap_pages(). */
int pmem_unbind(void)
{
	const char *ns = pmem_namespace();

	return ns ? write_str(ND_PMEM "unbind", ns) : -ENODEV;
}

/*
 * Give it to the pmem driver again, which maps it with struct pages in
 * this task before the write returns; the write's wall time into
 * @wall_ns.
 */
int pmem_bind(unsigned long long *wall_ns)
{
	const char *ns = pmem_namespace();
	unsigned long long t0 = now_ns();
	int ret;

	if (!ns)
		return -ENODEV;
	ret = write_str(ND_PMEM "bind", ns);
	*wall_ns = now_ns() - t0;
	return ret;
}

/* Write @value to attribute @attr of nd device @dev: 0, or -errno. */
static int nd_write(const char *dev, const char *attr, const char *value)
{
	char path[128];

	snprintf(path, sizeof(path), ND_DEVICES "%s/%s", dev, attr);
	return write_str(path, value) ? -errno : 0;
}

/*
 * Give the namespace to a new device of mode @m (its region's seed, into
 * @dev): set up, then bound to its driver, which writes the info block
 * and maps the memory before the write returns; the bind's wall time
 * into @wall_ns.  0, or -errno with the namespace left to the caller's
 * pmem_mode_unbind().
 */
int pmem_mode_bind(const struct pmem_mode *m, char *dev, size_t len,
		   unsigned long long *wall_ns)
{
	const char *ns = pmem_namespace();
	char path[128], align[32], bind[64], uuid[64];
	unsigned long long t0;
	int ret;

	if (!ns)
		return -ENODEV;
	/* The seed a bind made, registered asynchronously, as ndctl waits. */
	pmem_wait_probe();
	snprintf(path, sizeof(path), ND_DEVICES "region0/%s", m->seed);
	if (read_line(path, dev, len) || !dev[0])
		return -ENODEV;
	snprintf(align, sizeof(align), "%lu\n", m->align);
	if (read_line("/proc/sys/kernel/random/uuid", uuid, sizeof(uuid)))
		return -errno;
	ret = pmem_unbind() ? -errno : 0;
	if (!ret)
		ret = nd_write(dev, "uuid", uuid);
	if (!ret)
		ret = nd_write(dev, "mode", m->memmap);
	if (!ret)
		ret = nd_write(dev, "align", align);
	if (!ret)
		ret = nd_write(dev, "namespace", ns);
	if (ret)
		return ret;
	snprintf(bind, sizeof(bind), "/sys/bus/nd/drivers/%s/bind", m->driver);
	t0 = now_ns();
	ret = write_str(bind, dev) ? -errno : 0;
	*wall_ns = now_ns() - t0;
	return ret;
}

/* Zero the namespace's info block, through its raw block device. */
static int pmem_zero_info(const char *ns)
{
	static char zero[8192];
	int fd, ret;

	ret = nd_write(ns, "force_raw", "1");
	if (!ret && write_str(ND_PMEM "bind", ns))
		ret = -errno;
	if (ret) {
		nd_write(ns, "force_raw", "0");
		return ret;
	}
	ret = mknod_from("/dev/pmem0", "/sys/class/block/pmem0/dev", S_IFBLK);
	fd = ret ? -1 : open("/dev/pmem0", O_WRONLY);
	if (!ret)
		ret = fd < 0 || pwrite(fd, zero, sizeof(zero), 0) != sizeof(zero) ||
		      fsync(fd) ? -errno : 0;
	if (fd >= 0)
		close(fd);
	unlink("/dev/pmem0");
	if (write_str(ND_PMEM "unbind", ns) && !ret)
		ret = -errno;
	if (nd_write(ns, "force_raw", "0") && !ret)
		ret = -EIO;
	return ret;
}

/*
 * Take device @dev of mode @m back: unbind it, give its namespace up,
 * zero the info block it wrote (else the namespace would come back as
 * that device), and bind the namespace to the pmem driver as at boot,
 * whatever failed before: the first error, or 0.
 */
int pmem_mode_unbind(const struct pmem_mode *m, const char *dev)
{
	const char *ns = pmem_namespace();
	char unbind[64];
	unsigned long long wall;
	int ret = 0;

	if (!ns)
		return -ENODEV;
	snprintf(unbind, sizeof(unbind), "/sys/bus/nd/drivers/%s/unbind",
		 m->driver);
	pmem_wait_probe();
	if (write_str(unbind, dev) && errno != ENODEV)
		ret = -errno;
	if (!ret)
		ret = nd_write(dev, "namespace", "\n");
	pmem_wait_probe();
	if (!ret)
		ret = pmem_zero_info(ns);
	if (!pmem_bound() && pmem_bind(&wall) && !ret)
		ret = -errno;
	return ret;
}

/*
 * The device-dax device (on the dax bus, named after the namespace, not
 * after the nd dax device that made it) into @dev: 0, or -ENODEV.
 */
static int pmem_dax_device(char *dev, size_t len)
{
	glob_t g;
	int ret = -ENODEV;

	if (!glob("/sys/bus/dax/devices/dax*", 0, NULL, &g) &&
	    g.gl_pathc == 1) {
		snprintf(dev, len, "%s", strrchr(g.gl_pathv[0], '/') + 1);
		ret = 0;
	}
	globfree(&g);
	return ret;
}

/*
 * Read the first word of each of @n 4 KiB pages from @p with
 * process_vm_readv(), which takes each page's struct page (GUP: its
 * pgmap, compound head and reference count), against what @seed wrote:
 * the words not as written, or -errno.
 */
static long pmem_dax_read(const char *p, size_t n, uint64_t seed)
{
	static struct iovec remote[PMEM_IOV];
	static uint64_t words[PMEM_IOV];
	struct iovec local = { words, 0 };
	size_t i, j, k;
	long bad = 0;

	for (i = 0; i < n; i += k) {
		k = n - i < PMEM_IOV ? n - i : PMEM_IOV;
		for (j = 0; j < k; j++) {
			remote[j].iov_base = (char *)p + (i + j) * 4096;
			remote[j].iov_len = sizeof(uint64_t);
		}
		local.iov_len = k * sizeof(uint64_t);
		if (process_vm_readv(getpid(), &local, 1, remote, k, 0) !=
		    (ssize_t)local.iov_len)
			return -errno ?: -EIO;
		for (j = 0; j < k; j++)
			bad += words[j] != (i + j + 1) * seed;
	}
	return bad;
}

/*
 * Write a word to each 4 KiB page of the device-dax device through a
 * shared mapping, @seed times its number from 1, then read them back
 * through their struct pages (pmem_dax_read()): the words not as
 * written, or -errno.
 */
long pmem_dax_check(uint64_t seed)
{
	char path[128], line[64], dev[32];
	long long size;
	uint64_t *p;
	long bad = 0;
	size_t i, n;
	int fd;

	if (pmem_dax_device(dev, sizeof(dev)))
		return -ENODEV;
	snprintf(path, sizeof(path), "/sys/bus/dax/devices/%s/size", dev);
	if (read_line(path, line, sizeof(line)))
		return -ENODEV;
	size = strtoll(line, NULL, 0);
	snprintf(line, sizeof(line), "/dev/%s", dev);
	snprintf(path, sizeof(path), "/sys/bus/dax/devices/%s/dev", dev);
	fd = mknod_from(line, path, S_IFCHR);
	if (fd)
		return fd;
	fd = open(line, O_RDWR);
	/*
	 * Not kept for the next dax device: the node's inode would keep
	 * this one's mapping, which an open after it is gone uses (a
	 * use-after-free that devtmpfs, which removes the node, never
	 * meets).
	 */
	unlink(line);
	if (fd < 0)
		return -errno;
	p = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	close(fd);
	if (p == MAP_FAILED)
		return -errno;
	n = size / 4096;
	for (i = 0; i < n; i++)
		p[i * 512] = (i + 1) * seed;
	bad = pmem_dax_read((const char *)p, n, seed);
	munmap(p, size);
	return bad;
}
