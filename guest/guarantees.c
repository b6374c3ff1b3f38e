// SPDX-License-Identifier: GPL-2.0
/*
 * What ktask promises a user task, checked from a real process: its
 * cgroups bound all the work done for it, and when the syscall returns
 * none of its helpers is left in its thread group.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <sched.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <linux/capability.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "hogs.h"
#include "huge.h"
#include "lib.h"
#include "suites.h"
#include "thp.h"
#include "vfio_dev.h"

/*
 * Calls with helpers per case, of MAX_CALLS at most.  Without the wait
 * for helpers to leave, two boots saw a helper after 0 or 1 of about 20
 * calls idle and 2 or 3 beside the hogs (5 of 20 when this test was
 * first written): 20 calls miss it in a case beside the hogs 4 to 12% of
 * the time, in both 0.5%.  A call without helpers checks nothing, so it
 * does not count.
 */
#define TRIES		20
#define MAX_CALLS	(2 * TRIES)
/* Two chunks of KTASK_MEM_CHUNK (128 MiB): the caller and a helper. */
#define LEFT_LEN	(256UL << 20)
/* The cgroup of the left_behind process and its hogs, for pids.current. */
#define LEFT_CG		CGROOT "/ktask-left"
/*
 * Its real user, for RLIMIT_NPROC's count, which holds no task of root's
 * nor one with CAP_SYS_RESOURCE or CAP_SYS_ADMIN in effect: it keeps
 * root's effective uid, and those two out of effect for the fork that
 * probes the limit.  Nothing else in the guest runs as this user; its
 * hogs and the probe's child, which do, are reaped before the next check.
 */
#define LEFT_UID	1
#define BOUND_CG	CGROOT "/ktask-bound"
/*
 * cpu.max: one and a half CPUs, which two threads exceed; less than one
 * CPU would make a job run alone (its helpers would only share the
 * quota), and a helper that escapes the cgroup would go unseen.
 */
#define BOUND_PCT	150
/* Most CPU time the guest may spend per unit the cgroup is charged. */
#define BOUND_RATIO	1.15
/* THPs moved from node 0 to node 1: 32, a job of 4 chunks each. */
#define BOUND_MOVE	(64UL << 20)
#define MIG_CHUNK	(512UL << 10)	/* MIGRATE_COPY_MIN_CHUNK */

/* One call that may run a job with helpers; 0 or -1 with errno set. */
struct left_op {
	const char	*name;
	const char	*func;		/* its thread function, in the trace */
	int		(*call)(void *ctx);
	void		(*undo)(void *ctx);
};

struct left_ctx {
	int		fd;		/* the hugetlbfs file */
	unsigned char	*buf;		/* the VFIO map's buffer */
	int		mnt_ns;		/* its own mount namespace */
	int		nr_hogs;	/* running beside the call */
};

static int falloc_call(void *arg)
{
	struct left_ctx *c = arg;

	return fallocate(c->fd, 0, 0, LEFT_LEN);
}

static void falloc_undo(void *arg)
{
	struct left_ctx *c = arg;

	ftruncate(c->fd, 0);
}

static int map_call(void *arg)
{
	struct left_ctx *c = arg;
	int err = dma_map(c->buf, IOVA_BASE, LEFT_LEN);

	errno = err;
	return err ? -1 : 0;
}

static void map_undo(void *arg)
{
	dma_unmap(IOVA_BASE, LEFT_LEN);
}

static const struct left_op left_ops[] = {
	{ "falloc", FALLOC_FUNC, falloc_call, falloc_undo },
	{ "vfio_map", VFIO_MAP_FUNC, map_call, map_undo },
};

static const char *const left_names[] = {
	"left_behind_falloc_idle", "left_behind_vfio_map_idle",
	"left_behind_falloc_busy", "left_behind_vfio_map_busy", NULL,
};

