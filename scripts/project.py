"""The projection table of scripts/report.py: a model, not a measurement,
of the efficiency a real caller's job would have at 16, 64 and 288
threads, from what this run measured, under TCG here.

Measured (medians of the run, a process's first and repeated jobs
together):
  - what starting a helper costs its starter and when the helper then
    runs its first chunk, for a user caller (a fork) and a kernel caller
    (queueing a worker): the start-up table's runs at 1 and 2 threads
    in which the helper ran a chunk.  The difference between 2 threads
    and 1 also holds a job's one-off setup, which the serial path skips,
    so it is an upper bound on a start;
  - what a chunk costs beyond its work: the tiny job through ktask_run()
    less a direct call of its thread function (ktask_run()'s checks and
    serial path, the closest figure measured to handing out a chunk);
  - each caller's serial time per GiB: the mm table's patched 1-thread
    runs, and the deferred init boots of the unpatched kernel on 1 vCPU
    over the guest's MemTotal (more than is deferred: the low zones are
    not, so this deferred init is some 10% too fast).

Modelled, as kernel/ktask.c does it: the threads a job plans (no more
than its 128 MiB minimum chunks, KTASK_MEM_CHUNK, for 2 MiB pages and
blocks, and x86's sections), its chunk size (a quarter of a thread's
share, in whole minimum chunks), the order helpers start in (the caller
starts one, or all of them for a job with a start function, and helper
i starts helpers 2i+1 and 2i+2 before its own first chunk), and each
thread taking the next chunk as soon as it is free.

Not modelled: memory bandwidth (every caller here writes memory, and
ktask.mem_threads caps fallocate() far below 288 threads on real
machines); the helper caps and core counting (80% of the usable units,
cores for fallocate() and the map: a 288-CPU machine of 2 SMT threads
per core gives those at most 116 threads today) and the default limit
of 4 threads a job that sets none has, so each column is a job as if it
were allowed that many; fallocate()'s start function, the waking of its
helpers and the creation of missing workers at boot; load, NUMA
distance, and how much faster than TCG real hardware forks, queues and
writes memory.  Efficiency = serial time / (threads planned * modelled
time).
"""

import heapq

from stats import median

THREADS = (16, 64, 288)
MIB = 1 << 20
GIB = 1 << 30
# include/linux/ktask.h: KTASK_MEM_CHUNK, every mm caller's minimum chunk
# (fallocate()'s 64 pages of 2 MiB, the VFIO map's blocks, deferred
# init's sections).
MEM_CHUNK = 128 * MIB
# kernel/ktask.c: KTASK_LOAD_BAL_SHIFT, about 4 chunks per thread.
LOAD_BAL_SHIFT = 2

# caller, the mm table's benchmark (None: deferred init), who starts its
# helpers, whether its job has a start function, and the sizes modelled.
CALLERS = (
	('falloc', 'falloc', 'user', True, (1 * GIB, 64 * GIB)),
	('vfio_map', 'vfio_map', 'user', False, (1 * GIB, 64 * GIB)),
	('deferred init', None, 'kernel', False, (16 * GIB, 1024 * GIB)),
)

TITLE = ['projection: a model, not a measurement, of each caller\'s efficiency at',
	 '  16, 64 and 288 threads (serial time / (threads planned * modelled time);',
	 '  a job plans no more threads than it has 128 MiB chunks), from this',
	 '  run\'s start, chunk and serial costs under TCG; memory bandwidth, load,',
	 '  the helper caps and the default thread limit are left out',
	 '  (scripts/project.py)']


