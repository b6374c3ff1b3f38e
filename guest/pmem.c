// SPDX-License-Identifier: GPL-2.0
/*
 * The boot's legacy persistent memory: run.sh's memmap=1G!5G makes a GiB
 * of RAM an e820 persistent memory region, whose namespace
 * the pmem driver maps with struct pages (memremap_pages(), as
 * MEMORY_DEVICE_FS_DAX memory) each time the namespace is bound to it:
 * at boot, in the driver's asynchronous probe, and from user space
 * through the driver's bind file, in the writer's task.
 */
#include <errno.h>
#include <glob.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "lib.h"
#include "pmem.h"

#define ND_PMEM		"/sys/bus/nd/drivers/nd_pmem/"

/*
 * The first namespace of the nd bus ("namespace0.0"), or NULL.  The bus
 * registers and probes its devices in an asynchronous domain of its own,
 * which the boot does not wait for: its wait_probe file does.
 */
static const char *pmem_namespace(void)
{
	static char name[64];
	char line[16];
	glob_t g;

	if (name[0])
		return name;
	read_line("/sys/bus/nd/devices/ndbus0/wait_probe", line, sizeof(line));
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
