// SPDX-License-Identifier: GPL-2.0
/*
 * PID 1 of the guest of make run and make test.
 *
 * The kernel hands unknown key=value boot parameters to init's environment;
 * ktask_mode=, a comma list, says what to run (default "bench,contention"):
 *
 *	bench		the self-benchmark at several thread counts (below)
 *	contention	jobs beside CPU hogs (contention.c)
 *	test		the in-guest tests of make test (selftest.c)
 *	mm		fallocate(), 1 GiB first touch, VFIO map and memset() rates
 *			(hugetlb.c, vfio.c)
 *	vfio		the VFIO tests of make test alone, for working on them (vfio.c)
 *	falloc		the 2 MiB fallocate() tests of make test alone (hugetlb.c,
 *			falloc_race.c)
 *	placement	where fallocate()'s pages land under each memory
 *			policy alone (placement.c), for make test's
 *			memoryless-node boot
 *	faults		the fault injection and kmemleak tests alone (faults.c)
 *	meminfo		deferred init times, memory totals per zone (hugetlb.c)
 *	kselftest	the kernel's long mm selftests alone (selftest.c)
 *	kselftest-compare	the selftests that fail on 6.12 as it is, on
 *			either kernel of make run, for run.sh to compare
 *			(selftest.c)
 *
 * The benchmark runs the ktask self-benchmark through debugfs and prints
 * one line per run on the console, each prefixed "ktask-bench: ", for
 * scripts/report.py:
 *
 *	ktask-bench: vcpus=4 nodes=2 mem_kb=16377888 kernel=6.12.117
 *	ktask-bench: job=cpu threads=2 used=2 units=4096 wall_ns=... cpu_ns=... job_cpu_ns=...
 *	ktask-bench: error job=mem threads=4 errno=12 (Cannot allocate memory)
 *	ktask-bench: done
 *
 * Writing "<job> <threads>\n" to /sys/kernel/debug/ktask/bench runs the job
 * synchronously; reading the file then returns the result line.  Its
 * parameters:
 *
 *	ktask_threads=1,2,4	thread counts (default 1,2,4,... up to nproc,
 *				always ending with nproc)
 *	ktask_repeat=3		runs of each (job, threads) pair
 *
 * Repeats are the outermost loop, so any drift spreads over all cases.
 * Then the guest powers off.  Every user task that writes the file is the
 * caller of the job, so its helpers are threads of this process.
 */
#include <errno.h>
#include <glob.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/reboot.h>
#include <sys/stat.h>
#include <sys/utsname.h>
#include <fcntl.h>
#include <time.h>
#include <unistd.h>

#include "guest.h"

#define MAX_THREADS	64
#define PREFIX		"ktask-bench: "

static const char *const jobs[] = { "cpu", "mem" };

static void power_off(void)
{
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

int count_nodes(void)
{
	glob_t g;
	int n = 0;

	if (!glob("/sys/devices/system/node/node[0-9]*", GLOB_ONLYDIR, NULL, &g))
		n = g.gl_pathc;
	globfree(&g);
	return n;
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

int write_str(const char *path, const char *s)
{
	ssize_t len = strlen(s), ret;
	int fd = open(path, O_WRONLY);

	if (fd < 0)
		return -errno;
	ret = write(fd, s, len);
	if (ret < 0)
		ret = -errno;
	close(fd);
	return ret < 0 ? ret : ret == len ? 0 : -EIO;
}

/* Empty the trace buffer: only an open with O_TRUNC does. */
int trace_clear(void)
{
	int fd = open("/sys/kernel/tracing/trace", O_WRONLY | O_TRUNC);

	if (fd < 0)
		return -errno;
	close(fd);
	return 0;
}

int read_line(const char *path, char *buf, size_t size)
{
	ssize_t len;
	int fd = open(path, O_RDONLY);

	if (fd < 0)
		return -errno;
	len = read(fd, buf, size - 1);
	if (len < 0)
		len = -errno;
	close(fd);
	if (len < 0)
		return len;
	buf[len] = '\0';
	buf[strcspn(buf, "\n")] = '\0';
	return 0;
}

/*
 * The value after "key<sep>" in a file of such lines: /proc/meminfo
 * ("MemTotal: 16377888 kB", sep ':'), cgroup cpu.stat ("usage_usec 12",
 * sep ' ').  -1 if the file or the key is missing.
 */
long long read_key(const char *path, const char *key, char sep)
{
	char line[256];
	long long value = -1;
	size_t len = strlen(key);
	FILE *f = fopen(path, "r");

	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f))
		if (!strncmp(line, key, len) && line[len] == sep) {
			value = atoll(line + len + 1);
			break;
		}
	fclose(f);
	return value;
}

unsigned long long now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000000000ULL + ts.tv_nsec;
}

static unsigned long long field(const char *line, const char *key)
{
	const char *at = strstr(line, key);

	return at ? strtoull(at + strlen(key), NULL, 10) : 0;
}

