#!/usr/bin/env python3
"""Print the ktask benchmark tables from guest console logs (make run).

Reads the "ktask-run:" lines that scripts/boot.sh writes first (the host
and QEMU side, and which kernel booted) and last (what else the host ran)
in each log, the "ktask-bench:" lines
that guest/init.c prints, and shows one table per job; then the start-up
table of the "ktask-startup:" lines (guest/startup.c,
scripts/report_startup.py); then the "ktask-contention:" lines of
guest/contention.c, as one table per load with the targets of the
busy-system issue; then the "ktask-mm:" lines of
guest/mm_bench.c (fallocate, 1 GiB first touch, VFIO map, memset) of the
patched and unpatched kernels side by side, the same callers on a busy
machine (guest/busy_bench.c, scripts/report_busy.py), and the deferred
init times ("ktask-klog:") of the deferred init boots; last a model of
the callers at 16 to 288 threads from the costs measured
(scripts/project.py).  It reports and
never judges: the exit status is non-zero only when the first log holds no
result at all, and then the end of its console is printed so the reason
(panic, missing debugfs file, timeout) is visible.  The tables also go to
build/report/report.md, and every measurement, one row each with the
machine in '#' lines first, to build/report/results.csv; scripts/plot.py
then draws the speedups from it (build/report/speedup-*.png).

The stages: scripts/results.py parses the logs and writes results.csv;
this file renders the results as the tables (printed, and report.md), with
the medians, spreads and ratios of scripts/stats.py, which plot.py shares.

usage: report.py [CONSOLE_LOG [MORE_LOGS...]]   (default build/run/console.log)
"""

import os
import subprocess
import sys

from project import TITLE as PROJECTION_TITLE, projection_rows
from report_busy import TITLE as BUSY_TITLE, busy_rows
from report_startup import TITLE as STARTUP_TITLE, startup_rows
from results import collect, deferred_boot, host_cpu_model, read_log, write_csv
from stats import by_threads, median, median_of, rate, ratio, spread, unique


def header(machine):
	mem_kb = machine.get('mem_kb')
	mem = f'{int(mem_kb) / 1048576:.1f} GiB' if mem_kb and mem_kb.isdigit() else '?'
	host = machine.get('host_cpu', host_cpu_model()).replace('_', ' ')
	return (f'host: {host}, {machine.get("host_cpus", "?")} CPUs; '
		f'guest: {machine.get("vcpus", "?")} vCPUs, {mem}, '
		f'{machine.get("nodes", "?")} nodes, '
		f'accel {machine.get("accel", "?")}, '
		f'kernel {machine.get("kernel", "?")}')


def table(rows):
	widths = [max(len(row[i]) for row in rows) for i in range(len(rows[0]))]
	return ['  ' + ' | '.join(cell.rjust(w) for cell, w in zip(row, widths))
		for row in rows]


def job_table(job, runs):
	"""Lines of the table for one job; runs are its result dicts."""
	threads_runs = by_threads(runs)
	serial = threads_runs.get(1, [])
	serial_wall = [int(r['wall_ns']) for r in serial]
	# The job's aggregate CPU time (all threads, setup included) when the
	# kernel reports it, else the time spent in thread functions.
	cpu_key = 'job_cpu_ns' if all(int(r.get('job_cpu_ns', 0)) for r in runs) else 'cpu_ns'
	serial_cpu = [int(r[cpu_key]) for r in serial if cpu_key in r]
	rows = [('threads', 'runs', 'wall ms median (min-max)', 'speedup',
		 'cpu / serial cpu', 'used')]
	for threads in sorted(threads_runs):
		group = threads_runs[threads]
		wall = [int(r['wall_ns']) for r in group]
		cpu = [int(r[cpu_key]) for r in group if cpu_key in r]
		rows.append((str(threads), str(len(group)), spread(wall, 1e6),
			     ratio(serial_wall, wall), ratio(cpu, serial_cpu),
			     ','.join(sorted({r.get('used', '?') for r in group}))))
	units = sorted({r.get('units', '?') for r in runs})
	return [f'job {job} (units={",".join(units)}; speedup = median serial wall'
		' / median wall)'] + table(rows)


