// SPDX-License-Identifier: GPL-2.0
/*
 * VFIO type1 pinning seen from user space.  QEMU gives the guest an Intel
 * IOMMU and its "edu" test device (PCI 1234:11e8, scripts/run.sh), which
 * this program binds to vfio-pci; VFIO_IOMMU_MAP_DMA then pins and maps
 * a range of our memory for the device, as a VMM does for guest RAM.
 *
 * The tests of make test map anonymous and hugetlbfs memory at 1 thread
 * and at every vCPU and check what the kernel leaves: the device reads
 * through the IOMMU what we wrote (its DMA engine copies part of a page
 * of the range to another), VmLck (the mm's locked_vm) and the FOLL_PIN
 * counters grow by the range and shrink back on unmap.  A map over
 * RLIMIT_MEMLOCK fails as the serial code fails and leaves nothing
 * charged or pinned, and two maps at once, into the containers of two
 * edu devices, never pin past their process's limit.  Fresh memory that
 * a map faults in lands where the caller's policy puts it (placement.c).
 * A map over a mapped IOVA fails with EEXIST, cycles of map and unmap
 * leave the pinned pages and the free memory as they found them, and so
 * does a SIGKILL in the middle of a map.
 *
 * The benchmark (mode "mm") prints one line per run, for scripts/report.py:
 *
 *	ktask-mm: bench=vfio_map threads=2 used=2 bytes=1073741824 wall_ns=...
 *
 * for a map of fresh anonymous memory, which the pinning faults in, the
 * same (vfio_map_warm) of memory faulted in before, which it pins, and a
 * smaller fresh map with a CPU hog on every vCPU (vfio_map_busy).
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <linux/capability.h>
#include <linux/vfio.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/sysmacros.h>
#include <sys/wait.h>
#include <unistd.h>

#include "guest.h"

#define EDU_VENDOR	"0x1234"
#define EDU_DEVICE	"0x11e8"
#define PCI_DEVICES	"/sys/bus/pci/devices"

/* The edu device's DMA engine (QEMU docs/specs/edu.rst). */
#define EDU_DMA_SRC	0x80
#define EDU_DMA_DST	0x88
#define EDU_DMA_COUNT	0x90
#define EDU_DMA_CMD	0x98
#define EDU_DMA_START	0x1
#define EDU_DMA_TO_RAM	0x2
#define EDU_BUFFER	0x40000		/* its 4 KiB buffer, as a DMA address */
/* What one DMA copies: QEMU 7.2 refuses a DMA that ends at the buffer's end. */
#define EDU_COPY	2048

#define PAGE		4096UL
#define IOVA_BASE	(1UL << 32)	/* clear of the IOMMU's MSI window */

struct vfio {
	int		container, group, device;
	char		addr[256];	/* PCI address, 0000:00:03.0 */
	unsigned long	bar0, config;	/* offsets of the regions in @device */
};

#define VFIO_CLOSED	{ .container = -1, .group = -1, .device = -1 }

/* The first edu device, and the second (vfio_memlock_two's). */
static struct vfio vfio = VFIO_CLOSED, second = VFIO_CLOSED;

/* mknod @path for the char device whose "major:minor" is in @sysfs_dev. */
static int mknod_from(const char *path, const char *sysfs_dev)
{
	unsigned int maj, min;
	char buf[32];

	if (read_line(sysfs_dev, buf, sizeof(buf)) ||
	    sscanf(buf, "%u:%u", &maj, &min) != 2)
		return -ENOENT;
	if (mknod(path, S_IFCHR | 0600, makedev(maj, min)) && errno != EEXIST)
		return -errno;
	return 0;
}

/*
 * Find edu device number @nth (from 0, in the order sysfs lists them) and
 * bind it to vfio-pci; its IOMMU group number.
 */