/*
 * What a thread left in the group would change; each check returns 1 if
 * it shows one, 0 if not, or -errno if it could not look:
 * - unshare(CLONE_VM | CLONE_SIGHAND) fails with EINVAL while another
 *   thread is in the group or shares its signal handlers (and does
 *   nothing else): unshare(CLONE_NEWUSER) and the other flags that imply
 *   CLONE_THREAD fail on the first of these;
 * - setns() into its own mount namespace fails with EINVAL while another
 *   task shares its fs_struct (CLONE_FS), as a helper does until it
 *   exits; a user namespace's setns() fails on that too;
 * - Threads: in /proc/self/status;
 * - pids.current of its cgroup, which pids.max bounds: the process and
 *   its hogs, each a single thread;
 * - a fork under an RLIMIT_NPROC that leaves room for one task beside
 *   the process and its hogs, which all run as LEFT_UID, fails with
 *   EAGAIN.
 */
static int left_unshare(const struct left_ctx *c)
{
	if (!unshare(CLONE_VM | CLONE_SIGHAND))
		return 0;
	return errno == EINVAL ? 1 : -errno;
}

/* It sets root and cwd to the namespace's root: every path is absolute. */
static int left_setns(const struct left_ctx *c)
{
	if (!setns(c->mnt_ns, CLONE_NEWNS))
		return 0;
	return errno == EINVAL ? 1 : -errno;
}

static int left_threads(const struct left_ctx *c)
{
	long long threads = read_key("/proc/self/status", "Threads", ':');

	return threads < 0 ? -EIO : threads != 1;
}

static int left_pids(const struct left_ctx *c)
{
	long long tasks = read_num(LEFT_CG "/pids.current");

	return tasks < 0 ? -EIO : tasks != 1 + c->nr_hogs;
}

/* Put CAP_SYS_RESOURCE and CAP_SYS_ADMIN in effect, or out of it. */
static int caps_in_effect(bool on)
{
	return cap_set(CAP_SYS_RESOURCE, on, 1) ?: cap_set(CAP_SYS_ADMIN, on, 1);
}

/* Only the soft limit moves: raising the hard one back needs the caps. */
static int left_nproc(const struct left_ctx *c)
{
	struct rlimit was, room;
	int ret, restored;
	pid_t pid;

	if (getrlimit(RLIMIT_NPROC, &was))
		return -errno;
	room = (struct rlimit){ 2 + c->nr_hogs, was.rlim_max };
	ret = caps_in_effect(false);
	if (!ret && setrlimit(RLIMIT_NPROC, &room))
		ret = -errno;
	if (!ret) {
		pid = fork();
		if (!pid)
			_exit(0);
		if (pid > 0)
			waitpid(pid, NULL, 0);
		else
			ret = errno == EAGAIN ? 1 : -errno;
	}
	restored = setrlimit(RLIMIT_NPROC, &was) ? -errno : caps_in_effect(true);
	return restored ?: ret;
}

static const struct left_check {
	const char	*what;
	int		(*seen)(const struct left_ctx *c);
} left_checks[] = {
	{ "unshare(CLONE_VM | CLONE_SIGHAND) failed", left_unshare },
	{ "setns(CLONE_NEWNS) failed", left_setns },
	{ "Threads: was not 1", left_threads },
	{ "pids.current was not the process and its hogs", left_pids },
	{ "a fork under RLIMIT_NPROC failed", left_nproc },
};

#define NR_CHECKS	ARRAY_SIZE(left_checks)

/*
 * Run the checks after a call, from check @first on: a thread that is
 * leaving shows to the first look more than to the last.  Count what
 * each saw in @seen; 0, or -errno of a check that could not look, named
 * in @failed.
 */
static int left_check(const struct left_ctx *c, size_t first, int *seen,
		      const char **failed)
{
	size_t k, n;
	int ret;

	for (k = 0; k < NR_CHECKS; k++) {
		n = (first + k) % NR_CHECKS;
		ret = left_checks[n].seen(c);
		if (ret < 0) {
			*failed = left_checks[n].what;
			return ret;
		}
		seen[n] += ret;
	}
	return 0;
}

