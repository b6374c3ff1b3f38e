// SPDX-License-Identifier: GPL-2.0
/*
 * The results of the in-guest tests, as KTAP (Documentation/dev-tools/
 * ktap.rst), on the second serial port: the host gives /dev/ttyS1 a file
 * of its own (scripts/boot.sh), so the kernel's printk cannot cut into a
 * line, and reads it with tools/testing/kunit/kunit.py parse.  Two levels:
 * the boot's plan counts the suites init.c runs, each suite plans its
 * tests.  A guest that dies mid-run leaves tests of a plan without a
 * result line, which kunit.py reports as crashed: no sentinel or list of
 * tests that must run is needed to see it.
 *
 * Tests run in forked children too (in_child()), so the test numbers live
 * in shared memory, and each line goes out whole before the next.  Every line is copied
 * to the console as "ktask-ktap: ...", to read beside the kernel's
 * messages; nothing parses that copy.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <termios.h>
#include <unistd.h>

#include "lib.h"

#define KTAP_PORT	"/dev/ttyS1"
#define INDENT		"    "

/*
 * Shared by init and every child it forks (ktap_start() maps it; the
 * static copy serves if it cannot); only one test runs at a time.
 */
static struct ktap_state {
	int	suites;		/* suites begun */
	int	plan;		/* tests the current suite planned */
	int	tests;		/* of those, reported */
	int	failed;		/* of those, failed */
	/* Where the suite's time went: make test must stay inside its bound. */
	unsigned long long begun_ns, last_ns, longest_ns;
	char	longest[64];	/* the test that took longest_ns */
} ktap_static, *ktap = &ktap_static;
static int ktap_fd = -1;

/* All of @len bytes of @buf to the port; a short write would join lines. */
static void ktap_write(const char *buf, size_t len)
{
	ssize_t n;

	while (ktap_fd >= 0 && len) {
		n = write(ktap_fd, buf, len);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0) {
			printf("ktask-ktap: error: writing %s: %s\n", KTAP_PORT,
			       strerror(errno));
			return;
		}
		buf += n;
		len -= n;
	}
}

static void ktap_line(const char *indent, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

static void ktap_line(const char *indent, const char *fmt, ...)
{
	char line[1024];
	va_list ap;
	int len;

	len = snprintf(line, sizeof(line), "%s", indent);
	va_start(ap, fmt);
	len += vsnprintf(line + len, sizeof(line) - len - 1, fmt, ap);
	va_end(ap);
	if (len > (int)sizeof(line) - 2)
		len = sizeof(line) - 2;
	/* A detail must not end the line early. */
	for (char *c = line; c < line + len; c++)
		if (*c == '\n' || *c == '\r')
			*c = ' ';
	line[len++] = '\n';
	ktap_write(line, len);
	printf("ktask-ktap: %.*s", len, line);
	fflush(stdout);
}

int ktap_start(int suites)
{
	struct ktap_state *shared;
	struct termios t;
	int ret = 0;

	shared = mmap(NULL, sizeof(*ktap), PROT_READ | PROT_WRITE,
		      MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	if (shared != MAP_FAILED)
		ktap = shared;
	else
		ret = -1;	/* a child's results would not count */
	memset(ktap, 0, sizeof(*ktap));
	ktap_fd = open(KTAP_PORT, O_WRONLY | O_NOCTTY | O_CLOEXEC);
	if (ktap_fd < 0)
		return -1;
	/* Raw: no "\r\n" for "\n", no echo. */
	if (!tcgetattr(ktap_fd, &t)) {
		cfmakeraw(&t);
		tcsetattr(ktap_fd, TCSANOW, &t);
	}
	ktap_line("", "KTAP version 1");
	ktap_line("", "1..%d", suites);
	return ret;
}

/* Before power off: the UART's buffer out, or the last results are lost. */
void ktap_end(void)
{
	if (ktap_fd >= 0)
		tcdrain(ktap_fd);
}

void ktap_suite_begin(const char *name)
{
	ktap->suites++;
	ktap->plan = 0;
	ktap->tests = 0;
	ktap->failed = 0;
	ktap->begun_ns = ktap->last_ns = now_ns();
	ktap->longest_ns = 0;
	ktap->longest[0] = '\0';
	ktap_line(INDENT, "KTAP version 1");
	ktap_line(INDENT, "# Subtest: %s", name);
}

void ktap_plan(int tests)
{
	ktap->plan = tests;
	ktap_line(INDENT, "1..%d", tests);
}

/* Tests of the current suite reported so far. */
int ktap_reported(void)
{
	return ktap->tests;
}

void ktap_suite_end(const char *name)
{
	if (ktap->tests < ktap->plan)
		ktap_diag("%d of %d planned results: the rest are missing",
			  ktap->tests, ktap->plan);
	ktap_diag("time: %.1f s, longest %s %.1f s",
		  (now_ns() - ktap->begun_ns) / 1e9,
		  ktap->longest[0] ? ktap->longest : "(none)",
		  ktap->longest_ns / 1e9);
	ktap_line("", "%sok %d %s", ktap->failed ? "not " : "", ktap->suites,
		  name);
}

/*
 * The time since the last result (or the suite's start) went to @name;
 * the console (not the KTAP) gets it for each test, to find what to cut.
 */
static void note_time(const char *name)
{
	unsigned long long now = now_ns();

	printf("ktask-time: %s %.1f s\n", name, (now - ktap->last_ns) / 1e9);
	if (now - ktap->last_ns > ktap->longest_ns) {
		ktap->longest_ns = now - ktap->last_ns;
		snprintf(ktap->longest, sizeof(ktap->longest), "%s", name);
	}
	ktap->last_ns = now;
}

/*
 * One result: "ok", "not ok" or "ok ... # SKIP"; @text says why.  One
 * past the plan would be read as the next suite's and hide the suites
 * after it: it becomes a diagnostic line, and the suite fails.
 */
static void result(int ok, const char *skip, const char *name,
		   const char *text)
{
	if (ktap->tests == ktap->plan) {
		ktap->failed++;
		ktap_diag("past the plan of %d: %s %s %s", ktap->plan,
			  ok ? "ok" : "not ok", name, text);
		return;
	}
	ktap->tests++;
	ktap->failed += !ok;
	note_time(name);
	ktap_line(INDENT, "%s %d %s%s%s%s", ok ? "ok" : "not ok", ktap->tests,
		  name, *skip || *text ? " # " : "", skip, text);
}
void report(int ok, const char *name, const char *fmt, ...)
{
	char text[768];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(text, sizeof(text), fmt, ap);
	va_end(ap);
	result(ok, "", name, text);
}

void report_skip(const char *name, const char *fmt, ...)
{
	char text[768];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(text, sizeof(text), fmt, ap);
	va_end(ap);
	result(1, "SKIP ", name, text);
}

/* Each test of the NULL-ended @names failed: their setup did. */
void report_setup_failed(const char *const *names, const char *fmt, ...)
{
	char text[768];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(text, sizeof(text), fmt, ap);
	va_end(ap);
	for (; *names; names++)
		result(0, "", *names, text);
}

void ktap_diag(const char *fmt, ...)
{
	char text[900];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(text, sizeof(text), fmt, ap);
	va_end(ap);
	ktap_line(INDENT, "# %s", text);
}