static int edu_bind(char *addr, size_t size, int nth)
{
	char path[300], buf[32], group[PATH_MAX];
	struct dirent *d;
	int found = 0;
	DIR *dir = opendir(PCI_DEVICES);

	while (dir && !found && (d = readdir(dir))) {
		snprintf(path, sizeof(path), PCI_DEVICES "/%s/vendor", d->d_name);
		if (read_line(path, buf, sizeof(buf)) || strcmp(buf, EDU_VENDOR))
			continue;
		snprintf(path, sizeof(path), PCI_DEVICES "/%s/device", d->d_name);
		if (!read_line(path, buf, sizeof(buf)) &&
		    !strcmp(buf, EDU_DEVICE) && !nth--) {
			snprintf(addr, size, "%s", d->d_name);
			found = 1;
		}
	}
	if (dir)
		closedir(dir);
	if (!found)
		return -ENODEV;
	snprintf(path, sizeof(path), PCI_DEVICES "/%s/driver_override", addr);
	if (write_str(path, "vfio-pci\n"))
		return -errno;
	snprintf(path, sizeof(path), PCI_DEVICES "/%s/driver/unbind", addr);
	write_str(path, addr);
	if (write_str("/sys/bus/pci/drivers_probe", addr))
		return -errno;
	snprintf(path, sizeof(path), PCI_DEVICES "/%s/iommu_group", addr);
	if (readlink(path, group, sizeof(group) - 1) < 0)
		return -errno;
	group[sizeof(group) - 1] = '\0';
	return atoi(strrchr(group, '/') + 1);
}

static int region_offset(int device, unsigned int index, unsigned long *off)
{
	struct vfio_region_info info = { .argsz = sizeof(info), .index = index };

	if (ioctl(device, VFIO_DEVICE_GET_REGION_INFO, &info))
		return -errno;
	*off = info.offset;
	return 0;
}

/*
 * Container, group and device of edu device @nth in @v, with the type1
 * IOMMU and bus mastering.
 */
static int vfio_open_nth(struct vfio *v, int nth)
{
	struct vfio_group_status status = { .argsz = sizeof(status) };
	char path[64], sysfs[96];
	unsigned short cmd;
	int nr;

	if (v->device >= 0)
		return 0;
	nr = edu_bind(v->addr, sizeof(v->addr), nth);
	if (nr < 0)
		return nr;
	mkdir("/dev/vfio", 0755);
	snprintf(path, sizeof(path), "/dev/vfio/%d", nr);
	snprintf(sysfs, sizeof(sysfs), "/sys/class/vfio/%d/dev", nr);
	if (mknod_from("/dev/vfio/vfio", "/sys/class/misc/vfio/dev") ||
	    mknod_from(path, sysfs))
		return -ENOENT;
	v->container = open("/dev/vfio/vfio", O_RDWR);
	v->group = open(path, O_RDWR);
	if (v->container < 0 || v->group < 0)
		return -errno;
	if (ioctl(v->group, VFIO_GROUP_GET_STATUS, &status))
		return -errno;
	if (!(status.flags & VFIO_GROUP_FLAGS_VIABLE))
		return -EBUSY;
	if (ioctl(v->group, VFIO_GROUP_SET_CONTAINER, &v->container) ||
	    ioctl(v->container, VFIO_SET_IOMMU, VFIO_TYPE1v2_IOMMU))
		return -errno;
	v->device = ioctl(v->group, VFIO_GROUP_GET_DEVICE_FD, v->addr);
	if (v->device < 0 ||
	    region_offset(v->device, VFIO_PCI_BAR0_REGION_INDEX, &v->bar0) ||
	    region_offset(v->device, VFIO_PCI_CONFIG_REGION_INDEX, &v->config))
		return -errno;
	if (pread(v->device, &cmd, 2, v->config + 4) != 2)
		return -EIO;
	cmd |= 0x4;	/* PCI_COMMAND_MASTER */
	if (pwrite(v->device, &cmd, 2, v->config + 4) != 2)
		return -EIO;
	return 0;
}

static int vfio_open(void)
{
	return vfio_open_nth(&vfio, 0);
}

/* VFIO_IOMMU_MAP_DMA into @v's container: 0 or an errno. */
static int dma_map_in(const struct vfio *v, void *vaddr, unsigned long iova,
		      unsigned long size)
{
	struct vfio_iommu_type1_dma_map map = {
		.argsz	= sizeof(map),
		.flags	= VFIO_DMA_MAP_FLAG_READ | VFIO_DMA_MAP_FLAG_WRITE,
		.vaddr	= (unsigned long)vaddr,
		.iova	= iova,
		.size	= size,
	};

	return ioctl(v->container, VFIO_IOMMU_MAP_DMA, &map) ? errno : 0;
}

static int dma_map(void *vaddr, unsigned long iova, unsigned long size)
{
	return dma_map_in(&vfio, vaddr, iova, size);
}

/* VFIO_IOMMU_UNMAP_DMA from @v's container: the bytes unmapped, or -errno. */
static long long dma_unmap_in(const struct vfio *v, unsigned long iova,
			      unsigned long size)
{
	struct vfio_iommu_type1_dma_unmap unmap = {
		.argsz	= sizeof(unmap),
		.iova	= iova,
		.size	= size,
	};

	if (ioctl(v->container, VFIO_IOMMU_UNMAP_DMA, &unmap))
		return -errno;
	return unmap.size;
}