/*
 * Calls until TRIES of them had helper threads, each followed at once by
 * the checks, the next call with helpers from the next check on, so that
 * each comes first as often.  Fewer than TRIES calls with helpers in
 * MAX_CALLS fails: too little was checked.  With @hogs, a nice-0 hog on
 * each of @vcpus vCPUs from when the call has a helper to after the
 * checks: a job starts helpers only for idle CPUs, and these then hardly
 * run: the hogs start with the first helper, before it forks the others,
 * most of which come too late to take a chunk.  A call had helpers if a
 * helper thread ran, chunk or not (its ktask_helper_end event): what is
 * checked is that its thread is gone when the call returns.  With @hogs,
 * only a call the hogs had begun to load before it returned counts: one
 * that returned first was an idle call.
 */
static void left_behind(const struct left_op *op, struct left_ctx *c,
			struct hogs *hogs, int vcpus, const char *name)
{
	int i, err = 0, helped = 0, chunks = 0, seen[NR_CHECKS] = { 0 };
	struct helpers_seen helpers;
	const char *failed;
	char msg[512];
	size_t k, n;
	bool loaded;

	for (i = 0; i < MAX_CALLS && helped < TRIES; i++) {
		trace_start_helpers();
		failed = "hogs";
		err = hogs ? -hogs_start_late(hogs, vcpus, vcpus, op->func) : 0;
		if (err)
			break;
		c->nr_hogs = hogs ? hogs->nr : 0;
		failed = op->name;
		if (op->call(c)) {
			err = errno;
			break;
		}
		/* A hog counts only once the watching one let them go. */
		loaded = !hogs || hogs_count(hogs);
		err = -left_check(c, helped, seen, &failed);
		if (hogs)
			hogs_stop(hogs);
		trace_stop_helpers(op->func);
		trace_helpers(op->func, -1, &helpers);
		helped += helpers.helpers > 0 && loaded;
		chunks += loaded ? helpers.chunks : 0;
		op->undo(c);
		if (err)
			break;
	}
	if (hogs)
		hogs_stop(hogs);
	if (err) {
		report(0, name, "call %d: %s: %s", i + 1, failed, strerror(err));
		return;
	}
	n = snprintf(msg, sizeof(msg),
		     "%d calls, %d with helpers%s (want %d), which took %d chunks",
		     i, helped, hogs ? " and the hogs running by its return" : "",
		     TRIES, chunks);
	for (k = 0; k < NR_CHECKS && n < sizeof(msg); k++)
		n += snprintf(msg + n, sizeof(msg) - n, "; %s %d times",
			      left_checks[k].what, seen[k]);
	for (k = 0; k < NR_CHECKS; k++)
		err |= seen[k];
	report(!err && helped == TRIES, name, "%s", msg);
}

/*
 * The VFIO map's buffer, in THPs as QEMU's guest memory is where it can
 * be: a map pins and maps runs of 2 MiB, not 4 KiB pages one by one (the
 * suite took 138 s instead of 242 under TCG, the busy case with the map
 * alone 114 s before), and what the cases check is where the helpers are
 * once the call returns, not the pages.  Not in the hogs forked for each
 * busy call, as QEMU keeps its DMA memory out of its children: a shared
 * copy makes each map break copy-on-write for every page (12 to 15 s a
 * serial map of it under TCG, against 0.7 s).
 */
static unsigned char *left_buffer(void)
{
	struct thp_region r;

	if (thp_map(&r, LEFT_LEN, -1))
		return NULL;
	if (madvise(r.map, r.maplen, MADV_DONTFORK)) {
		thp_unmap(&r);
		return NULL;
	}
	tag_pages((unsigned char *)r.mem, LEFT_LEN);
	return (unsigned char *)r.mem;
}

