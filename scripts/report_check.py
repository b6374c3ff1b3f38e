#!/usr/bin/env python3
"""Check the busy table's comparisons (report_busy.py) on made-up runs,
since make test boots no benchmark that would feed it real ones.

Each thread count is compared with the unpatched runs at that count,
which make run places in the same spot of their boots; with the unpatched
runs at 1 where the unpatched kernel ran only 1; the unpatched kernel's
own rows with its 1.  The runs below give each choice a different answer.
A console log as scripts/boot.sh writes it, with its last "ktask-run:"
line after a guest line that did not end, must give its runs the boot's
kernel and host figures.  Prints what is wrong; exits 1 if anything is.

usage: report_check.py
"""

import os
import sys
import tempfile

from report_busy import busy_rows
from results import collect, read_log


def runs(bench, label, threads, wall_ms, cpu_ms, used=1, n=3):
	"""@n runs of @bench on @label's kernel, all alike, one a boot: boot i
	of the unpatched kernel had i s of host CPU time outside QEMU, the
	patched kernel's none."""
	return [{'bench': bench, 'label': label, 'threads': str(threads),
		 'used': str(used), 'wall_ns': str(wall_ms * 10**6),
		 'cpu_ns': str(cpu_ms * 10**6), 'boot': (label, i), 'round': ('run', i + 1),
		 'host_other_cpu_ms': str(1000 * i * (label == 'unpatched')),
		 'host_steal_ms': '0', 'qemu_cpu_ms': str(60000 + 1000 * i),
		 'qemu_sys_ms': str(5000 + 1000 * i), 'boot_s': '90'}
		for i in range(n)]


