"""Console logs -> results: the parsing stage of scripts/report.py.

Reads the guest console logs of make run (build/run/*.log): the
"ktask-run:" lines that scripts/boot.sh writes first (the host and QEMU
side, and which kernel booted) and last (what else the host ran) in each
log, the "ktask-bench:" lines of
guest/init.c, the "ktask-startup:" lines of guest/startup.c, the
"ktask-contention:" lines of guest/contention.c, the "ktask-mm:" lines of
guest/hugetlb.c and guest/vfio.c and the deferred init times
("ktask-klog:") of guest/hugetlb.c; the guest's error lines are kept to be
shown.  Writes build/report/results.csv: every measurement, one row each,
with the machine in '#' lines first, which scripts/plot.py reads back (so
the CSV's columns and the boot labels are defined here).  Nothing is
judged here: scripts/report.py renders the results as tables.
"""

import csv
import io
import os
import re

PREFIXES = ('ktask-run:', 'ktask-bench:', 'ktask-startup:', 'ktask-contention:',
	    'ktask-mm:', 'ktask-klog:')
DEFERRED = re.compile(r'node (\d+) deferred pages initialised in (\d+)ms')


def parse_fields(text):
	"""'a=1 b=x' -> {'a': '1', 'b': 'x'}; words without '=' are ignored."""
	fields = {}
	for word in text.split():
		key, sep, value = word.partition('=')
		if sep:
			fields[key] = value
	return fields


def read_log(path):
	"""Return (lines, machine fields, results, errors) of a console log.

	Results are dicts of the key=value fields of each run, with 'kind'
	set to 'bench', 'startup', 'contention', 'mm' or 'deferred'.
	"""
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
		if prefix == 'ktask-klog:':
			deferred = DEFERRED.search(text)
			if deferred:
				results.append({'kind': 'deferred',
						'node': deferred.group(1),
						'ms': deferred.group(2)})
			elif 'deferred_init_threads' in fields:
				machine['deferred_threads'] = fields['deferred_init_threads']
		elif prefix == 'ktask-run:' or 'vcpus' in fields:
			machine.update(fields)
		elif prefix == 'ktask-mm:' and 'bench' in fields and 'wall_ns' in fields:
			fields['kind'] = 'mm'
			results.append(fields)
		elif text.startswith('error'):
			errors.append(f'{prefix} {text}')
		elif prefix == 'ktask-startup:' and 'run' in fields:
			fields['kind'] = 'startup'
			results.append(fields)
		elif prefix == 'ktask-contention:' and 'load' in fields:
			fields['kind'] = 'contention'
			results.append(fields)
		elif 'job' in fields and 'wall_ns' in fields:
			fields['kind'] = 'bench'
			results.append(fields)
	return lines, machine, results, errors


def host_cpu_model():
	"""This host's CPU, for a log without a ktask-run line to say it."""
	try:
		with open('/proc/cpuinfo', encoding='utf-8') as f:
			for line in f:
				if line.startswith('model name'):
					return line.split(':', 1)[1].strip()
	except OSError:
		pass
	return 'unknown'


DEFERRED_LABEL = re.compile(r'^(un)?patched-v(\d+)(?:-smt(\d+))?(?:-t(\d+))?$')


def deferred_boot(label):
	"""'patched-v4-smt2' -> (patched, vCPUs, SMT threads per core, knob);
	None for a label of another kind of boot."""
	m = DEFERRED_LABEL.match(label)
	if not m:
		return None
	return (not m.group(1), int(m.group(2)), int(m.group(3) or 1),
		int(m.group(4)) if m.group(4) else None)


# make run's mm boots: console-mm-ROUND.log (patched) and
# console-unpatched-ROUND.log (scripts/run.sh: mm_boot).
ROUND_LOG = re.compile(r'console-(?:mm|unpatched)-(\d+)\.log$')


def boot_round(path):
	"""(directory, round) of an mm boot's log, from its name, so that the
	boots of the two kernels in one round of one run pair up however many
	runs' logs are read together and whichever boot failed; None for a
	log of another name."""
	m = ROUND_LOG.search(os.path.basename(path))
	return (os.path.dirname(os.path.abspath(path)), int(m.group(1))) if m else None


def collect(logs):
	"""What the tables take from every log, not only the first: the mm runs
	(each labelled with its boot's kernel, and with the boot's number, its
	round (boot_round()) and what else the host ran meanwhile), the
	deferred init boots in one node as (machine, ms of each node), and the
	errors, the first log's first (its list grows), each once."""
	errors = logs[0][4]
	mm, boots = [], []
	for n, (path, _, log_machine, log_results, log_errors) in enumerate(logs):
		label = log_machine.get('label', 'patched')
		for run in log_results:
			if run['kind'] == 'mm':
				run['label'] = label
				run['boot'] = n
				run['round'] = boot_round(path)
				for key in ('host_other_cpu_ms', 'host_steal_ms', 'qemu_cpu_ms',
					    'qemu_sys_ms', 'boot_s'):
					run[key] = log_machine.get(key)
				mm.append(run)
		times = [int(r['ms']) for r in log_results if r['kind'] == 'deferred']
		if times and log_machine.get('qemu_nodes') == '1':
			boots.append((log_machine, times))
		errors += [e for e in log_errors if e not in errors]
	return mm, boots, errors


CSV_COLUMNS = ('log', 'label', 'kind', 'name', 'threads', 'lending', 'used',
	       'wall_ns', 'cpu_ns', 'job_cpu_ns', 'job_ns', 'bytes', 'units', 'node', 'ms',
	       'hogs', 'hog_base', 'hog_during')


def csv_rows(logs):
	"""One row per measurement of every log, in CSV_COLUMNS order."""
	for path, _, machine, results, _ in logs:
		for run in results:
			row = dict(run, log=os.path.basename(path),
				   label=machine.get('label', 'patched'),
				   name=run.get('job') or run.get('bench') or run.get('load') or
				   ('deferred_init' if run['kind'] == 'deferred' else ''))
			boot = deferred_boot(row['label']) if run['kind'] == 'deferred' else None
			if boot:
				row['threads'] = boot[3] or boot[1]
			yield [row.get(col, '') for col in CSV_COLUMNS]


def write_csv(out_dir, logs):
	"""build/report/results.csv: every run of the logs, the first log's
	machine in '#' lines first; returns its path."""
	os.makedirs(out_dir, exist_ok=True)
	path = os.path.join(out_dir, 'results.csv')
	machine = logs[0][2]
	buf = io.StringIO()
	for key in ('host_cpu', 'host_cpus', 'accel', 'qemu_vcpus', 'qemu_mem',
		    'qemu_nodes', 'kernel', 'mem_kb'):
		buf.write(f'# {key}={machine.get(key, "?")}\n')
	writer = csv.writer(buf)
	writer.writerow(CSV_COLUMNS)
	writer.writerows(csv_rows(logs))
	with open(path, 'w', encoding='utf-8') as f:
		f.write(buf.getvalue())
	return path