static void left_behind_child(int vcpus)
{
	struct left_ctx c = { .fd = -1 };
	char path[64];
	struct hogs h;
	size_t i;
	int busy, err;

	err = cgroup_enter("pids", LEFT_CG);
	if (!err && setresuid(LEFT_UID, 0, 0))
		err = -errno;
	c.mnt_ns = open("/proc/self/ns/mnt", O_RDONLY | O_CLOEXEC);
	if (err || c.mnt_ns < 0) {
		report_setup_failed(left_names, "cgroup %s, user or namespace: %s",
				    LEFT_CG, strerror(err ? -err : errno));
		return;
	}
	snprintf(path, sizeof(path), "%s/left", huge_mount(SZ_2M));
	c.fd = open(path, O_CREAT | O_TRUNC | O_RDWR, 0600);
	c.buf = left_buffer();
	if (c.fd < 0 || !c.buf || (vfio.container < 0 && vfio_open()) ||
	    hogs_init(&h)) {
		report_setup_failed(left_names, "file, buffer, VFIO or hogs: %s",
				    strerror(errno));
		return;
	}
	for (busy = 0, i = 0; busy < 2; busy++) {
		left_behind(&left_ops[0], &c, busy ? &h : NULL, vcpus,
			    left_names[i++]);
		left_behind(&left_ops[1], &c, busy ? &h : NULL, vcpus,
			    left_names[i++]);
	}
	hogs_exit(&h);
	close(c.fd);
	close(c.mnt_ns);
	unlink(path);
}

/* Busy CPU time of the whole guest, from /proc/stat, in microseconds. */
static long long guest_busy_us(void)
{
	unsigned long long v[8] = { 0 };
	char line[256];
	FILE *f = fopen("/proc/stat", "r");
	int n = 0;

	if (f && fgets(line, sizeof(line), f))
		n = sscanf(line, "cpu %llu %llu %llu %llu %llu %llu %llu %llu",
			   &v[0], &v[1], &v[2], &v[3], &v[4], &v[5], &v[6],
			   &v[7]);
	if (f)
		fclose(f);
	if (n != 8)
		return -1;
	/* user nice system [idle iowait] irq softirq steal, in USER_HZ */
	return (long long)(v[0] + v[1] + v[2] + v[5] + v[6] + v[7]) *
	       (1000000 / sysconf(_SC_CLK_TCK));
}

static int touch_1g_call(void)
{
	long long wall_ns;
	int threads;

	return touch_gigantic(huge_mount(SZ_1G), 0, &threads, &wall_ns,
			      NULL) < 0 ? -1 : 0;
}

/*
 * fallocate() of @len of @page pages; with @helped, a job whose helpers
 * must have taken a chunk (-ESRCH if none did: nothing was checked).
 */
static int bound_falloc(unsigned long page, size_t len, bool helped)
{
	char path[64];
	int fd, ret;

	snprintf(path, sizeof(path), "%s/bound", huge_mount(page));
	fd = open(path, O_CREAT | O_TRUNC | O_RDWR, 0600);
	if (fd < 0)
		return -1;
	if (helped)
		trace_start();
	ret = fallocate(fd, 0, 0, len);
	if (helped && trace_threads(FALLOC_FUNC) < 2 && !ret) {
		errno = ESRCH;
		ret = -1;
	}
	close(fd);
	unlink(path);
	return ret;
}

static int falloc_1g_call(void)
{
	return bound_falloc(SZ_1G, SZ_1G, false);
}

/* Two chunks, the caller's and a helper's. */
static int falloc_2m_call(void)
{
	return bound_falloc(SZ_2M, LEFT_LEN, true);
}

/*
 * move_pages(2) of BOUND_MOVE of THPs, written on node 0, to node 1: a job
 * per THP, the caller and a helper (cpu.max 150% lets two threads run),
 * whose helpers must have copied a quarter of the chunks at least, all of
 * them in this process (-ESRCH otherwise: too little was checked).  Every
 * THP must have moved, every word as written (-EIO otherwise).
 */
