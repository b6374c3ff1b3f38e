// SPDX-License-Identifier: GPL-2.0
/*
 * What every other test may have left behind, checked last: memory the
 * kernel leaked (kmemleak) and a WARNING or BUG in the kernel log.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/klog.h>
#include <unistd.h>

#include "lib.h"
#include "suites.h"

#define KMEMLEAK	"/sys/kernel/debug/kmemleak"

/*
 * No WARN or BUG in the kernel log, after every other test.  The console
 * may not have shown it (a quiet boot hides warnings): print the report.
 */
static void test_kernel_log(void)
{
	static char log[1 << 20];
	int len = klogctl(3, log, sizeof(log) - 1);	/* SYSLOG_ACTION_READ_ALL */
	char *at, *line, *end;
	int i;

	if (len < 0) {
		report(0, "kernel_log", "klogctl: %s", strerror(errno));
		return;
	}
	log[len] = '\0';
	at = strstr(log, "WARNING:");
	if (!at)
		at = strstr(log, "BUG:");
	for (line = at, i = 0; line && i < 40; line = end + 1, i++) {
		end = strchr(line, '\n');
		if (!end)
			break;
		printf("ktask-dmesg: %.*s\n", (int)(end - line), line);
	}
	report(!at, "kernel_log", "no WARNING or BUG in the kernel log");
}

/*
 * No object leaked.  kmemleak reports an object unreferenced in two scans
 * in a row, and only once it is 5 seconds old: wait that long after the
 * last test, then scan twice.
 */
static void test_kmemleak(void)
{
	char line[256];
	int leaks = 0, shown = 0;
	FILE *f;

	if (access(KMEMLEAK, W_OK)) {
		report_skip("kmemleak", "kmemleak is not in this kernel");
		return;
	}
	sleep(6);
	if (write_str(KMEMLEAK, "scan\n") || write_str(KMEMLEAK, "scan\n")) {
		report(0, "kmemleak", "scan: %s (kmemleak disabled itself?)",
		       strerror(errno));
		return;
	}
	f = fopen(KMEMLEAK, "r");
	while (f && fgets(line, sizeof(line), f)) {
		leaks += !!strstr(line, "unreferenced object");
		if (shown++ < 200)
			printf("ktask-leak: %s", line);
	}
	if (f)
		fclose(f);
	report(f && !leaks, "kmemleak", "%d unreferenced objects after the tests",
	       leaks);
}

/* make test's last suite: after every other test. */
void run_leftover_tests(const struct boot *b)
{
	ktap_plan(2);
	test_kmemleak();
	test_kernel_log();
}

/* The kselftest modes': their selftests are not ktask's to leak in. */
void run_kernel_log_test(const struct boot *b)
{
	ktap_plan(1);
	test_kernel_log();
}