static long long dma_unmap(unsigned long iova, unsigned long size)
{
	return dma_unmap_in(&vfio, iova, size);
}

static int edu_write(unsigned long reg, unsigned long long val)
{
	return pwrite(vfio.device, &val, 8, vfio.bar0 + reg) == 8 ? 0 : -EIO;
}

/* One DMA between @iova and the device's buffer; 0 when done. */
static int edu_dma(unsigned long iova, int to_ram)
{
	unsigned long long cmd = EDU_DMA_START | (to_ram ? EDU_DMA_TO_RAM : 0);
	int i;

	if (edu_write(to_ram ? EDU_DMA_SRC : EDU_DMA_DST, EDU_BUFFER) ||
	    edu_write(to_ram ? EDU_DMA_DST : EDU_DMA_SRC, iova) ||
	    edu_write(EDU_DMA_COUNT, EDU_COPY) || edu_write(EDU_DMA_CMD, cmd))
		return -EIO;
	/* The device runs it from a timer, 100 ms of virtual time later. */
	for (i = 0; i < 500; i++) {
		if (pread(vfio.device, &cmd, 8, vfio.bar0 + EDU_DMA_CMD) != 8)
			return -EIO;
		if (!(cmd & EDU_DMA_START))
			return 0;
		usleep(10000);
	}
	return -ETIMEDOUT;
}

/*
 * Tag each page of @buf with its index in its first word (which faults
 * it in): the device can tell the pages apart.
 */
static void tag_pages(unsigned char *buf, unsigned long size)
{
	unsigned long i;

	for (i = 0; i < size / PAGE; i++)
		*(unsigned long *)(buf + i * PAGE) = i + 1;
}