static int migrate_call(void)
{
	size_t i, nr = BOUND_MOVE / THP_SIZE;
	int *status = calloc(nr, sizeof(*status));
	struct helpers_seen seen = { 0 };
	struct thp_region r;
	long ret = status ? thp_map(&r, BOUND_MOVE, 0) : -ENOMEM;

	if (ret)
		goto out;
	thp_fill(&r);
	if (thp_huge_kb(&r) != (long long)BOUND_MOVE >> 10)
		ret = -ENOMEM;
	trace_record_tgid(1);
	trace_start_helpers();
	ret = ret ?: thp_move_pages(&r, 1, status);
	trace_stop_helpers(THP_COPY_FUNC);
	trace_helpers(THP_COPY_FUNC, -1, &seen);
	trace_record_tgid(0);
	if (!ret && (seen.foreign || seen.chunks * 4 < (int)(nr * THP_SIZE /
							      MIG_CHUNK)))
		ret = -ESRCH;
	for (i = 0; !ret && i < nr; i++)
		if (status[i] != 1)
			ret = -EIO;
	if (!ret && thp_bad(&r))
		ret = -EIO;
	thp_unmap(&r);
out:
	free(status);
	errno = ret < 0 ? -ret : EAGAIN;
	return ret ? -1 : 0;
}

static const struct {
	const char	*name;
	int		(*call)(void);
} bound_ops[] = {
	{ "cgroup_bound_touch_1g", touch_1g_call },
	{ "cgroup_bound_falloc_1g", falloc_1g_call },
	{ "cgroup_bound_falloc_2m", falloc_2m_call },
	{ "cgroup_bound_migrate", migrate_call },
};

static const char *const bound_names[] = {
	"cgroup_bound_touch_1g", "cgroup_bound_falloc_1g",
	"cgroup_bound_falloc_2m", "cgroup_bound_migrate", NULL,
};

/*
 * Inside a cgroup at cpu.max 150%, calls that zero a 1 GiB page (in the
 * caller alone), and a fallocate() and a migration whose helpers take
 * chunks: the CPU time the whole guest spent meanwhile is no more than
 * BOUND_RATIO times what the cgroup was charged.  A helper outside the
 * cgroup (a root-cgroup worker) would spend CPU time the cgroup is not
 * charged.
 */
static void bound_child(int unused)
{
	long long busy, usage;
	size_t i;
	int err;

	err = cgroup_join_cpu_max(BOUND_CG, BOUND_PCT, 100000);
	if (err) {
		report_setup_failed(bound_names, "cgroup %s: %s", BOUND_CG,
				    strerror(-err));
		return;
	}
	for (i = 0; i < ARRAY_SIZE(bound_ops); i++) {
		busy = guest_busy_us();
		usage = read_key(BOUND_CG "/cpu.stat", "usage_usec", ' ');
		err = bound_ops[i].call() ? errno : 0;
		busy = guest_busy_us() - busy;
		usage = read_key(BOUND_CG "/cpu.stat", "usage_usec", ' ') -
			usage;
		if (err || usage <= 0 || busy < 0) {
			report(0, bound_ops[i].name, "call: %s, usage %lld us",
			       strerror(err), usage);
			continue;
		}
		report(busy <= BOUND_RATIO * usage, bound_ops[i].name,
		       "guest busy %lld us, cgroup charged %lld us: %.2f (most %.2f)",
		       busy, usage, (double)busy / usage, BOUND_RATIO);
	}
}

/*
 * The cpuset test: a process in CPUSET_WIDE (every vCPU) runs a job of the
 * self-benchmark while another of its threads moves it to CPUSET_ONE (CPU
 * 0), until CPUSET_FORKS helpers were forked in the window described
 * below, in CPUSET_TRIES tries at most.  The move starts up to
 * CPUSET_LEAD_US before the job, at random: it waits for an RCU grace
 * period before it holds up forks, so that a job's start, where its
 * helpers are forked, falls inside it.  Once the move has put the
 * process's threads on CPU 0 (its cgroup_attach_task event), every thread
 * of the process may run there alone, helpers forked later included: a
 * helper that ends on another CPU after it (a ktask_helper_end event) ran
 * outside its cpuset.  Before helpers looked at their cpuset, those forked
 * after the move by a job that had copied its caller's CPUs before it took
 * the copy.  The cpu job is cut to CPUSET_UNITS units, so that it outlasts
 * the move.
 */
