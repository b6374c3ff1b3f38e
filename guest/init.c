// SPDX-License-Identifier: GPL-2.0
/*
 * PID 1 of the guest of make run and make test: it only dispatches.
 *
 * The kernel hands unknown key=value boot parameters to init's
 * environment.  ktask_mode=, a comma list, names what to run (default
 * "bench,startup,contention"); each mode is a list of suites (suites.h),
 * run in the order of the table below, whichever order the list has:
 *
 *	meminfo		deferred init's times and the memory it left (data)
 *	bench		the self-benchmark at several thread counts (data)
 *	startup		what a job's start costs a user and a kernel caller
 *			(data)
 *	contention	jobs beside CPU hogs (data)
 *	mm		fallocate(), 1 GiB first touch, VFIO map, pmem bind
 *			and memset() rates, then busy (data)
 *	busy		the same callers beside CPU hogs and under cpu.max
 *	callers		mm without busy (make run MODE=model)
 *			(data)
 *	memmap		the pmem driver's bind alone (data)
 *	thp_move	move_pages(2) of THPs from node 0 to node 1 alone
 *			(data)
 *	huge_move	the same of a 1 GiB hugetlb page (data)
 *	test		the in-guest tests of make test
 *	falloc		its 2 MiB fallocate() tests alone
 *	placement	where fallocate()'s pages land under each memory
 *			policy alone, for make test's memoryless-node boot
 *	vfio		its VFIO tests alone
 *	zone_device	its test of device memory's struct pages alone
 *	migrate		its tests of page migration alone
 *	core		its tests of a user task as the caller alone
 *	isolated	a user task's helpers and isolated CPUs, for make
 *			test's memoryless-node boot (isolcpus=7)
 *	faults		its fault injection and leak tests alone
 *	kselftest	the kernel's long mm selftests
 *	kselftest-compare	the selftests that fail on 6.12 as it is, on
 *			either kernel of make run, for run.sh to compare (data)
 *
 * Tests report KTAP on the second serial port (ktap.c); data suites print
 * lines with a prefix of their own on the console ("ktask-bench: ",
 * "ktask-mm: ", ...), after a first "ktask-bench: vcpus=4 nodes=2
 * mem_kb=... kernel=..." line, for scripts/report.py.  The benchmarks'
 * parameters:
 *
 *	ktask_threads=1,2,4	thread counts (default 1,2,4,... up to nproc,
 *				always ending with nproc)
 *	ktask_repeat=3		runs of each (job, threads) pair
 *
 * Then the guest powers off.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/reboot.h>
#include <sys/stat.h>
#include <sys/utsname.h>
#include <unistd.h>

#include "lib.h"
#include "suites.h"

#define PREFIX		"ktask-bench: "
#define MAX_SUITES	13	/* of a mode; the first empty entry ends them */

/* A suite of a mode: of tests (KTAP) if it has a name, of data if not. */
struct suite {
	const char	*name;
	void		(*run)(const struct boot *b);
};

static const struct mode {
	const char	*name;
	int		bench;		/* needs the self-benchmark's file */
	struct suite	suites[MAX_SUITES];
} modes[] = {
	{ "meminfo", 0, { { NULL, run_meminfo } } },
	{ "bench", 1, { { NULL, run_bench } } },
	{ "startup", 1, { { NULL, run_startup } } },
	{ "contention", 1, { { NULL, run_contention } } },
	{ "mm", 0, { { NULL, run_mm_bench }, { NULL, run_busy_bench } } },
	{ "busy", 0, { { NULL, run_busy_bench } } },
	/* The mm callers without the busy ones: make run MODE=model. */
	{ "callers", 0, { { NULL, run_mm_bench } } },
	{ "memmap", 0, { { NULL, run_memmap_bench } } },
	{ "thp_move", 0, { { NULL, run_thp_move_bench } } },
	{ "huge_move", 0, { { NULL, run_huge_move_bench } } },
	/* First: boot reads the trace of boot-time jobs. */
	{ "test", 1, { { "boot", run_deferred_init_tests },
		       { "hugetlbfs_falloc", run_falloc_tests },
		       { "placement", run_falloc_placement },
		       { "falloc_races", run_falloc_race_tests },
		       { "gigantic", run_gigantic_tests },
		       { "vfio", run_vfio_tests },
		       { "kselftests", run_kselftests_quick },
		       { "core", run_core_tests },
		       { "faults", run_fault_tests },
		       { "guarantees", run_guarantee_tests },
		       { "zone_device", run_zone_device_tests },
		       { "migrate", run_migrate_tests },
		       { "leftovers", run_leftover_tests } } },
	{ "falloc", 0, { { "hugetlbfs_falloc", run_falloc_tests },
			 { "placement", run_falloc_placement },
			 { "falloc_races", run_falloc_race_tests } } },
	{ "placement", 0, { { "placement", run_falloc_placement } } },
	{ "vfio", 0, { { "vfio", run_vfio_tests } } },
	{ "zone_device", 0, { { "zone_device", run_zone_device_tests } } },
	{ "migrate", 0, { { "migrate", run_migrate_tests } } },
	{ "core", 1, { { "core", run_core_tests } } },
	{ "isolated", 1, { { "isolated", run_isolated_tests } } },
	{ "guarantees", 0, { { "guarantees", run_guarantee_tests },
			     { "leftovers", run_leftover_tests } } },
	{ "faults", 1, { { "faults", run_fault_tests },
			 { "leftovers", run_leftover_tests } } },
	{ "kselftest", 0, { { "kselftests", run_kselftests_long },
			    { "kernel", run_kernel_log_test } } },
	{ "kselftest-compare", 0, { { NULL, run_kselftests_compare },
				    { "kernel", run_kernel_log_test } } },
};

