/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The suites of the guest, one file each, which init.c runs as the
 * boot's ktask_mode= asks (init.c: modes).  A suite of tests plans its
 * tests and reports each (lib.h: ktap_plan(), report()); a suite of data
 * prints lines, each with its prefix, for the host's scripts.  No suite
 * calls another: what two share is in the layers below (lib.h).
 */
#ifndef KTASK_GUEST_SUITES_H
#define KTASK_GUEST_SUITES_H

#define MAX_THREADS	64

/* What the boot asked for: its vCPUs, and the benchmarks' parameters. */
struct boot {
	int	vcpus;
	int	repeat;			/* runs of each case (ktask_repeat=) */
	int	nthreads;
	int	threads[MAX_THREADS];	/* thread counts (ktask_threads=) */
};

/*
 * Data: bench.c, startup.c, contention.c, mm_bench.c (three), busy_bench.c,
 * hugetlb.c, kselftest.c.
 */
void run_bench(const struct boot *b);
void run_startup(const struct boot *b);
void run_contention(const struct boot *b);
void run_mm_bench(const struct boot *b);
void run_memmap_bench(const struct boot *b);
void run_thp_move_bench(const struct boot *b);
void run_huge_move_bench(const struct boot *b);
void run_busy_bench(const struct boot *b);
void run_meminfo(const struct boot *b);
void run_kselftests_compare(const struct boot *b);

/* Tests. */
void run_deferred_init_tests(const struct boot *b);	/* hugetlb.c */
void run_falloc_tests(const struct boot *b);
void run_falloc_placement(const struct boot *b);
void run_gigantic_tests(const struct boot *b);
void run_falloc_race_tests(const struct boot *b);	/* falloc_race.c */
void run_vfio_tests(const struct boot *b);		/* vfio.c */
void run_kselftests_quick(const struct boot *b);	/* kselftest.c */
void run_kselftests_long(const struct boot *b);
void run_core_tests(const struct boot *b);		/* core.c */
void run_isolated_tests(const struct boot *b);
void run_fault_tests(const struct boot *b);		/* faults.c */
void run_guarantee_tests(const struct boot *b);		/* guarantees.c */
void run_leftover_tests(const struct boot *b);		/* leftovers.c */
void run_zone_device_tests(const struct boot *b);	/* zone_device.c */
void run_migrate_tests(const struct boot *b);		/* migrate.c */
void run_kernel_log_test(const struct boot *b);

#endif