#define CPUSET_WIDE	CGROOT "/ktask-cpuset-wide"
#define CPUSET_ONE	CGROOT "/ktask-cpuset-one"
#define CPUSET_TRIES	200
#define CPUSET_FORKS	10
#define CPUSET_UNITS	"16384\n"
#define CPUSET_LEAD_US	20000
#define ATTACH		TRACE "events/cgroup/cgroup_attach_task/enable"
#define TRACE_CLOCK	TRACE "trace_clock"

struct cpuset_move {
	int	go[2];		/* a byte per job: move now */
	int	moved[2];	/* a byte per move done */
};

static void *cpuset_mover(void *arg)
{
	struct cpuset_move *m = arg;
	char c;

	while (read(m->go[0], &c, 1) == 1) {
		c = !cgroup_attach(CPUSET_ONE);
		if (write(m->moved[1], &c, 1) != 1)
			break;
	}
	return NULL;
}

/* What the traces show after the moves. */
struct cpuset_seen {
	int	forks;		/* helpers forked in the window */
	int	ended;		/* the job's helpers that ended */
	int	outside;	/* of those, on a CPU other than 0 */
};

static bool trace_has(const char *line, const char *event, const char *what)
{
	return strstr(line, event) && strstr(line, what);
}

/*
 * Add what the trace of one try shows after the move's attach event to
 * @s.  A helper forked there by a job whose start event came before it
 * is in the window a stale copy of the CPUs is taken in, as forks wait
 * for the move and the job copies its caller's CPUs before that event;
 * helpers forked before the attach are moved with the process.
 */
static void cpuset_trace(struct cpuset_seen *s)
{
	bool started = false, moved = false, stale = false;
	char line[512], *cpu;
	FILE *f = fopen(TRACE "trace", "r");

	while (f && fgets(line, sizeof(line), f)) {
		started |= trace_has(line, "ktask_job_start:",
				     BENCH_CPU_FUNC);
		if (trace_has(line, "cgroup_attach_task:", "ktask-cpuset-one")) {
			stale = started;
			moved = true;
		}
		if (!moved)
			continue;
		s->forks += stale && trace_has(line, "task_newtask:",
					       "comm=ktask ");
		cpu = strchr(line, '[');
		if (!trace_has(line, "ktask_helper_end:",
			       BENCH_CPU_FUNC) || !cpu)
			continue;
		s->ended++;
		s->outside += atoi(cpu + 1) != 0;
	}
	if (f)
		fclose(f);
}

static const char *const cpuset_names[] = { "cpuset_bound_moved", NULL };

