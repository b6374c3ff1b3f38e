/* SPDX-License-Identifier: GPL-2.0 */
/* The boot's legacy persistent memory and its pmem driver (pmem.c). */
#ifndef KTASK_GUEST_PMEM_H
#define KTASK_GUEST_PMEM_H

#include <stddef.h>
#include <stdint.h>

/* The thread function that initialises device memory's struct pages. */
#define PMEM_FUNC	"memmap_init_device_chunk"

/*
 * A mode of the namespace: a pfn device (fsdax, driver nd_pmem) or a dax
 * device (devdax, driver dax_pmem), of pages of @align bytes, with its
 * struct pages in RAM ("ram") or in the device ("pmem": an altmap).
 */
struct pmem_mode {
	const char	*name;
	const char	*seed;		/* "pfn_seed" or "dax_seed" */
	const char	*driver;
	unsigned long	align;
	const char	*memmap;
};

long long pmem_size(void);
int pmem_unbind(void);
int pmem_bind(unsigned long long *wall_ns);
int pmem_bound(void);
int pmem_mode_bind(const struct pmem_mode *m, char *dev, size_t len,
		   unsigned long long *wall_ns);
int pmem_mode_unbind(const struct pmem_mode *m, const char *dev);
long pmem_dax_check(uint64_t seed);

#endif
