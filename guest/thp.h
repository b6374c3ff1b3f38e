/* SPDX-License-Identifier: GPL-2.0 */
/* Transparent huge pages on a node, moved to another (thp.c). */
#ifndef KTASK_GUEST_THP_H
#define KTASK_GUEST_THP_H

#include <stddef.h>

#define THP_SIZE	(2UL << 20)
/* The thread function that copies the large folios of a migration. */
#define THP_COPY_FUNC	"migrate_folios_copy_chunk"
#define THP_COPY_EVENT	"events/migrate/mm_migrate_folios_copy/enable"

/* @len bytes of THPs at @mem, in a mapping at @map a THP larger. */
struct thp_region {
	char	*map;
	char	*mem;
	size_t	len;
};

int thp_map(struct thp_region *r, size_t len, int node);
void thp_unmap(struct thp_region *r);
void thp_fill(const struct thp_region *r);
long thp_bad(const struct thp_region *r);
long long thp_huge_kb(const struct thp_region *r);
long thp_move_pages(const struct thp_region *r, int node, int *status);
int thp_nodes(const struct thp_region *r, int *node);
long thp_migrate_pages(int from, int to);
long long thp_copied(void);

#endif