static void cpuset_child(int vcpus)
{
	struct cpuset_seen s = { 0 };
	struct cpuset_move m;
	struct bench_result res;
	int i, err = 0;
	long long wall_ns = 0;
	pthread_t mover;
	char c;

	if (cgroup_attach(CPUSET_WIDE) || pipe(m.go) ||
	    pipe(m.moved) || write_str(CPU_UNITS, CPUSET_UNITS) ||
	    pthread_create(&mover, NULL, cpuset_mover, &m)) {
		report_setup_failed(cpuset_names, "join %s, pipes, %s or mover: %s",
				    CPUSET_WIDE, CPU_UNITS, strerror(errno));
		return;
	}
	/*
	 * The events of all CPUs in the order they happened: the counter
	 * clock is one atomic count.  The global clock is each CPU's TSC
	 * kept from going back, and the guest's TSCs are not in step under
	 * TCG ("TSCs unsynchronized" at boot): a helper's last event on
	 * CPU 1 just before the move could sort after the move's.
	 */
	write_str(TRACE_CLOCK, "counter\n");
	write_str(HELPER_END, "1\n");
	write_str(NEWTASK, "1\n");
	write_str(JOB_START, "1\n");
	write_str(ATTACH, "1\n");
	for (i = 0; i < CPUSET_TRIES && s.forks < CPUSET_FORKS && !err; i++) {
		trace_clear();
		c = 1;
		if (write(m.go[1], &c, 1) != 1 ||
		    usleep(rand() % CPUSET_LEAD_US) ||
		    (err = -bench_run("cpu", vcpus, &res)) ||
		    read(m.moved[0], &c, 1) != 1 || !c) {
			err = err ?: errno ?: EIO;
			break;
		}
		wall_ns += res.wall_ns;
		cpuset_trace(&s);
		if (cgroup_attach(CPUSET_WIDE))
			err = errno;
	}
	write_str(HELPER_END, "0\n");
	write_str(NEWTASK, "0\n");
	write_str(JOB_START, "0\n");
	write_str(ATTACH, "0\n");
	write_str(TRACE_CLOCK, "global\n");	/* the boot's (scripts/run.sh) */
	close(m.go[1]);
	pthread_join(mover, NULL);
	if (err) {
		report(0, cpuset_names[0], "try %d: %s", i + 1, strerror(err));
		return;
	}
	report(!s.outside && s.ended && s.forks, cpuset_names[0],
	       "%d jobs of %lld ms on average, moved from CPUs 0-%d to CPU 0 around their start: %d helpers forked after a move by jobs started before it, %d helpers ended after a move, %d of them outside CPU 0",
	       i, wall_ns / i / 1000000, vcpus - 1,
	       s.forks, s.ended, s.outside);
}

/* Both cpusets, or why not. */
static int cpuset_make(int vcpus)
{
	char wide[16];
	int err;

	snprintf(wide, sizeof(wide), "0-%d\n", vcpus - 1);
	err = cgroup_make("cpuset", CPUSET_WIDE);
	if (!err)
		err = cgroup_make("cpuset", CPUSET_ONE);
	if (!err && (write_str(CPUSET_WIDE "/cpuset.cpus", wide) ||
		     write_str(CPUSET_ONE "/cpuset.cpus", "0\n")))
		err = -errno;
	return err;
}

static void cpuset_bound(int vcpus)
{
	char units[32] = "";
	int err;

	if (vcpus < 2) {
		report_skip(cpuset_names[0], "%d vCPU: no helper", vcpus);
		return;
	}
	err = cpuset_make(vcpus);
	if (err) {
		report_setup_failed(cpuset_names, "cpusets: %s", strerror(-err));
		return;
	}
	read_line(CPU_UNITS, units, sizeof(units));
	in_child(cpuset_child, vcpus, cpuset_names);
	if (units[0])
		write_str(CPU_UNITS, units);
	rmdir(CPUSET_WIDE);
	rmdir(CPUSET_ONE);
}

/*
 * A process alone in a cgroup at pids.max 1, where no helper can be
 * forked, runs the self-benchmark's cpu job on every vCPU, whose caller
 * forks its first helper and each helper two more: one fork must be
 * tried, not the failed helper's children as well (pids_max_one_fork).
 * At pids.max 2 the first helper's first fork fails: its second must not
 * be tried either (pids_max_second_fork).  pids.events counts every fork
 * refused; each job must end as on one thread, with the 1-thread job's
 * sum.  A fallocate() of PIDS_LEN of 2 MiB pages at pids.max 1, a job
 * with a start function, whose caller forks every helper before it (one
 * here: the job is bound to the caller's node, of two vCPUs), must
 * allocate every page on the caller alone (pids_max_falloc).
 */
#define PIDS_CG		CGROOT "/ktask-pids"
#define PIDS_LEN	(512UL << 20)	/* 4 chunks of 2 MiB pages */
#define PIDS_REFUSED	PIDS_CG "/pids.events", "max", ' '

