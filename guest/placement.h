/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Where a ktask caller's fresh memory lands under each memory policy, and
 * where its helpers were bound (placement.c): hugetlb.c's fallocate()
 * and vfio.c's map each test it with a placer of their own.
 */
#ifndef KTASK_GUEST_PLACEMENT_H
#define KTASK_GUEST_PLACEMENT_H

/* An mbind(2) of a range: no call if @mode is 0 (MPOL_DEFAULT). */
struct mbind_req {
	int		mode;
	unsigned long	nodes;		/* bit n: node n */
};

/* A ktask caller that fills fresh memory. */
struct placer {
	const char	*name;		/* the tests' prefix */
	const char	*func;		/* its job's thread function */
	int		vma_policy;	/* whether the memory's VMA policy counts */
	/*
	 * Fill @len bytes of fresh memory, at *@mem, under @vma's policy
	 * if the placer has VMA policies: 0 or an errno.
	 */
	int		(*fill)(unsigned long len, const struct mbind_req *vma,
				void **mem);
	void		(*release)(void *mem, unsigned long len);
};

int mbind_apply(void *mem, unsigned long len, const struct mbind_req *req);
int placement_tests(const struct placer *pr);
void test_placement(const struct placer *pr, unsigned long len, int vcpus);

#endif
