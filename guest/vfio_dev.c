// SPDX-License-Identifier: GPL-2.0
/*
 * The VFIO device of the guest: QEMU gives it an Intel IOMMU and two
 * "edu" test devices (PCI 1234:11e8, scripts/boot.sh), which this file
 * binds to vfio-pci, each in a container of its own.  VFIO_IOMMU_MAP_DMA
 * then pins and maps a range of our memory for the device, as a VMM does
 * for guest RAM; the device's DMA engine reads it back through the
 * IOMMU.  vfio.c tests it, mm_bench.c times it.
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <linux/vfio.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include "lib.h"
#include "vfio_dev.h"

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

/* The first edu device, and the second (vfio_memlock_two's). */
struct vfio vfio = VFIO_CLOSED, second = VFIO_CLOSED;

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
int vfio_open_nth(struct vfio *v, int nth)
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
	if (mknod_from("/dev/vfio/vfio", "/sys/class/misc/vfio/dev", S_IFCHR) ||
	    mknod_from(path, sysfs, S_IFCHR))
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

int vfio_open(void)
{
	return vfio_open_nth(&vfio, 0);
}

/* VFIO_IOMMU_MAP_DMA into @v's container: 0 or an errno. */
int dma_map_in(const struct vfio *v, void *vaddr, unsigned long iova,
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

int dma_map(void *vaddr, unsigned long iova, unsigned long size)
{
	return dma_map_in(&vfio, vaddr, iova, size);
}

/* VFIO_IOMMU_UNMAP_DMA from @v's container: the bytes unmapped, or -errno. */
long long dma_unmap_in(const struct vfio *v, unsigned long iova,
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

long long dma_unmap(unsigned long iova, unsigned long size)
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
void tag_pages(unsigned char *buf, unsigned long size)
{
	unsigned long i;

	for (i = 0; i < size / PAGE; i++)
		*(unsigned long *)(buf + i * PAGE) = i + 1;
}

/* Fresh anonymous memory, tagged. */
unsigned char *tagged_buffer(unsigned long size)
{
	unsigned char *buf = mmap(NULL, size, PROT_READ | PROT_WRITE,
				  MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	if (buf == MAP_FAILED)
		return NULL;
	tag_pages(buf, size);
	return buf;
}

long long vmlck_kb(void)
{
	return read_key("/proc/self/status", "VmLck", ':');
}

/*
 * Pages pinned with FOLL_PIN and not released yet, in the whole guest,
 * with every CPU's share of the counters folded in first.
 */
long long pinned_pages(void)
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


/*
 * Map @size bytes of @buf at IOVA_BASE with ktask.max_threads at @threads
 * (unless negative), run @probes device copies if it succeeded, and
 * unmap it.
 */
int map_run(unsigned char *buf, unsigned long size, int threads,
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
	r->threads = trace_threads(VFIO_MAP_FUNC);
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