/*
 * The code of the kernel's symbol @name, from its address in /proc/kallsyms
 * to the next symbol's.  0 if found.
 */
int ksym_range(const char *name, unsigned long long *start,
	       unsigned long long *end)
{
	unsigned long long addr, next = ~0ULL;
	char line[512], sym[256], type;
	FILE *f = fopen("/proc/kallsyms", "r");

	*start = 0;
	while (f && fgets(line, sizeof(line), f))
		if (sscanf(line, "%llx %c %255s", &addr, &type, sym) == 3 &&
		    !strcmp(sym, name))
			*start = addr;
	if (f)
		rewind(f);
	while (f && *start && fgets(line, sizeof(line), f))
		if (sscanf(line, "%llx %c %255s", &addr, &type, sym) == 3 &&
		    addr > *start && addr < next)
			next = addr;
	if (f)
		fclose(f);
	*end = next;
	return *start && next != ~0ULL ? 0 : -ENOENT;
}

/* Run one job of the self-benchmark; 0 or -errno. */
int bench_run(const char *job, int threads, struct bench_result *res)
{
	const char *at;
	char cmd[64];
	int ret;

	snprintf(cmd, sizeof(cmd), "%s %d\n", job, threads);
	ret = write_str(BENCH, cmd);
	if (!ret)
		ret = read_line(BENCH, res->line, sizeof(res->line));
	if (ret)
		return ret;
	res->used = field(res->line, " used=");
	res->wall_ns = field(res->line, " wall_ns=");
	res->cpu_ns = field(res->line, " cpu_ns=");
	res->job_cpu_ns = field(res->line, " job_cpu_ns=");
	at = strstr(res->line, " sum=");
	res->sum = at ? strtoull(at + 5, NULL, 16) : 0;
	return 0;
}

static void bench_one(const char *job, int threads)
{
	struct bench_result res;
	int ret = bench_run(job, threads, &res);

	if (ret)
		printf(PREFIX "error job=%s threads=%d errno=%d (%s)\n",
		       job, threads, -ret, strerror(-ret));
	else
		printf(PREFIX "%s\n", res.line);
}

static void run_bench(int repeat, const int *threads, int nthreads)
{
	int r, j, i;

	for (r = 0; r < repeat; r++)
		for (j = 0; j < (int)ARRAY_SIZE(jobs); j++)
			for (i = 0; i < nthreads; i++)
				bench_one(jobs[j], threads[i]);
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

int main(void)
{
	int threads[MAX_THREADS], nthreads, vcpus, repeat;
	const char *env, *modes;

	setvbuf(stdout, NULL, _IOLBF, 0);
	mount_fs("proc", "/proc");
	mount_fs("sysfs", "/sys");
	mount_fs("debugfs", "/sys/kernel/debug");
	mount_fs("tracefs", "/sys/kernel/tracing");
	modes = getenv("ktask_mode");
	if (!modes)
		modes = "bench,contention";

	vcpus = sysconf(_SC_NPROCESSORS_ONLN);
	if (vcpus < 1)
		vcpus = 1;
	print_machine(vcpus);

	env = getenv("ktask_threads");
	nthreads = env ? parse_threads(env, threads, MAX_THREADS) :
			 default_threads(vcpus, threads, MAX_THREADS);
	if (!nthreads) {
		printf(PREFIX "error: bad ktask_threads=%s, want e.g. 1,2,4\n", env);
		power_off();
	}
	env = getenv("ktask_repeat");
	repeat = env ? atoi(env) : 3;
	if (repeat < 1)
		repeat = 1;

	/* The unpatched kernel of make run has none: it runs mm and meminfo. */
	if ((has_mode(modes, "bench") || has_mode(modes, "contention") ||
	     has_mode(modes, "test") || has_mode(modes, "faults")) &&
	    access(BENCH, W_OK)) {
		printf(PREFIX "error: %s: %s; is the kernel built with CONFIG_KTASK_BENCH=y and debugfs?\n",
		       BENCH, strerror(errno));
		power_off();
	}

	if (has_mode(modes, "meminfo")) {
		print_boot_log();
		print_meminfo();
	}
	if (has_mode(modes, "bench"))
		run_bench(repeat, threads, nthreads);
	if (has_mode(modes, "contention"))
		run_contention(vcpus, repeat);
	if (has_mode(modes, "mm"))
		run_mm_bench(threads, nthreads, repeat, vcpus);
	if (has_mode(modes, "test"))
		run_selftest(vcpus);
	else if (has_mode(modes, "vfio"))
		run_vfio_tests(vcpus);
	else if (has_mode(modes, "falloc"))
		run_falloc_tests(vcpus);
	else if (has_mode(modes, "placement"))
		run_falloc_placement(vcpus);
	else if (has_mode(modes, "faults"))
		run_fault_selftest(vcpus);
	else if (has_mode(modes, "kselftest"))
		run_kselftest_mode();
	else if (has_mode(modes, "kselftest-compare"))
		run_kselftest_compare_mode();
	printf(PREFIX "done\n");
	power_off();
	return 0;
}
