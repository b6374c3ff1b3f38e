/* SPDX-License-Identifier: GPL-2.0 */
/* The boot's legacy persistent memory and its pmem driver (pmem.c). */
#ifndef KTASK_GUEST_PMEM_H
#define KTASK_GUEST_PMEM_H

/* The thread function that initialises device memory's struct pages. */
#define PMEM_FUNC	"memmap_init_device_chunk"

long long pmem_size(void);
int pmem_unbind(void);
int pmem_bind(unsigned long long *wall_ns);
int pmem_bound(void);

#endif
