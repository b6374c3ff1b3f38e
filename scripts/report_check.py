#!/usr/bin/env python3
"""Check the busy table's comparisons (report_busy.py) on made-up runs,
since make test boots no benchmark that would feed it real ones.

Each thread count is compared with the unpatched runs at that count,
which make run places in the same spot of their boots; with the unpatched
runs at 1 where the unpatched kernel ran only 1; the unpatched kernel's
own rows with its 1.  The runs below give each choice a different answer.
Prints what is wrong; exits 1 if anything is.

usage: report_check.py
"""

import sys

from report_busy import busy_rows


def runs(bench, label, threads, wall_ms, cpu_ms, used=1, n=3):
	"""@n runs of @bench on @label's kernel, all alike."""
	return [{'bench': bench, 'label': label, 'threads': str(threads),
		 'used': str(used), 'wall_ns': str(wall_ms * 10**6),
		 'cpu_ns': str(cpu_ms * 10**6)} for _ in range(n)]


# vfio_map_cpumax: both kernels at both counts, a later place 10% slower;
# thp_move_busy: the unpatched kernel at 1 only (mm_bench.c's rows).
RUNS = (runs('vfio_map_cpumax', 'unpatched', 1, 1000, 500) +
	runs('vfio_map_cpumax', 'unpatched', 2, 1100, 550) +
	runs('vfio_map_cpumax', 'patched', 1, 1000, 500) +
	runs('vfio_map_cpumax', 'patched', 2, 1100, 550) +
	runs('thp_move_busy', 'unpatched', 1, 400, 400) +
	runs('thp_move_busy', 'patched', 2, 300, 440, used=2))

# (bench, kernel, threads) -> (wall vs unpatched, cpu vs unpatched)
WANT_ROWS = {
	('vfio_map_cpumax', 'unpatched', '1'): ('1.00', '1.00'),
	('vfio_map_cpumax', 'unpatched', '2'): ('1.10', '1.10'),
	('vfio_map_cpumax', 'patched', '1'): ('1.00', '1.00'),
	('vfio_map_cpumax', 'patched', '2'): ('1.00', '1.00'),
	('thp_move_busy', 'unpatched', '1'): ('1.00', '1.00'),
	('thp_move_busy', 'patched', '2'): ('0.75', '1.10'),
}
WANT_TARGETS = [
	'  vfio_map_cpumax at 2 threads: wall 1.00, cpu 1.00 of unpatched (met)',
	'  vfio_map_cpumax, the same serial code (unpatched) in the place of 2 threads '
	'against that of 1: wall 1.10, cpu 1.10',
	'  thp_move_busy at 2 threads: wall 0.75, cpu 1.10 of unpatched (missed)',
]


def main():
	rows, targets = busy_rows(RUNS)
	got = {row[:3]: row[6:8] for row in rows[1:]}
	wrong = [f'{key}: vs unpatched {got.get(key)}, want {want}'
		 for key, want in WANT_ROWS.items() if got.get(key) != want]
	wrong += [f'row {key} not wanted' for key in got if key not in WANT_ROWS]
	if targets != WANT_TARGETS:
		wrong.append('targets:\n' + '\n'.join(targets) + '\nwant:\n' +
			     '\n'.join(WANT_TARGETS))
	for line in wrong:
		print(f'report_check.py: busy table: {line}')
	return 1 if wrong else 0


if __name__ == '__main__':
	sys.exit(main())