def rounds(bench, label, threads, wall_ms):
	"""A run of @bench per boot, one boot a round, each with its own wall
	and CPU time (@wall_ms, the CPU time half of it); None for a round
	whose boot failed, which the boots after it do not fill."""
	out = []
	for run, ms in zip(runs(bench, label, threads, 0, 0, n=len(wall_ms)), wall_ms):
		if ms is not None:
			out.append(dict(run, wall_ns=str(ms * 10**6), cpu_ns=str(ms * 10**6 // 2)))
	return out


# vfio_map_cpumax: both kernels at both counts, a later place 10% slower;
# thp_move_busy: the unpatched kernel at 1 only (mm_bench.c's rows);
# falloc_busy: a host whose speed drifts from round to round, the patched
# kernel at 2 threads 1.10, 0.90, 1.30, 1.00, 1.20 and 0.95 times as long
# as the unpatched one in the six rounds, so that the ratio paired by
# round (1.05, 0.90 to 1.30, all six rounds' range at n = 6), the ratio
# of the medians (1.17) and a pairing of the wrong rounds differ;
# touch_1g_busy: 1.10 in every round, but the patched kernel's boot of
# round 2 and the unpatched one's of round 4 failed, so that the rounds
# pair by number (six of eight), not by place in the list.
ONE = '1.00 (n<6), 1.00 (n<6)'
DRIFT = '1.05 (0.90-1.30), 1.05 (0.90-1.30)'
GAPS = '1.10 (1.10-1.10), 1.10 (1.10-1.10)'
RUNS = (runs('vfio_map_cpumax', 'unpatched', 1, 1000, 500) +
	runs('vfio_map_cpumax', 'unpatched', 2, 1100, 550) +
	runs('vfio_map_cpumax', 'patched', 1, 1000, 500) +
	runs('vfio_map_cpumax', 'patched', 2, 1100, 550) +
	runs('thp_move_busy', 'unpatched', 1, 400, 400) +
	runs('thp_move_busy', 'patched', 2, 300, 440, used=2) +
	rounds('falloc_busy', 'unpatched', 2, (1000, 3000, 2000, 1500, 2500, 1200)) +
	rounds('falloc_busy', 'patched', 2, (1100, 2700, 2600, 1500, 3000, 1140)) +
	rounds('touch_1g_busy', 'unpatched', 2, (1000, 1300, 1600, None, 2200, 2500, 2800, 3100)) +
	rounds('touch_1g_busy', 'patched', 2, (1100, None, 1760, 2090, 2420, 2750, 3080, 3410)))

# (bench, kernel, threads) -> (wall vs unpatched, cpu vs unpatched,
# paired by round)
WANT_ROWS = {
	('vfio_map_cpumax', 'unpatched', '1'): ('1.00', '1.00', '-'),
	('vfio_map_cpumax', 'unpatched', '2'): ('1.10', '1.10', '-'),
	('vfio_map_cpumax', 'patched', '1'): ('1.00', '1.00', ONE),
	('vfio_map_cpumax', 'patched', '2'): ('1.00', '1.00', ONE),
	('thp_move_busy', 'unpatched', '1'): ('1.00', '1.00', '-'),
	('thp_move_busy', 'patched', '2'): ('0.75', '1.10', '0.75 (n<6), 1.10 (n<6)'),
	('falloc_busy', 'unpatched', '2'): ('-', '-', '-'),
	('falloc_busy', 'patched', '2'): ('1.17', '1.17', DRIFT),
	('touch_1g_busy', 'unpatched', '2'): ('-', '-', '-'),
	('touch_1g_busy', 'patched', '2'): ('1.10', '1.10', GAPS),
}
WANT_TARGETS = [
	'  vfio_map_cpumax at 2 threads: wall 1.00, cpu 1.00 of unpatched (met); paired by '
	'round over 3 rounds: wall 1.00 (n<6), cpu 1.00 (n<6), target not resolved (an '
	'interval needs 6 rounds)',
	'  vfio_map_cpumax, the same serial code (unpatched) in the place of 2 threads '
	'against that of 1: wall 1.10, cpu 1.10',
	'  thp_move_busy at 2 threads: wall 0.75, cpu 1.10 of unpatched (missed); paired by '
	'round over 3 rounds: wall 0.75 (n<6), cpu 1.10 (n<6), target not resolved (an '
	'interval needs 6 rounds)',
	'  falloc_busy at 2 threads: wall 1.17, cpu 1.17 of unpatched (missed); paired by '
	'round over 6 rounds: wall 1.05 (0.90-1.30), cpu 1.05 (0.90-1.30), target not shown '
	'at 95%',
	'  touch_1g_busy at 2 threads: wall 1.10, cpu 1.10 of unpatched (missed); paired by '
	'round over 6 rounds: wall 1.10 (1.10-1.10), cpu 1.10 (1.10-1.10), target not shown '
	'at 95%',
	'  host CPU time not QEMU\'s during the 8 patched boots of median 90 s (other '
	'processes, host kernel threads, interrupts; tick-sampled): median 0.0 s, most 0.0 s; '
	'steal most 0.0 s; QEMU\'s own most 67.0 s (12.0 s in the host kernel), least 60.0 s '
	'(5.0 s)',
	'  host CPU time not QEMU\'s during the 8 unpatched boots of median 90 s (other '
	'processes, host kernel threads, interrupts; tick-sampled): median 3.5 s, most 7.0 s; '
	'steal most 0.0 s; QEMU\'s own most 67.0 s (12.0 s in the host kernel), least 60.0 s '
	'(5.0 s)',
]


LOG = ('ktask-run: host_cpu=x host_cpus=2 accel=tcg label=unpatched append=\n'
       'ktask-mm: bench=falloc_busy threads=2 used=1 bytes=1 wall_ns=5 cpu_ns=4\n'
       'a guest line that did not end'
       '\nktask-run: host_other_cpu_ms=1500 host_steal_ms=0 qemu_cpu_ms=9 qemu_sys_ms=1 '
       'boot_s=90\n')


def log_wrong():
	"""What read_log() and collect() get wrong of LOG."""
	with tempfile.TemporaryDirectory() as tmp:
		path = os.path.join(tmp, 'console-unpatched-1.log')
		with open(path, 'w', encoding='utf-8') as f:
			f.write(LOG)
		runs = collect([(path,) + read_log(path)])[0]
	want = {'label': 'unpatched', 'host_other_cpu_ms': '1500', 'qemu_sys_ms': '1',
		'boot_s': '90'}
	if len(runs) != 1:
		return [f'log: {len(runs)} runs, want 1']
	wrong = [f'log: {key}={runs[0].get(key)}, want {value}'
		 for key, value in want.items() if runs[0].get(key) != value]
	if (runs[0].get('round') or (None, None))[1] != 1:
		wrong.append(f"log: round={runs[0].get('round')}, want round 1 of its directory")
	return wrong


def main():
	rows, targets = busy_rows(RUNS)
	got = {row[:3]: row[6:8] + row[9:] for row in rows[1:]}
	wrong = [f'{key}: vs unpatched {got.get(key)}, want {want}'
		 for key, want in WANT_ROWS.items() if got.get(key) != want]
	wrong += [f'row {key} not wanted' for key in got if key not in WANT_ROWS]
	if targets != WANT_TARGETS:
		wrong.append('targets:\n' + '\n'.join(targets) + '\nwant:\n' +
			     '\n'.join(WANT_TARGETS))
	wrong += log_wrong()
	for line in wrong:
		print(f'report_check.py: busy table: {line}')
	return 1 if wrong else 0


if __name__ == '__main__':
	sys.exit(main())