def contention_tables(runs):
	"""The contention table: per load, the job at 1 and N threads."""
	serial_idle = [r for r in runs if r['load'] == 'idle' and r['threads'] == '1']
	serial_cpu = median_of(serial_idle, 'job_cpu_ns')
	out = ['contention: the cpu job beside CPU hogs (one per vCPU loaded, nice 0);',
	       '  hog kept = hog throughput during the job / just before it;',
	       '  cpu / serial = job CPU time (all threads) / idle 1-thread job\'s']
	summary = {}
	for load in unique(r['load'] for r in runs):
		group = [r for r in runs if r['load'] == load]
		one = [r for r in group if r['threads'] == '1']
		one_wall = median_of(one, 'wall_ns')
		rows = [('threads', 'lending', 'runs', 'wall ms median (min-max)',
			 'vs 1 thread', 'hog kept', 'cpu / serial', 'used')]
		for threads, lending in unique((int(r['threads']), r['lending']) for r in group):
			sel = [r for r in group if int(r['threads']) == threads and
			       r['lending'] == lending]
			wall = [int(r['wall_ns']) for r in sel]
			kept = [float(r['hog_during']) / float(r['hog_base'])
				for r in sel if float(r.get('hog_base', 0)) > 0]
			cpu = median_of(sel, 'job_cpu_ns')
			rows.append((str(threads), lending if threads > 1 else '-',
				     str(len(sel)), spread(wall, 1e6),
				     f'{median(wall) / one_wall:.2f}' if one_wall else '-',
				     f'{median(kept) * 100:.0f}%' if kept else '-',
				     f'{cpu / serial_cpu:.2f}' if cpu and serial_cpu else '-',
				     ','.join(sorted({r.get('used', '?') for r in sel}))))
			summary[(load, threads, lending)] = (
				median(wall), median(kept),
				cpu / serial_cpu if cpu and serial_cpu else None)
		out.append(f'load {load} ({group[0].get("hogs", "?")} hogs)')
		out.extend(table(rows))
	return out + contention_targets(summary)


def contention_targets(summary):
	"""The issue's targets, as measured: reported, never asserted."""
	out = ['targets (reported, not asserted):']
	nthreads = max((t for (_, t, _) in summary), default=1)
	full_one = summary.get(('full', 1, 'on'))
	full_n = summary.get(('full', nthreads, 'on'))
	if full_one and full_n and nthreads > 1:
		ratio = full_n[0] / full_one[0]
		out.append(f'  full load: {nthreads}-thread wall / 1-thread wall = '
			   f'{ratio:.2f} (target <= 1.00: {"met" if ratio <= 1.0 else "missed"})')
		if full_one[1] is not None and full_n[1] is not None:
			lost_one, lost_n = 1 - full_one[1], 1 - full_n[1]
			met = lost_n <= lost_one + 0.05
			out.append(f'  full load: hog throughput lost to the {nthreads}-thread job '
				   f'{lost_n * 100:.0f}%, to the 1-thread job {lost_one * 100:.0f}% '
				   f'(target <= +5 points: {"met" if met else "missed"})')
	idle_n = summary.get(('idle', nthreads, 'on'))
	if idle_n and idle_n[2] is not None and nthreads > 1:
		out.append(f'  idle: {nthreads}-thread job CPU / serial job CPU = {idle_n[2]:.2f} '
			   f'(target <= 1.10: {"met" if idle_n[2] <= 1.10 else "missed"})')
	return out


MM_BENCHES = (
	('falloc', 'hugetlbfs fallocate() of the 2 MiB pool'),
	('touch_1g', 'first touch of a 1 GiB page (zeroed in the fault)'),
	('vfio_map', 'VFIO_IOMMU_MAP_DMA of fresh anonymous memory (faulted in and pinned)'),
	('vfio_map_warm', 'VFIO_IOMMU_MAP_DMA of memory faulted in before (pinned only)'),
	('memmap', 'the pmem driver bound to the boot\'s persistent memory (memremap_pages(): its struct pages)'),
	('thp_move', 'move_pages(2) of 512 MiB of THPs from node 0 to node 1 (their copy)'),
	('huge_move', 'move_pages(2) of a 1 GiB hugetlb page from node 0 to node 1 (its copy)'),
	('memset', 'memset() of faulted memory by as many threads: the ceiling'),
)
# Benchmarks that write memory, which the memset rate bounds.
MM_WRITERS = ('falloc', 'touch_1g')


def mem_threads(ceiling):
	"""What ktask.mem_threads should be, from the patched kernel's memset
	rates by thread count: the fewest threads whose median reaches 90% of
	the best median; 0 with no memset runs."""
	rates = {int(t): median(v) for (label, t), v in ceiling.items() if label == 'patched'}
	if not rates:
		return 0, 0
	best = max(rates.values())
	return min(t for t, r in rates.items() if r >= 0.9 * best), max(rates)


def job_times(runs):
	"""The ktask job's wall times (ns) of runs that give one (job_ns,
	-1 on the unpatched kernel)."""
	return [int(r['job_ns']) for r in runs if int(r.get('job_ns', -1)) > 0]


