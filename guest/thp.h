/* SPDX-License-Identifier: GPL-2.0 */
/* Huge pages (THPs or hugetlb), on a node or any, moved (thp.c). */
#ifndef KTASK_GUEST_THP_H
#define KTASK_GUEST_THP_H

#include <stddef.h>
#include <stdint.h>

#define THP_SIZE	(2UL << 20)
#define HUGETLB_1G	(1UL << 30)
/* move_pages(2)'s flag to move the pages, as numaif.h has it. */
#define MPOL_MF_MOVE	(1 << 1)
/* The thread function that copies the large folios of a migration. */
#define THP_COPY_FUNC	"migrate_folios_copy_chunk"
/* The one that copies a hugetlb folio. */
#define HUGE_COPY_FUNC	"migrate_huge_copy_chunk"
#define THP_COPY_EVENT	"events/migrate/mm_migrate_folios_copy/enable"

/*
 * @len bytes of huge pages of @page bytes at @mem, in @maplen at @map:
 * hugetlb pages, or THPs.
 */
struct thp_region {
	char	*map;
	char	*mem;
	size_t	len;
	size_t	maplen;
	size_t	page;
	int	hugetlb;
};

void *thp_mmap(size_t len);
int thp_map(struct thp_region *r, size_t len, int node);
int thp_map_hugetlb(struct thp_region *r, size_t len, int node, size_t page);
void thp_unmap(struct thp_region *r);
uint64_t thp_word(size_t i);
void thp_fill(const struct thp_region *r);
long thp_bad(const struct thp_region *r);
long long thp_huge_kb(const struct thp_region *r);
long thp_move_pages(const struct thp_region *r, int node, int *status);
int thp_nodes(const struct thp_region *r, int *node);
long thp_migrate_pages(int from, int to);
long long thp_copied(void);

#endif
