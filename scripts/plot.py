#!/usr/bin/env python3
"""Plot the speedups of make run from build/report/results.csv.

One PNG per workload in build/report/: the median speedup over the serial
run at each thread count, the ideal line (speedup = threads), for the
memory-bound mm callers the guest's write-bandwidth ceiling (the memset
rate at as many threads over the workload's serial rate), and the
unpatched kernel as one point.  Speedups are those of the report's tables
(scripts/stats.py computes both, scripts/results.py wrote the CSV): wall
time for the self-benchmark jobs and deferred init, rate for the mm
callers.  gnuplot draws them; without it, nothing is drawn.

usage: plot.py [RESULTS_CSV [OUT_DIR]]
"""

import csv
import os
import shutil
import subprocess
import sys

from results import deferred_boot
from stats import by_threads, median, rate

# The mm callers whose rate the guest's memory write rate bounds.
MEMORY_BOUND = ('falloc', 'touch_1g')


def read_results(path):
	"""The measurement rows of results.csv (its '#' lines are the machine)."""
	with open(path, encoding='utf-8') as f:
		rows = [line for line in f if not line.startswith('#')]
	return list(csv.DictReader(rows))


def bench_curves(rows):
	"""Self-benchmark jobs: serial wall / wall, per thread count."""
	curves = {}
	for name in sorted({r['name'] for r in rows if r['kind'] == 'bench'}):
		runs = [r for r in rows if r['kind'] == 'bench' and r['name'] == name]
		walls = by_threads(runs, lambda r: int(r['wall_ns']))
		serial = median(walls.get(1))
		if serial:
			curves[f'job {name}'] = {
				'points': {t: serial / median(w) for t, w in walls.items()}}
	return curves


def mm_curves(rows):
	"""mm callers: rate / serial rate, the memset ceiling, unpatched."""
	mm = [r for r in rows if r['kind'] == 'mm']
	memset = by_threads([r for r in mm if r['name'] == 'memset' and
			     r['label'] == 'patched'], rate)
	curves = {}
	for name in sorted({r['name'] for r in mm} - {'memset'}):
		patched = by_threads([r for r in mm if r['name'] == name and
				      r['label'] == 'patched'], rate)
		serial = median(patched.get(1))
		if not serial:
			continue
		curve = {'points': {t: median(v) / serial for t, v in patched.items()}}
		unpatched = [rate(r) for r in mm if r['name'] == name and
			     r['label'] == 'unpatched']
		if unpatched:
			curve['unpatched'] = median(unpatched) / serial
		if name in MEMORY_BOUND:
			curve['ceiling'] = {t: median(v) / serial for t, v in memset.items()
					    if t in patched}
		curves[name] = curve
	return curves


def deferred_curve(rows):
	"""Deferred init with the most vCPUs, no SMT: serial ms / ms per
	thread count (the patched kernel without a limit uses them all)."""
	slowest = {}
	for r in rows:
		if r['kind'] == 'deferred' and deferred_boot(r['label']):
			key = (r['label'], r['log'])
			slowest[key] = max(slowest.get(key, 0), int(r['ms']))
	most = max((deferred_boot(label)[1] for label, _ in slowest), default=0)
	ms = {}
	padata = []
	for (label, _), value in slowest.items():
		patched, vcpus, smt, knob = deferred_boot(label)
		if vcpus != most or smt != 1:
			continue
		if patched:
			ms.setdefault(knob or vcpus, []).append(value)
		else:
			padata.append(value)
	serial = median(ms.get(1))
	if not serial:
		return {}
	curve = {'points': {t: serial / median(v) for t, v in ms.items()}}
	if padata:
		curve['unpatched'] = serial / median(padata)
		curve['unpatched_threads'] = most
	return {'deferred_init': curve}


def gnuplot_script(title, curve, png):
	"""gnuplot commands for one workload, its data inline."""
	points = sorted(curve['points'].items())
	top = max(t for t, _ in points)
	ymax = max([top] + [s for _, s in points] +
		   list(curve.get('ceiling', {}).values()) +
		   [curve.get('unpatched', 0)]) * 1.15
	plots = ["'-' using 1:1 with lines dashtype 2 lc 'gray' title 'ideal'",
		 "'-' using 1:2 with linespoints lw 2 pt 7 lc 'blue' title 'ktask'"]
	data = ['\n'.join(f'{t} {t}' for t, _ in points),
		'\n'.join(f'{t} {s:.3f}' for t, s in points)]
	if curve.get('ceiling'):
		plots.append("'-' using 1:2 with linespoints dashtype 3 pt 6 "
			     "lc 'red' title 'memory write ceiling (memset)'")
		data.append('\n'.join(f'{t} {s:.3f}' for t, s in sorted(curve['ceiling'].items())))
	if 'unpatched' in curve:
		plots.append("'-' using 1:2 with points pt 5 ps 1.5 lc 'black' "
			     "title 'unpatched 6.12'")
		data.append(f'{curve.get("unpatched_threads", 1)} {curve["unpatched"]:.3f}')
	return '\n'.join([
		"set terminal pngcairo size 640,420 font 'sans,10' noenhanced",
		f"set output '{png}'",
		f"set title '{title}: speedup over ktask serial (median)'",
		"set xlabel 'threads'", "set ylabel 'speedup'",
		f'set xrange [0.5:{top + 0.5}]', f'set yrange [0:{ymax:.2f}]',
		f"set xtics ({', '.join(str(t) for t, _ in points)})",
		'set key left top', 'set grid',
		'plot ' + ', \\\n     '.join(plots),
	] + [block + '\ne' for block in data]) + '\n'


def main():
	top = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
	path = sys.argv[1] if len(sys.argv) > 1 else os.path.join(top, 'build/report/results.csv')
	out_dir = sys.argv[2] if len(sys.argv) > 2 else os.path.dirname(path)
	if not shutil.which('gnuplot'):
		print('plot.py: no gnuplot (scripts/deps.sh installs gnuplot-nox): no plots',
		      file=sys.stderr)
		return 0
	try:
		rows = read_results(path)
	except OSError as e:
		print(f'plot.py: cannot read {path}: {e.strerror}; run "make run" first',
		      file=sys.stderr)
		return 1
	curves = {**bench_curves(rows), **mm_curves(rows), **deferred_curve(rows)}
	written = []
	for title, curve in curves.items():
		png = os.path.join(out_dir, 'speedup-' + title.replace(' ', '-') + '.png')
		script = gnuplot_script(title, curve, png)
		result = subprocess.run(['gnuplot'], input=script, text=True,
					capture_output=True, check=False)
		if result.returncode:
			print(f'plot.py: gnuplot failed for {title}: {result.stderr.strip()}',
			      file=sys.stderr)
			continue
		written.append(os.path.relpath(png))
	print('plots: ' + (', '.join(written) if written else 'none'))
	return 0


if __name__ == '__main__':
	sys.exit(main())