static const char *const pids_names[] = {
	"pids_max_one_fork", "pids_max_second_fork", "pids_max_falloc", NULL,
};

/* The cpu job at pids.max @max, where @used threads can run. */
static void pids_bench(int vcpus, const char *max, int used,
		       const char *name)
{
	struct bench_result serial, res;
	long long refused = -1;
	int err, planned;

	err = -write_str(PIDS_CG "/pids.max", max);
	err = err ?: -bench_run("cpu", 1, &serial);
	refused = read_key(PIDS_REFUSED);
	trace_start_planned();
	err = err ?: -bench_run("cpu", vcpus, &res);
	refused = read_key(PIDS_REFUSED) - refused;
	planned = trace_planned(BENCH_CPU_FUNC);
	trace_threads(BENCH_CPU_FUNC);	/* to stop the trace */
	report(!err && planned >= 4 && refused == 1 && res.used == used &&
	       res.sum == serial.sum, name,
	       "pids.max %.1s: %s; %d threads planned, %d ran a chunk (want %d), sum %s the 1-thread job's; forks refused %lld (want 1)",
	       max, strerror(err), planned, err ? -1 : res.used, used,
	       !err && res.sum == serial.sum ? "is" : "is not", refused);
}

static void pids_falloc(void)
{
	long long refused = read_key(PIDS_REFUSED);
	int fd, err, planned, used;
	struct stat st = { 0 };
	char path[64];

	snprintf(path, sizeof(path), "%s/pids", huge_mount(SZ_2M));
	fd = open(path, O_CREAT | O_TRUNC | O_RDWR, 0600);
	trace_start_planned();
	err = fd < 0 ? errno : -write_str(PIDS_CG "/pids.max", "1\n");
	err = err ?: fallocate(fd, 0, 0, PIDS_LEN) ? errno : 0;
	refused = read_key(PIDS_REFUSED) - refused;
	planned = trace_planned(FALLOC_FUNC);
	used = trace_threads(FALLOC_FUNC);
	if (fd >= 0)
		fstat(fd, &st);
	close(fd);
	unlink(path);
	report(!err && planned >= 2 && refused == 1 && used == 1 &&
	       st.st_blocks * 512 == (long long)PIDS_LEN, pids_names[2],
	       "fallocate(): %s, %lld MiB; %d threads planned, %d ran a chunk; forks refused %lld (want 1)",
	       strerror(err), (long long)st.st_blocks * 512 >> 20, planned,
	       used, refused);
}

static void pids_child(int vcpus)
{
	int err = cgroup_enter("pids", PIDS_CG);

	if (err) {
		report_setup_failed(pids_names, "cgroup %s: %s", PIDS_CG,
				    strerror(-err));
		return;
	}
	pids_bench(vcpus, "1\n", 1, pids_names[0]);
	pids_bench(vcpus, "2\n", 2, pids_names[1]);
	pids_falloc();
}

static void pids_bound(int vcpus)
{
	const char *const *name;

	if (vcpus < 4) {
		for (name = pids_names; *name; name++)
			report_skip(*name, "%d vCPUs: fewer than 3 helpers",
				    vcpus);
		return;
	}
	in_child(pids_child, vcpus, pids_names);
	rmdir(PIDS_CG);
}

void run_guarantee_tests(const struct boot *b)
{
	ktap_plan(ARRAY_SIZE(left_names) - 1 + ARRAY_SIZE(bound_names) - 1 +
		  ARRAY_SIZE(cpuset_names) - 1 + ARRAY_SIZE(pids_names) - 1);
	ktask_threads_set(0);
	in_child(left_behind_child, b->vcpus, left_names);
	rmdir(LEFT_CG);
	in_child(bound_child, 0, bound_names);
	rmdir(BOUND_CG);
	cpuset_bound(b->vcpus);
	pids_bound(b->vcpus);
}
