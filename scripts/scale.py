#!/usr/bin/env python3
"""Judge the boots of make run SCALE=1: correctness and placement only.

The first log is the patched kernel booted with many vCPUs and nodes in
test mode, the second the same machine booted with ktask.max_threads=1.
Prints the guest's test results and where each NUMA job's helpers ran
(ktask_helper_end events the guest printed), and checks that the serial
boot left the same memory in every zone ("ktask-meminfo:" lines).  Exits
non-zero if a test failed, the tests did not finish, or memory differs.

usage: scale.py SCALE_LOG SERIAL_LOG
"""

import re
import sys


def lines_of(path, prefix):
	with open(path, encoding='utf-8', errors='replace') as f:
		return [line.split(prefix, 1)[1].strip().replace('\r', '')
			for line in f if prefix in line]


def main():
	if len(sys.argv) != 3:
		print(__doc__.strip().splitlines()[-1], file=sys.stderr)
		return 2
	scale, serial = sys.argv[1:]
	try:
		machine = lines_of(scale, 'ktask-run:')
		tests = lines_of(scale, 'ktask-test:')
		threaded_mem = lines_of(scale, 'ktask-meminfo:')
		serial_mem = lines_of(serial, 'ktask-meminfo:')
	except OSError as e:
		print(f'scale.py: {e.filename}: {e.strerror}', file=sys.stderr)
		return 1
	print('SCALE=1 (times mean nothing here): ' + (machine[0] if machine else '?'))
	failed = [t for t in tests if t.startswith('FAIL')]
	passed = [t for t in tests if t.startswith('ok')]
	for t in tests:
		if t.startswith(('ok', 'FAIL')) or re.search(r'info boot job', t):
			print('  ' + t[:160])
	done = 'done' in tests
	same = threaded_mem and threaded_mem == serial_mem
	print(f'memory after the serial boot: {"same" if same else "DIFFERENT"} '
	      f'({len(threaded_mem)} lines: MemTotal, zone present and managed)')
	print(f'{len(passed)} passed, {len(failed) + (not done) + (not same)} failed'
	      f'{"" if done else " (the tests did not finish)"}')
	return 0 if done and same and not failed else 1


if __name__ == '__main__':
	sys.exit(main())