def plan(size, threads):
	"""(threads, chunk bytes, chunks) of a job of size bytes that may
	have threads threads: ktask_nr_threads() and ktask_chunk_size()."""
	units = max(-(-size // MEM_CHUNK), 1)
	threads = max(min(threads, units), 1)
	chunk = max((units // threads) >> LOAD_BAL_SHIFT, 1)
	return threads, chunk * MEM_CHUNK, -(-units // chunk)


def start_times(threads, start_ns, run_ns, start_func):
	"""When each thread, the caller first, begins its first chunk: the
	caller starts one helper (all, with a start function, which helpers
	wait for), each helper first starts its own (ktask_first_child(),
	ktask_end_child()), and a helper runs run_ns after its starter is
	done with it."""
	helpers = threads - 1
	by_caller = helpers if start_func else min(helpers, 1)
	started = [(i + 1) * start_ns for i in range(by_caller)] + [None] * (helpers - by_caller)
	begin = [by_caller * start_ns]
	for i in range(helpers):
		runs = started[i] + run_ns
		children = range(max(2 * i + 1, by_caller), min(2 * i + 3, helpers))
		for k, child in enumerate(children):
			started[child] = runs + (k + 1) * start_ns
		begin.append(max(runs + len(children) * start_ns,
				 begin[0] if start_func else 0))
	return begin


def modelled_ns(chunks, chunk_ns, begin):
	"""The job's time: each thread takes the next chunk once free."""
	free = list(begin)
	heapq.heapify(free)
	end = 0
	for _ in range(chunks):
		t = heapq.heappop(free) + chunk_ns
		end = max(end, t)
		heapq.heappush(free, t)
	return end


def efficiency(size, threads, per_gib_ns, costs, start_func):
	"""(threads planned, efficiency) of a job of size bytes."""
	start_ns, run_ns, chunk_cost_ns = costs
	threads, chunk, chunks = plan(size, threads)
	serial = size / GIB * per_gib_ns
	chunk_ns = chunk / GIB * per_gib_ns + chunk_cost_ns
	begin = start_times(threads, start_ns, run_ns, start_func)
	return threads, serial / (threads * modelled_ns(chunks, chunk_ns, begin))


def start_costs(startup):
	"""{caller: (start_ns, run_ns, chunk_cost_ns)} from the start-up runs
	(results.py's dicts): the starter's time per helper, a new helper's
	delay to its first chunk, and the tiny job's overhead.  At 2 threads,
	only the runs whose helper ran a chunk."""
	costs = {}
	for caller in ('user', 'kernel'):
		def runs(threads):
			return [r for r in startup if r['run'] in ('first', 'repeat') and
				r['caller'] == caller and int(r['threads']) == threads and
				(threads == 1 or int(r['helper_first_ns']))]
		one = median([int(r['caller_first_ns']) for r in runs(1)])
		two = median([int(r['caller_first_ns']) for r in runs(2)])
		helper = median([int(r['helper_first_ns']) for r in runs(2)])
		tiny = median([int(r['wall_ns']) - int(r['direct_ns']) for r in startup
			       if r['run'] == 'tiny' and r['caller'] == caller])
		if None not in (one, two, helper, tiny):
			costs[caller] = (max(two - one, 0), max(helper - two, 0), max(tiny, 0))
	return costs


def serial_per_gib(mm, deferred):
	"""{bench: serial ns per GiB}: the mm runs of the patched kernel at 1
	thread, and deferred init, the (ms, bytes) of unpatched 1-vCPU boots."""
	out = {}
	for bench in {c[1] for c in CALLERS if c[1]}:
		sel = [int(r['wall_ns']) / int(r['bytes']) * GIB for r in mm
		       if r['bench'] == bench and r['label'] == 'patched' and r['threads'] == '1']
		if sel:
			out[bench] = median(sel)
	deferred = [(ms, size) for ms, size in deferred if size]
	if deferred:
		out[None] = median([ms * 1e6 / size * GIB for ms, size in deferred])
	return out


def projection_rows(startup, mm, deferred):
	"""The table's rows (a header first) and its cost lines; none without
	both the start-up runs and a caller's serial time."""
	costs = start_costs(startup)
	per_gib = serial_per_gib(mm, deferred)
	rows = [('caller', 'GiB', 'helpers') + tuple(f'{n} threads' for n in THREADS)]
	for name, bench, kind, start_func, sizes in CALLERS:
		if kind not in costs or bench not in per_gib:
			continue
		for size in sizes:
			cells = []
			for n in THREADS:
				used, eff = efficiency(size, n, per_gib[bench], costs[kind], start_func)
				cells.append(f'{eff:.2f}' + (f' ({used} planned)' if used < n else ''))
			rows.append((name, str(size // GIB), kind) + tuple(cells))
	if len(rows) == 1:
		return [], []
	lines = ['costs measured (medians):']
	for kind, (start_ns, run_ns, chunk_ns) in sorted(costs.items()):
		lines.append(f'  {kind} caller: at most {start_ns / 1e3:.0f} us to start a helper, '
			     f'{run_ns / 1e3:.0f} us more to its first chunk, '
			     f'{chunk_ns / 1e3:.1f} us per chunk')
	for name, bench, _, _, _ in CALLERS:
		if bench in per_gib:
			lines.append(f'  {name}: {per_gib[bench] / 1e6:.0f} ms per GiB serially')
	return rows, lines
