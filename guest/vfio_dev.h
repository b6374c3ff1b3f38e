/* SPDX-License-Identifier: GPL-2.0 */
/* The VFIO device and one map of a range through it (vfio_dev.c). */
#ifndef KTASK_GUEST_VFIO_DEV_H
#define KTASK_GUEST_VFIO_DEV_H

#define PAGE		4096UL
#define IOVA_BASE	(1UL << 32)	/* clear of the IOMMU's MSI window */
/* The thread function of a map's ktask job. */
#define VFIO_MAP_FUNC	"vfio_pin_map_chunk"

struct vfio {
	int		container, group, device;
	char		addr[256];	/* PCI address, 0000:00:03.0 */
	unsigned long	bar0, config;	/* offsets of the regions in @device */
};

#define VFIO_CLOSED	{ .container = -1, .group = -1, .device = -1 }

/* The first edu device, and the second (vfio_memlock_two's). */
extern struct vfio vfio, second;

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

int vfio_open_nth(struct vfio *v, int nth);
int vfio_open(void);
int dma_map_in(const struct vfio *v, void *vaddr, unsigned long iova,
	       unsigned long size);
int dma_map(void *vaddr, unsigned long iova, unsigned long size);
long long dma_unmap_in(const struct vfio *v, unsigned long iova,
		       unsigned long size);
long long dma_unmap(unsigned long iova, unsigned long size);
void tag_pages(unsigned char *buf, unsigned long size);
unsigned char *tagged_buffer(unsigned long size);
long long vmlck_kb(void);
long long pinned_pages(void);
int map_run(unsigned char *buf, unsigned long size, int threads,
	    int probes, int *good, struct map_result *r);

#endif
