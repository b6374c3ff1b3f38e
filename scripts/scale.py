#!/usr/bin/env python3
"""Judge the boots of make run SCALE=1: correctness and placement only.

The first log is the patched kernel booted with many vCPUs and nodes in
test mode, the second the same machine booted with ktask.max_threads=1.
Prints the guest's test results (its KTAP, SCALE_LOG less .log plus
.ktap, read by the tree's kunit.py parse) and the boot-time jobs the guest
saw, and checks that the serial boot left the same memory in every zone
("ktask-meminfo:" lines).  Exits non-zero if a test failed or crashed
(the tests did not finish), or memory differs; skipped tests pass (the
run kernel has no fault injection or kmemleak).

usage: scale.py SCALE_LOG SERIAL_LOG
"""

import os
import re
import subprocess
import sys

import kunit_counts

TREE = os.path.join(os.path.dirname(os.path.abspath(__file__)), '..', 'build',
		    'linux')


def lines_of(path, prefix):
	with open(path, encoding='utf-8', errors='replace') as f:
		return [line.split(prefix, 1)[1].strip().replace('\r', '')
			for line in f if prefix in line]


def ktap_results(ktap):
	"""kunit.py parse of @ktap: (passed, failed or crashed, skipped).  A
	parse that failed with no failed test (no KTAP, a result past a plan,
	which hides what follows) counts as one failure."""
	out = ktap[:-len('.ktap')] + '.json'
	if os.path.exists(out):
		os.remove(out)
	run = subprocess.run([sys.executable, 'tools/testing/kunit/kunit.py',
			      'parse', '--json=' + out, ktap], cwd=TREE,
			     capture_output=True, text=True, check=False)
	passed, failed, skipped = kunit_counts.counts(out)
	errors = re.search(r'errors: ([1-9]\d*)', run.stdout)
	if not failed and (run.returncode or errors or
			   not passed + skipped):
		failed = 1
	return passed, failed, skipped


def main():
	if len(sys.argv) != 3:
		print(__doc__.strip().splitlines()[-1], file=sys.stderr)
		return 2
	scale, serial = sys.argv[1:]
	try:
		machine = lines_of(scale, 'ktask-run:')
		threaded_mem = lines_of(scale, 'ktask-meminfo:')
		serial_mem = lines_of(serial, 'ktask-meminfo:')
		ktap = scale[:-len('.log')] + '.ktap'
		with open(ktap, encoding='utf-8', errors='replace') as f:
			lines = [line.rstrip() for line in f]
	except OSError as e:
		print(f'scale.py: {e.filename}: {e.strerror}', file=sys.stderr)
		return 1
	print('SCALE=1 (times mean nothing here): ' + (machine[0] if machine else '?'))
	for line in lines:
		if line.startswith(('    ok', '    not ok', '    # boot job')):
			print('  ' + line.strip()[:160])
	passed, failed, skipped = ktap_results(ktap)
	same = threaded_mem and threaded_mem == serial_mem
	print(f'memory after the serial boot: {"same" if same else "DIFFERENT"} '
	      f'({len(threaded_mem)} lines: MemTotal, zone present and managed)')
	print(f'{passed + skipped} passed ({skipped} skipped), '
	      f'{failed + (not same)} failed')
	return 0 if same and not failed else 1


if __name__ == '__main__':
	sys.exit(main())