/* Fresh anonymous memory, tagged. */
static unsigned char *tagged_buffer(unsigned long size)
{
	unsigned char *buf = mmap(NULL, size, PROT_READ | PROT_WRITE,
				  MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	if (buf == MAP_FAILED)
		return NULL;
	tag_pages(buf, size);
	return buf;
}

static long long vmlck_kb(void)
{
	return read_key("/proc/self/status", "VmLck", ':');
}

/*
 * Pages pinned with FOLL_PIN and not released yet, in the whole guest,
 * with every CPU's share of the counters folded in first.
 */
static long long pinned_pages(void)
{
	write_str("/proc/sys/vm/stat_refresh", "1\n");
	return read_key("/proc/vmstat", "nr_foll_pin_acquired", ' ') -
	       read_key("/proc/vmstat", "nr_foll_pin_released", ' ');
}

/*
 * Have the device copy, through the IOMMU, the start of @probes pages
 * spread over the mapping of @buf at IOVA_BASE to its last page: each
 * copy must be what we wrote there.  The number of copies that were right.
 */
static int dma_probes(unsigned char *buf, unsigned long size, int probes)
{
	unsigned long last = size / PAGE - 1, page;
	unsigned char *scratch = buf + last * PAGE;
	int k, good = 0;

	for (k = 0; k < probes; k++) {
		page = (k * last) / probes + 7 * k;
		memset(scratch, 0xee, PAGE);
		if (edu_dma(IOVA_BASE + page * PAGE, 0) ||
		    edu_dma(IOVA_BASE + last * PAGE, 1))
			break;
		good += !memcmp(scratch, buf + page * PAGE, EDU_COPY);
	}
	*(unsigned long *)scratch = last + 1;
	return good;
}

/* What one VFIO_IOMMU_MAP_DMA of a range and its unmap did. */
struct map_result {
	int		err;		/* errno of the map, 0 on success */
	int		threads;	/* the job's threads, -1 if no job */
	long long	locked_kb;	/* VmLck after the map, less before */
	long long	pinned;		/* pinned pages after the map, less before */
	long long	unmapped;	/* what the unmap returned */
	long long	locked_left;	/* the same after the unmap */
	long long	pinned_left;
	long long	wall_ns, unmap_ns;
};

/*
 * Map @size bytes of @buf at IOVA_BASE with ktask.max_threads at @threads
 * (unless negative), run @probes device copies if it succeeded, and
 * unmap it.
 */
static int map_run(unsigned char *buf, unsigned long size, int threads,
		   int probes, int *good, struct map_result *r)
{
	long long vm0 = vmlck_kb(), pins0 = pinned_pages(), t0;

	memset(r, 0, sizeof(*r));
	if (threads >= 0 && ktask_threads_set(threads))
		return -errno;
	trace_start();
	t0 = now_ns();
	r->err = dma_map(buf, IOVA_BASE, size);
	r->wall_ns = now_ns() - t0;
	r->threads = trace_threads("vfio_pin_map_chunk");
	r->locked_kb = vmlck_kb() - vm0;
	r->pinned = pinned_pages() - pins0;
	if (good)
		*good = r->err ? 0 : dma_probes(buf, size, probes);
	t0 = now_ns();
	r->unmapped = dma_unmap(IOVA_BASE, size);
	r->unmap_ns = now_ns() - t0;
	r->locked_left = vmlck_kb() - vm0;
	r->pinned_left = pinned_pages() - pins0;
	return 0;
}

static void print_map(const char *name, const char *label,
		      const struct map_result *r)
{
	printf("ktask-test: info %s %s errno=%d threads=%d locked_kb=%lld pinned=%lld unmapped=%lld locked_left=%lld pinned_left=%lld wall_ns=%lld\n",
	       name, label, r->err, r->threads, r->locked_kb, r->pinned,
	       r->unmapped, r->locked_left, r->pinned_left, r->wall_ns);
}

#define MAP_SIZE	SZ_1G		/* 8 chunks: work for every vCPU */
#define PROBES		8

/*
 * A map with @threads threads.  With 1 GiB pages a job may have only two
 * chunks, and the caller takes both if its helper's vCPU does not run in
 * time: a threaded map that used one thread is tried again (HELPER_TRIES).
 */
static int map_run_threaded(unsigned char *buf, unsigned long size,
			    int threads, int *good, struct map_result *r)
{
	int tries;

	for (tries = 1; ; tries++) {
		if (map_run(buf, size, threads, PROBES, good, r))
			return -1;
		if (threads == 1 || r->threads > 1 || tries == HELPER_TRIES)
			return tries;
	}
}

/*
 * A map of @size bytes of @buf serially, then with every vCPU: the device
 * reads our pages where we put them, locked_vm and the pinned pages grow
 * by the range, and the unmap takes them all back.
 */
static void test_map(const char *name, unsigned char *buf, unsigned long size,
		     int vcpus)
{
	int runs[2] = { 1, vcpus }, i, good, ok, tries;
	struct map_result r;
	char label[16];

	for (i = 0; i < 2; i++) {
		snprintf(label, sizeof(label), "threads=%d", runs[i]);
		tries = map_run_threaded(buf, size, runs[i], &good, &r);
		if (tries < 0) {
			report(0, name, "%s: %s", label, strerror(errno));
			break;
		}
		print_map(name, label, &r);
		ok = !r.err && r.locked_kb == (long long)(size >> 10) &&
		     r.pinned == (long long)(size / PAGE) &&
		     r.unmapped == (long long)size && !r.locked_left &&
		     !r.pinned_left && good == PROBES &&
		     (runs[i] == 1 ? r.threads == 1 : r.threads > 1);
		report(ok, name, "%s: %lu MiB, used %d threads (try %d), %d of %d device reads right, VmLck +%lld kB then %+lld",
		       label, size >> 20, r.threads, tries, good, PROBES,
		       r.locked_kb, r.locked_left);
	}
}

/*
 * MAP_SIZE of anonymous memory, and the free 1 GiB pages of the pool
 * through hugetlbfs: runs of 1 GiB that chunk boundaries split.
 */
static void test_maps(int vcpus)
{
	unsigned long huge = huge_free(SZ_1G) * SZ_1G;
	unsigned char *buf = tagged_buffer(MAP_SIZE);
	const char *dir = huge_mount(SZ_1G);
	char path[64];
	int fd;

	if (!buf) {
		report(0, "vfio_map", "mmap: %s", strerror(errno));
	} else {
		test_map("vfio_map", buf, MAP_SIZE, vcpus);
		munmap(buf, MAP_SIZE);
	}
	if (huge < SZ_1G || !dir)
		return;
	snprintf(path, sizeof(path), "%s/vfio", dir);
	fd = open(path, O_CREAT | O_RDWR, 0600);
	buf = mmap(NULL, huge, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	if (fd < 0 || buf == MAP_FAILED) {
		report(0, "vfio_map_hugetlb", "%s: %s", path, strerror(errno));
	} else {
		tag_pages(buf, huge);
		test_map("vfio_map_hugetlb", buf, huge, vcpus);
		munmap(buf, huge);
	}
	if (fd >= 0)
		close(fd);
	unlink(path);
}

/* Drop CAP_IPC_LOCK, which lets VFIO pin past RLIMIT_MEMLOCK. */
static int drop_ipc_lock(void)
{
	struct __user_cap_header_struct hdr = { _LINUX_CAPABILITY_VERSION_3, 0 };
	struct __user_cap_data_struct data[2];

	if (syscall(SYS_capget, &hdr, data))
		return -errno;
	data[0].effective &= ~(1U << CAP_IPC_LOCK);
	data[0].permitted &= ~(1U << CAP_IPC_LOCK);
	return syscall(SYS_capset, &hdr, data) ? -errno : 0;
}

#define LIMIT_MAP	SZ_1G

/*
 * In a child without CAP_IPC_LOCK, RLIMIT_MEMLOCK at a little over half
 * of LIMIT_MAP (not on a chunk boundary): the map fails with ENOMEM
 * serially and with helpers, and leaves nothing locked, pinned or
 * mapped.  Under a limit above LIMIT_MAP it succeeds.
 */
static void memlock_child(int vcpus)
{
	struct rlimit lim = { LIMIT_MAP / 2 + (3 << 20), LIMIT_MAP / 2 + (3 << 20) };
	unsigned char *buf = tagged_buffer(LIMIT_MAP);
	int runs[2] = { 1, vcpus }, i;
	struct map_result r;
	char label[16];

	if (!buf || drop_ipc_lock() || setrlimit(RLIMIT_MEMLOCK, &lim)) {
		report(0, "vfio_memlock", "setup: %s", strerror(errno));
		return;
	}
	for (i = 0; i < 2; i++) {
		snprintf(label, sizeof(label), "threads=%d", runs[i]);
		if (map_run(buf, LIMIT_MAP, runs[i], 0, NULL, &r))
			break;
		print_map("vfio_memlock", label, &r);
		report(r.err == ENOMEM && !r.locked_kb && !r.pinned &&
		       r.unmapped == 0, "vfio_memlock",
		       "%s: errno %d (want ENOMEM), VmLck %+lld kB, pinned %+lld, unmapped %lld",
		       label, r.err, r.locked_kb, r.pinned, r.unmapped);
	}
	lim.rlim_cur = lim.rlim_max = LIMIT_MAP + (1 << 20);
	if (!setrlimit(RLIMIT_MEMLOCK, &lim) &&
	    !map_run(buf, LIMIT_MAP, vcpus, 0, NULL, &r))
		report(!r.err && r.unmapped == (long long)LIMIT_MAP,
		       "vfio_memlock", "under a limit above the range: errno %d",
		       r.err);
}

#define TWO_MAP		(256UL << 20)
/*
 * What a map may pin past the limit for a moment: each thread pins a
 * batch of up to 512 pages before it counts them, as the serial code
 * does.
 */
#define BATCH_PAGES	512

/* One of vfio_memlock_two's maps, on a thread of its own. */
struct two_map {
	const struct vfio	*v;
	unsigned char		*buf;
	pthread_barrier_t	*start;
	int			err;
	int			done;
};

static void *two_map_thread(void *arg)
{
	struct two_map *m = arg;

	pthread_barrier_wait(m->start);
	m->err = dma_map_in(m->v, m->buf, IOVA_BASE, TWO_MAP);
	__atomic_store_n(&m->done, 1, __ATOMIC_RELEASE);
	return NULL;
}

/*
 * Two threads map TWO_MAP of fresh memory each, at once, into the
 * containers of two devices, under an RLIMIT_MEMLOCK of @limit bytes,
 * while this thread samples the pinned pages: they never go past the
 * limit (but for a batch per thread), @want_enomem maps fail with ENOMEM
 * and the others succeed, and afterwards nothing is left locked or
 * pinned.
 */
static void two_maps_round(int vcpus, unsigned long limit, int want_enomem)
{
	struct rlimit lim = { limit, limit };
	long long slack = 2LL * vcpus * BATCH_PAGES, pins0, vm0, pins, most = 0;
	struct two_map maps[2] = { { .v = &vfio }, { .v = &second } };
	pthread_barrier_t start;
	pthread_t tids[2];
	int i, ok, enomem = 0, mapped = 0;

	pins0 = pinned_pages();
	vm0 = vmlck_kb();
	if (setrlimit(RLIMIT_MEMLOCK, &lim) ||
	    pthread_barrier_init(&start, NULL, 3)) {
		report(0, "vfio_memlock_two", "setup: %s", strerror(errno));
		return;
	}
	for (i = 0; i < 2; i++) {
		maps[i].start = &start;
		maps[i].buf = mmap(NULL, TWO_MAP, PROT_READ | PROT_WRITE,
				   MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		if (maps[i].buf == MAP_FAILED ||
		    pthread_create(&tids[i], NULL, two_map_thread, &maps[i])) {
			report(0, "vfio_memlock_two", "setup: %s",
			       strerror(errno));
			_exit(1);
		}
	}
	pthread_barrier_wait(&start);
	while (!__atomic_load_n(&maps[0].done, __ATOMIC_ACQUIRE) ||
	       !__atomic_load_n(&maps[1].done, __ATOMIC_ACQUIRE)) {
		pins = pinned_pages() - pins0;
		if (pins > most)
			most = pins;
		usleep(1000);
	}
	for (i = 0; i < 2; i++) {
		pthread_join(tids[i], NULL);
		enomem += maps[i].err == ENOMEM;
		if (!maps[i].err && dma_unmap_in(maps[i].v, IOVA_BASE,
						 TWO_MAP) == (long long)TWO_MAP)
			mapped++;
		munmap(maps[i].buf, TWO_MAP);
	}
	pthread_barrier_destroy(&start);
	ok = most > 0 && most <= (long long)(limit / PAGE) + slack &&
	     enomem == want_enomem && mapped == 2 - want_enomem &&
	     vmlck_kb() == vm0 && pinned_pages() == pins0;
	report(ok, "vfio_memlock_two",
	       "two maps of %lu MiB under a limit of %lu MiB: errno %d and %d (want %d ENOMEM, the rest mapped), at most %lld MiB pinned at once (limit and a batch per thread: %lld MiB), then VmLck %+lld kB, pinned %+lld",
	       TWO_MAP >> 20, limit >> 20, maps[0].err, maps[1].err,
	       want_enomem, most * PAGE >> 20,
	       (long long)((limit / PAGE + slack) * PAGE >> 20),
	       vmlck_kb() - vm0, pinned_pages() - pins0);
}

/*
 * In a child without CAP_IPC_LOCK: two maps at once under a limit a
 * little over one map (one fails), then over both (both succeed).
 */
static void memlock_two_child(int vcpus)
{
	if (drop_ipc_lock() || ktask_threads_set(vcpus)) {
		report(0, "vfio_memlock_two", "setup: %s", strerror(errno));
		return;
	}
	two_maps_round(vcpus, TWO_MAP + (3 << 20), 1);
	two_maps_round(vcpus, 2 * TWO_MAP + (3 << 20), 0);
}

#define EXIST_MAP	(256UL << 20)

/*
 * A map over an IOVA range that is mapped already fails with EEXIST and
 * charges nothing; the first mapping is whole.
 */
static void test_exist(int vcpus)
{
	unsigned char *buf = tagged_buffer(2 * EXIST_MAP);
	long long vm0, pins0, vm1, pins1, unmapped;
	int err1, err2;

	if (!buf) {
		report(0, "vfio_eexist", "mmap: %s", strerror(errno));
		return;
	}
	ktask_threads_set(vcpus);
	vm0 = vmlck_kb();
	pins0 = pinned_pages();
	err1 = dma_map(buf, IOVA_BASE, EXIST_MAP);
	vm1 = vmlck_kb();
	pins1 = pinned_pages();
	err2 = dma_map(buf + EXIST_MAP, IOVA_BASE + EXIST_MAP / 2, EXIST_MAP);
	report(!err1 && err2 == EEXIST && vmlck_kb() == vm1 &&
	       pinned_pages() == pins1, "vfio_eexist",
	       "first map errno %d, overlapping map errno %d (want EEXIST), VmLck %+lld kB, pinned %+lld",
	       err1, err2, vmlck_kb() - vm1, pinned_pages() - pins1);
	unmapped = dma_unmap(IOVA_BASE, EXIST_MAP);
	report(unmapped == (long long)EXIST_MAP && vmlck_kb() == vm0 &&
	       pinned_pages() == pins0, "vfio_eexist_unmap",
	       "unmapped %lld of %lu, VmLck %+lld kB, pinned %+lld",
	       unmapped, EXIST_MAP, vmlck_kb() - vm0, pinned_pages() - pins0);
	munmap(buf, 2 * EXIST_MAP);
}

#define CYCLES		4
#define CYCLE_MAP	(512UL << 20)
#define FREE_SLACK_KB	(8 << 10)	/* far below one chunk, 128 MiB */
/*
 * KASAN keeps freed slab objects in quarantine, up to 1/32 of memory, and
 * their slabs stay allocated meanwhile: tens of MiB after a few cycles on
 * make test's debug kernel.  Still far below one cycle's 512 MiB.
 */
#define KASAN_SLACK_KB	(64 << 10)

/*
 * Free memory in kB, counted exactly: the free pages of every zone with
 * each CPU's share of the counters folded in, plus the pages on the
 * per-CPU free lists, which MemAvailable leaves out (after unmapping
 * 1 GiB they hold tens of MiB, more or less from one cycle to the next).
 */
static long long free_kb(void)
{
	long long pages = 0;
	char line[256], *at;
	FILE *f;

	write_str("/proc/sys/vm/stat_refresh", "1\n");
	f = fopen("/proc/zoneinfo", "r");
	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f)) {
		if ((at = strstr(line, "nr_free_pages ")))
			pages += atoll(at + 14);
		else if ((at = strstr(line, "count: ")))
			pages += atoll(at + 7);
	}
	fclose(f);
	return pages * (PAGE >> 10);
}

/* mmap, map, unmap and munmap CYCLE_MAP; whether the map and unmap worked. */
static int map_cycle(int threads)
{
	unsigned char *buf = mmap(NULL, CYCLE_MAP, PROT_READ | PROT_WRITE,
				  MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	struct map_result r;
	int ok;

	if (buf == MAP_FAILED)
		return 0;
	ok = !map_run(buf, CYCLE_MAP, threads, 0, NULL, &r) && !r.err &&
	     r.unmapped == (long long)CYCLE_MAP;
	munmap(buf, CYCLE_MAP);
	return ok;
}

/*
 * Cycles of mmap, map with helpers, unmap and munmap leave the pinned
 * pages and the free memory where they were.  A first cycle, not
 * counted, lets the kernel set up what it keeps.
 */
static void test_cycles(int vcpus)
{
	long long pins0, free0, avail0, freed, avail, slack = FREE_SLACK_KB;
	unsigned long long kasan, kasan_end;
	int i, good = 0;

	if (!ksym_range("kasan_quarantine_put", &kasan, &kasan_end))
		slack = KASAN_SLACK_KB;

	map_cycle(vcpus);
	pins0 = pinned_pages();
	free0 = free_kb();
	avail0 = read_key("/proc/meminfo", "MemAvailable", ':');
	for (i = 0; i < CYCLES; i++)
		good += map_cycle(vcpus);
	freed = free_kb() - free0;
	avail = read_key("/proc/meminfo", "MemAvailable", ':') - avail0;
	report(good == CYCLES && pinned_pages() == pins0 &&
	       freed > -slack, "vfio_cycles",
	       "%d cycles of %lu MiB, %d worked, pinned %+lld, free memory %+lld kB (MemAvailable %+lld kB, slack %lld kB)",
	       CYCLES, CYCLE_MAP >> 20, good, pinned_pages() - pins0, freed, avail,
	       slack);
}

/*
 * SIGKILL a child that maps and unmaps 2 GiB in a loop: whether the
 * signal lands in a map (which then fails and undoes itself) or not,
 * once the child's mappings are unmapped nothing stays pinned.
 */
static void test_kill(int vcpus)
{
	long long pins0 = pinned_pages(), unmapped;
	struct vfio_iommu_type1_dma_unmap all = {
		.argsz	= sizeof(all),
		.flags	= VFIO_DMA_UNMAP_FLAG_ALL,
	};
	int pipefd[2];
	char c;
	pid_t pid;

	ktask_threads_set(vcpus);
	if (pipe(pipefd)) {
		report(0, "vfio_kill", "pipe: %s", strerror(errno));
		return;
	}
	pid = fork();
	if (!pid) {
		unsigned char *buf = mmap(NULL, 2 * SZ_1G, PROT_READ | PROT_WRITE,
					  MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

		if (write(pipefd[1], "x", 1) != 1 || buf == MAP_FAILED)
			_exit(1);
		for (;;) {
			dma_map(buf, IOVA_BASE, 2 * SZ_1G);
			dma_unmap(IOVA_BASE, 2 * SZ_1G);
		}
	}
	if (pid < 0 || read(pipefd[0], &c, 1) != 1) {
		report(0, "vfio_kill", "fork: %s", strerror(errno));
		return;
	}
	close(pipefd[0]);
	close(pipefd[1]);
	usleep(700000);
	kill(pid, SIGKILL);
	waitpid(pid, NULL, 0);
	unmapped = ioctl(vfio.container, VFIO_IOMMU_UNMAP_DMA, &all) ? -errno :
		   (long long)all.size;
	report(unmapped >= 0 && pinned_pages() == pins0, "vfio_kill",
	       "after SIGKILL: %lld bytes left mapped (unmapped now), pinned %+lld",
	       unmapped, pinned_pages() - pins0);
}

/*
 * Map @len bytes of fresh anonymous memory under @vma's policy, and unmap
 * them: at *@mem.
 */
static int map_fill(unsigned long len, const struct mbind_req *vma,
		    void **mem)
{
	int err;

	*mem = mmap(NULL, len, PROT_READ | PROT_WRITE,
		    MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (*mem == MAP_FAILED)
		return errno;
	err = mbind_apply(*mem, len, vma);
	if (!err)
		err = dma_map(*mem, IOVA_BASE, len);
	if (!err)
		dma_unmap(IOVA_BASE, len);
	else
		munmap(*mem, len);
	return err;
}

static void map_release(void *mem, unsigned long len)
{
	munmap(mem, len);
}

static const struct placer map_placer = {
	.name		= "vfio_placement",
	.func		= "vfio_pin_map_chunk",
	.vma_policy	= 1,
	.fill		= map_fill,
	.release	= map_release,
};

void run_vfio_tests(int vcpus)
{
	int ret = vfio_open();

	if (ret) {
		report(0, "vfio_setup", "edu device through vfio-pci: %s",
		       strerror(-ret));
		return;
	}
	report(1, "vfio_setup", "edu device %s through vfio-pci", vfio.addr);
	test_maps(vcpus);
	in_child(memlock_child, vcpus);
	ret = vfio_open_nth(&second, 1);
	if (ret)
		report(0, "vfio_memlock_two", "a second edu device: %s",
		       strerror(-ret));
	else
		in_child(memlock_two_child, vcpus);
	/* Two chunks of 2 MiB blocks: one for the caller, one for a helper. */
	test_placement(&map_placer, 256UL << 20, vcpus);
	test_exist(vcpus);
	test_cycles(vcpus);
	test_kill(vcpus);
	ktask_threads_set(0);
}

#define BENCH_FRESH	SZ_1G
#define BENCH_WARM	(4 * SZ_1G)
#define BENCH_BUSY	(512UL << 20)

/*
 * One map of @size bytes of @buf at ktask.max_threads @threads
 * (unpatched: the serial kernel), and its unmap, as benchmark @name.
 */
static void bench_map(const char *name, unsigned char *buf,
		      unsigned long size, int threads, int patched)
{
	struct map_result r;

	if (!buf || map_run(buf, size, patched ? threads : -1, 0, NULL, &r) ||
	    r.err || r.unmapped != (long long)size) {
		printf("ktask-mm: error bench=%s threads=%d errno=%d\n", name,
		       threads, buf ? r.err : errno);
		return;
	}
	printf("ktask-mm: bench=%s threads=%d used=%d bytes=%lu wall_ns=%lld unmap_ns=%lld\n",
	       name, threads, patched ? r.threads : 1, size, r.wall_ns,
	       r.unmap_ns);
}

/*
 * VFIO_IOMMU_MAP_DMA of fresh anonymous memory, which the pinning faults
 * in and zeroes (a VM's RAM that its VMM has not touched), and of memory
 * populated once per boot, which it only pins and maps.
 */
/* bench_map() of @size bytes of fresh anonymous memory. */
static void bench_fresh(const char *name, unsigned long size, int threads,
			int patched)
{
	unsigned char *fresh = mmap(NULL, size, PROT_READ | PROT_WRITE,
				    MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	bench_map(name, fresh == MAP_FAILED ? NULL : fresh, size, threads,
		  patched);
	if (fresh != MAP_FAILED)
		munmap(fresh, size);
}

void bench_vfio_map(int threads, int patched)
{
	static unsigned char *warm;

	if (vfio_open()) {
		printf("ktask-mm: error bench=vfio_map threads=%d no VFIO device\n",
		       threads);
		return;
	}
	bench_fresh("vfio_map", BENCH_FRESH, threads, patched);
	if (!warm)
		warm = tagged_buffer(BENCH_WARM);
	bench_map("vfio_map_warm", warm, BENCH_WARM, threads, patched);
}

/*
 * The fresh map again, smaller, with a CPU hog on every vCPU: the busy
 * machine of the contention table, where a job must not take longer with
 * helpers than alone.
 */
void bench_vfio_map_busy(int threads, int patched, int vcpus)
{
	if (vfio_open() || busy_start(vcpus)) {
		printf("ktask-mm: error bench=vfio_map_busy threads=%d\n",
		       threads);
		busy_stop();
		return;
	}
	bench_fresh("vfio_map_busy", BENCH_BUSY, threads, patched);
	busy_stop();
}
