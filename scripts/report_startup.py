"""The start-up table of scripts/report.py: what a job's start costs its
caller (guest/startup.c).

For a user caller (its helpers are threads of its process) and a kernel
caller (ktask's workqueue workers), the first job of a new process and a
repeated one, at each thread count: the time from the call of ktask_run()
to the caller's first chunk (what starting its helpers kept it from its
own work) and to the first chunk of any helper.  Then the tiny job (one
unit, below a minimum chunk) through ktask_run() against calling its
thread function directly, with the target (at most 5% more) marked met
or missed.  It reports and never judges, as report.py does.
"""

from stats import median, spread

TARGET = 1.05

TITLE = ['start-up: time from ktask_run() to the caller\'s first chunk and to a '
	 'helper\'s first chunk',
	 '  (the cpu job; first: a new process\'s first job, repeat: its second)']


def startup_rows(runs):
	"""The start-up table's rows (a header first) and its target lines;
	no rows if there is no start-up run."""
	jobs = [r for r in runs if r['run'] != 'tiny' and 'caller_first_ns' in r]
	if not jobs:
		return [], []
	rows = [('caller', 'job', 'threads', 'runs', 'to caller chunk us median (min-max)',
		 'to helper chunk us median (min-max)', 'used')]
	keys = sorted({(r['caller'], r['run'], int(r['threads'])) for r in jobs},
		      key=lambda k: (k[0] != 'user', k[1] != 'first', k[2]))
	for caller, run, threads in keys:
		sel = [r for r in jobs if (r['caller'], r['run'], int(r['threads'])) ==
		       (caller, run, threads)]
		first = [int(r['caller_first_ns']) for r in sel]
		helper = [int(r['helper_first_ns']) for r in sel if int(r['helper_first_ns'])]
		rows.append((caller, run, str(threads), str(len(sel)), spread(first, 1e3),
			     spread(helper, 1e3) if helper else '-',
			     ','.join(sorted({r.get('used', '?') for r in sel}))))
	targets = []
	for caller in dict.fromkeys(r['caller'] for r in runs if r['run'] == 'tiny'):
		sel = [r for r in runs if r['run'] == 'tiny' and r['caller'] == caller]
		ratios = [int(r['wall_ns']) / int(r['direct_ns']) for r in sel
			  if int(r.get('direct_ns', 0))]
		if ratios:
			rel = median(ratios)
			targets.append(f'  tiny job, {caller} caller: ktask_run() / direct call = '
				       f'{rel:.3f} ({min(ratios):.3f}-{max(ratios):.3f}; '
				       f'target <= {TARGET:.2f}: {"met" if rel <= TARGET else "missed"})')
	return rows, targets
