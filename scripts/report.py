#!/usr/bin/env python3
"""Print the ktask benchmark tables from a guest console log (make run).

Reads the "ktask-run:" line that scripts/run.sh writes first (the host and
QEMU side) and the "ktask-bench:" lines that guest/init.c prints, and shows
one table per job.  It reports and never judges: the exit status is non-zero
only when the log holds no result at all, and then the end of the console is
printed so the reason (panic, missing debugfs file, timeout) is visible.

usage: report.py [CONSOLE_LOG]    (default build/run/console.log)
"""

import os
import statistics
import sys

PREFIXES = ('ktask-run:', 'ktask-bench:')


def parse_fields(text):
	"""'a=1 b=x' -> {'a': '1', 'b': 'x'}; words without '=' are ignored."""
	fields = {}
	for word in text.split():
		key, sep, value = word.partition('=')
		if sep:
			fields[key] = value
	return fields


def read_log(path):
	"""Return (lines, machine fields, results, errors) of a console log."""
	with open(path, encoding='utf-8', errors='replace') as f:
		lines = [line.rstrip('\r\n').replace('\r', '') for line in f]
	machine, results, errors = {}, [], []
	for line in lines:
		for prefix in PREFIXES:
			# The kernel may print on the same line: find, not startswith.
			at = line.find(prefix)
			if at >= 0:
				break
		else:
			continue
		text = line[at + len(prefix):].strip()
		fields = parse_fields(text)
		if prefix == 'ktask-run:' or 'vcpus' in fields:
			machine.update(fields)
		elif text.startswith('error'):
			errors.append(text)
		elif 'job' in fields and 'wall_ns' in fields:
			results.append(fields)
	return lines, machine, results, errors


def host_cpu_model():
	try:
		with open('/proc/cpuinfo', encoding='utf-8') as f:
			for line in f:
				if line.startswith('model name'):
					return line.split(':', 1)[1].strip()
	except OSError:
		pass
	return 'unknown'


def header(machine):
	mem_kb = machine.get('mem_kb')
	mem = f'{int(mem_kb) / 1048576:.1f} GiB' if mem_kb and mem_kb.isdigit() else '?'
	host = machine.get('host_cpu', host_cpu_model()).replace('_', ' ')
	return (f'host: {host}, {machine.get("host_cpus", "?")} CPUs; '
		f'guest: {machine.get("vcpus", "?")} vCPUs, {mem}, '
		f'{machine.get("nodes", "?")} nodes, '
		f'accel {machine.get("accel", "?")}, '
		f'kernel {machine.get("kernel", "?")}')


def spread(values, scale):
	"""'median (min-max)' of values divided by scale."""
	med = statistics.median(values) / scale
	return f'{med:.1f} ({min(values) / scale:.1f}-{max(values) / scale:.1f})'


def ratio(num, den):
	if not num or not den:
		return '-'
	return f'{statistics.median(num) / statistics.median(den):.2f}'


def job_table(job, runs):
	"""Lines of the table for one job; runs are its result dicts."""
	by_threads = {}
	for run in runs:
		by_threads.setdefault(int(run['threads']), []).append(run)
	serial = by_threads.get(1, [])
	serial_wall = [int(r['wall_ns']) for r in serial]
	serial_cpu = [int(r['cpu_ns']) for r in serial if 'cpu_ns' in r]
	rows = [('threads', 'runs', 'wall ms median (min-max)', 'speedup',
		 'cpu / serial cpu', 'used')]
	for threads in sorted(by_threads):
		group = by_threads[threads]
		wall = [int(r['wall_ns']) for r in group]
		cpu = [int(r['cpu_ns']) for r in group if 'cpu_ns' in r]
		used = sorted({r.get('used', '?') for r in group})
		rows.append((str(threads), str(len(group)), spread(wall, 1e6),
			     ratio(serial_wall, wall), ratio(cpu, serial_cpu),
			     ','.join(used)))
	widths = [max(len(row[i]) for row in rows) for i in range(len(rows[0]))]
	units = sorted({r.get('units', '?') for r in runs})
	out = [f'job {job} (units={",".join(units)}; speedup = median serial wall'
	       ' / median wall)']
	for row in rows:
		out.append('  ' + ' | '.join(cell.rjust(w) for cell, w in zip(row, widths)))
	return out


def main():
	top = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
	path = sys.argv[1] if len(sys.argv) > 1 else os.path.join(top, 'build/run/console.log')
	try:
		lines, machine, results, errors = read_log(path)
	except OSError as e:
		print(f'error: cannot read {path}: {e.strerror}; run "make run" first',
		      file=sys.stderr)
		return 1
	print(header(machine))
	jobs = []
	for run in results:
		if run['job'] not in jobs:
			jobs.append(run['job'])
	for job in jobs:
		print()
		print('\n'.join(job_table(job, [r for r in results if r['job'] == job])))
	for err in errors:
		print(f'guest: {err}')
	if results:
		return 0
	print(f'error: no ktask-bench results in {path}; its last 30 lines:', file=sys.stderr)
	for line in lines[-30:]:
		print(f'  | {line}', file=sys.stderr)
	return 1


if __name__ == '__main__':
	sys.exit(main())