/* Each suite @s of mode @m, up to its first empty entry. */
#define for_each_suite(s, m)						\
	for ((s) = (m)->suites; (s) < (m)->suites + MAX_SUITES && (s)->run; \
	     (s)++)

static void power_off(void)
{
	ktap_end();
	fflush(stdout);
	sync();
	reboot(RB_POWER_OFF);
	/* Without ACPI power off, a reboot still ends QEMU (-no-reboot). */
	reboot(RB_AUTOBOOT);
	for (;;)
		pause();
}

static void mount_fs(const char *type, const char *dir)
{
	mkdir(dir, 0755);
	if (mount(type, dir, type, 0, NULL) && errno != EBUSY)
		printf(PREFIX "warning: mount %s on %s: %s\n",
		       type, dir, strerror(errno));
}

static void print_machine(int vcpus)
{
	struct utsname u;

	if (uname(&u))
		strcpy(u.release, "unknown");
	printf(PREFIX "vcpus=%d nodes=%d mem_kb=%lld kernel=%s\n", vcpus,
	       count_nodes(), read_key("/proc/meminfo", "MemTotal", ':'),
	       u.release);
}

/* Parse "1,2,8" into @t; return the count, or 0 if the list is bad. */
static int parse_threads(const char *s, int *t, int max)
{
	int n = 0;
	char *end;

	while (*s) {
		long v = strtol(s, &end, 10);

		if (end == s || v < 1 || v > MAX_THREADS || n == max)
			return 0;
		t[n++] = v;
		s = end;
		if (*s == ',')
			s++;
		else if (*s)
			return 0;
	}
	return n;
}

/* 1, 2, 4, ... below @vcpus, then @vcpus itself. */
static int default_threads(int vcpus, int *t, int max)
{
	int n = 0, v;

	for (v = 1; v < vcpus && n < max - 1; v *= 2)
		t[n++] = v;
	t[n++] = vcpus;
	return n;
}

/* Whether @mode is in the comma list @modes. */
static int has_mode(const char *modes, const char *mode)
{
	size_t len = strlen(mode);
	const char *at;

	for (at = strstr(modes, mode); at; at = strstr(at + 1, mode))
		if ((at == modes || at[-1] == ',') &&
		    (at[len] == ',' || !at[len]))
			return 1;
	return 0;
}

/* Read ktask_threads= and ktask_repeat= into @b: 0, or -1 if bad. */
static int parse_params(struct boot *b)
{
	const char *env = getenv("ktask_threads");

	b->vcpus = sysconf(_SC_NPROCESSORS_ONLN);
	if (b->vcpus < 1)
		b->vcpus = 1;
	b->nthreads = env ? parse_threads(env, b->threads, MAX_THREADS) :
			    default_threads(b->vcpus, b->threads, MAX_THREADS);
	if (!b->nthreads) {
		printf(PREFIX "error: bad ktask_threads=%s, want e.g. 1,2,4\n", env);
		return -1;
	}
	env = getenv("ktask_repeat");
	b->repeat = env ? atoi(env) : 3;
	if (b->repeat < 1)
		b->repeat = 1;
	return 0;
}

/* The suites of tests in the modes asked for: the boot's KTAP plan. */
static int count_test_suites(const char *asked)
{
	const struct suite *s;
	size_t m;
	int n = 0;

	for (m = 0; m < ARRAY_SIZE(modes); m++)
		if (has_mode(asked, modes[m].name))
			for_each_suite(s, &modes[m])
				n += !!s->name;
	return n;
}

static void run_suite(const struct suite *s, const struct boot *b)
{
	if (!s->name) {
		s->run(b);
		return;
	}
	ktap_suite_begin(s->name);
	s->run(b);
	ktap_suite_end(s->name);
}

int main(void)
{
	const char *asked = getenv("ktask_mode");
	const struct suite *s;
	struct boot b;
	size_t m;

	setvbuf(stdout, NULL, _IOLBF, 0);
	mount_fs("proc", "/proc");
	mount_fs("sysfs", "/sys");
	mount_fs("debugfs", "/sys/kernel/debug");
	mount_fs("tracefs", "/sys/kernel/tracing");
	if (!asked)
		asked = "bench,startup,contention";
	if (parse_params(&b))
		power_off();
	print_machine(b.vcpus);
	if (ktap_start(count_test_suites(asked)))
		printf(PREFIX "error: no KTAP port: %s\n", strerror(errno));

	for (m = 0; m < ARRAY_SIZE(modes); m++) {
		if (!has_mode(asked, modes[m].name))
			continue;
		/* The unpatched kernel of make run has none. */
		if (modes[m].bench && access(BENCH, W_OK)) {
			ktap_diag("%s: %s; is the kernel built with CONFIG_KTASK_BENCH=y and debugfs? The suites left are missing",
				  BENCH, strerror(errno));
			break;
		}
		for_each_suite(s, &modes[m])
			run_suite(s, &b);
	}
	power_off();
	return 0;
}