def mm_tables(runs):
	"""fallocate, 1 GiB touch, VFIO map, pmem bind and memset, patched and
	unpatched side by side."""
	out = ['mm callers (speedup = median rate / median serial rate; vs unpatched ='
	       ' median rate / unpatched median rate;',
	       '  of ceiling = rate / memset rate at as many threads)']
	ceiling = {}
	for run in runs:
		if run['bench'] == 'memset':
			ceiling.setdefault((run['label'], run['threads']), []).append(rate(run))
	summary = {}
	job_speedup = {}
	for bench, title in MM_BENCHES:
		group = [r for r in runs if r['bench'] == bench]
		if not group:
			continue
		# Rates, not times: memset writes more with more threads.
		serial = [rate(r) for r in group
			  if r['label'] == 'patched' and r['threads'] == '1']
		unpatched = [rate(r) for r in group if r['label'] == 'unpatched']
		sizes = sorted({int(r['bytes']) for r in group})
		# The ktask job's own time, where the call does more (the pmem
		# bind): its speedup is over the patched 1-thread job's.
		serial_job = job_times([r for r in group if r['label'] == 'patched'
					and r['threads'] == '1'])
		rows = [('kernel', 'threads', 'runs', 'wall ms median (min-max)',
			 'GB/s', 'of ceiling', 'speedup', 'vs unpatched', 'used')
			+ (('job ms median (min-max)', 'job speedup') if serial_job else ())]
		configs = unique((r['label'], int(r['threads'])) for r in group)
		for label, threads in sorted(configs, key=lambda k: (k[0] != 'unpatched', k[1])):
			sel = [r for r in group if r['label'] == label and int(r['threads']) == threads]
			wall = [int(r['wall_ns']) for r in sel]
			rates = [rate(r) for r in sel]
			top = ceiling.get((label, str(threads)))
			of_top = median(rates) / median(top) if top else None
			jobs = job_times(sel)
			rows.append((label, str(threads), str(len(sel)), spread(wall, 1e6),
				     f'{median(rates):.2f}',
				     f'{of_top * 100:.0f}%' if of_top and bench in MM_WRITERS else '-',
				     ratio(rates, serial), ratio(rates, unpatched),
				     ','.join(sorted({r.get('used', '?') for r in sel})))
				    + ((spread(jobs, 1e6) if jobs else '-', ratio(serial_job, jobs))
				       if serial_job else ()))
			summary[(bench, label, threads)] = of_top
			if jobs and threads == 2:
				job_speedup[bench] = median(serial_job) / median(jobs)
		out.append(f'{bench}: {title}, {sizes[-1] / 2**30:.2f} GiB per run')
		out.extend(table(rows))
	if not summary:
		out = []		# MODE=busy: its table alone
	targets = []
	for bench in MM_WRITERS:
		top = max((t for (b, l, t) in summary if b == bench and l == 'patched'), default=0)
		of_top = summary.get((bench, 'patched', top))
		if top > 1 and of_top:
			targets.append(f'  {bench} at {top} threads: {of_top * 100:.0f}% of the memset rate '
				       f'(target >= 90%: {"met" if of_top >= 0.9 else "missed"})')
	for bench, speedup in job_speedup.items():
		targets.append(f'  {bench} job at 2 threads: {speedup:.2f} times the 1-thread job\'s '
			       f'speed (target >= 1.8: {"met" if speedup >= 1.8 else "missed"})')
	knee, most = mem_threads(ceiling)
	if most > 1:
		targets.append(f'  ktask.mem_threads for this guest: {knee} (of the thread counts run, the '
			       f'fewest whose memset reaches 90% of the best rate, up to {most})')
	if targets:
		out += ['targets (reported, not asserted):'] + targets
	rows, targets = busy_rows(runs)
	if rows:
		out += [''] * bool(out) + BUSY_TITLE + table(rows)
		out += ['targets (reported, not asserted):'] + targets
	return out


def deferred_table(boots):
	"""Deferred init per boot (its slowest node), by kernel, topology and
	thread limit, against the unpatched kernel on the same topology."""
	rows = [('boot', 'vCPUs', 'SMT', 'threads', 'boots', 'ms median (min-max)',
		 'vs unpatched', 'used')]
	by_label = {}
	for machine, times in boots:
		if deferred_boot(machine.get('label', '?')):
			by_label.setdefault(machine['label'], []).append((machine, max(times)))
	base = {}
	for label, group in by_label.items():
		patched, vcpus, smt, _ = deferred_boot(label)
		if not patched:
			base[(vcpus, smt)] = [ms for _, ms in group]
	out = ['deferred struct page init at boot (one node; per boot, the slowest '
	       'node; vs unpatched = unpatched median / median, same vCPUs and SMT; '
	       'threads: both kernels use one per vCPU unless ktask.max_threads limits it)']
	summary = []
	for label in sorted(by_label, key=lambda l: deferred_boot(l)[1:3] + (l,)):
		group = by_label[label]
		patched, vcpus, smt, knob = deferred_boot(label)
		ms = [t for _, t in group]
		threads = str(knob) if knob else 'per vCPU'
		used = sorted({m.get('deferred_threads', '-') for m, _ in group})
		unpatched = base.get((vcpus, smt))
		rows.append((label, str(vcpus), str(smt), threads, str(len(ms)), spread(ms, 1),
			     ratio(unpatched, ms) if patched else '-', ','.join(used)))
		if unpatched and patched and not knob:
			summary.append((f'{vcpus} vCPU(s), {smt} per core, ktask vs padata',
					median(ms) / median(unpatched)))
		serial = base.get((1, 1))
		if serial and patched and knob == 1:
			summary.append((f'{vcpus} vCPU(s), ktask.max_threads=1 vs the serial '
					'baseline (unpatched, 1 vCPU)', median(ms) / median(serial)))
	out.extend(table(rows))
	if summary:
		out.append('targets (reported, not asserted):')
	for what, rel in summary:
		out.append(f'  {what}: {rel:.2f} of its time '
			   f'(target <= 1.00: {"met" if rel <= 1.0 else "missed"})')
	return out


def tables(logs):
	"""The report's lines: the first log's machine and tables, then the
	mm and deferred init tables of all the logs."""
	_, _, machine, results, _ = logs[0]
	out = [header(machine)]
	bench = [r for r in results if r['kind'] == 'bench']
	for job in unique(r['job'] for r in bench):
		out += [''] + job_table(job, [r for r in bench if r['job'] == job])
	rows, targets = startup_rows([r for r in results if r['kind'] == 'startup'])
	if rows:
		out += [''] + STARTUP_TITLE + table(rows) + ['targets (reported, not asserted):'] + targets
	contention = [r for r in results if r['kind'] == 'contention']
	if contention:
		out += [''] + contention_tables(contention)
	mm, boots, errors = collect(logs)
	if mm:
		out += [''] + mm_tables(mm)
	if boots:
		out += [''] + deferred_table(boots)
	out += projection(results, mm, boots)
	return out + [f'guest: {err}' for err in errors]


def projection(results, mm, boots):
	"""The projection's lines (scripts/project.py), from the start-up runs,
	the mm runs and the unpatched 1-vCPU deferred init boots."""
	deferred = [(max(times), int(m['mem_kb']) * 1024) for m, times in boots
		    if deferred_boot(m.get('label', '?')) == (False, 1, 1, None)
		    and m.get('mem_kb', '').isdigit()]
	rows, costs = projection_rows([r for r in results if r['kind'] == 'startup'],
				      mm, deferred)
	return [''] + PROJECTION_TITLE + table(rows) + costs if rows else []


def write_report(out_dir, text):
	"""build/report/report.md: the tables, as printed; returns its path."""
	os.makedirs(out_dir, exist_ok=True)
	md = os.path.join(out_dir, 'report.md')
	with open(md, 'w', encoding='utf-8') as f:
		f.write('# ktask: make run\n\n```\n' + text + '```\n')
	return md


def main():
	top = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
	# The first log gives the header: a path given twice is read once.
	paths = list(dict.fromkeys(sys.argv[1:])) or [os.path.join(top, 'build/run/console.log')]
	logs = []
	for path in paths:
		try:
			logs.append((path,) + read_log(path))
		except OSError as e:
			print(f'error: cannot read {path}: {e.strerror}; run "make run" first',
			      file=sys.stderr)
			return 1
	text = '\n'.join(tables(logs)) + '\n'
	print(text, end='')
	path, lines, _, results, _ = logs[0]
	if not results:
		print(f'error: no results in {path}; its last 30 lines:',
		      file=sys.stderr)
		for line in lines[-30:]:
			print(f'  | {line}', file=sys.stderr)
		return 1
	out_dir = os.path.join(top, 'build/report')
	md, csv_path = write_report(out_dir, text), write_csv(out_dir, logs)
	print(f'\nwritten: {os.path.relpath(md)}, {os.path.relpath(csv_path)}')
	# The speedup plots (PNG, next to results.csv) from what was written.
	subprocess.run([sys.executable, os.path.join(top, 'scripts/plot.py'), csv_path],
		       check=False)
	return 0


if __name__ == '__main__':
	sys.exit(main())
