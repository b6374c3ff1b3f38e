#!/usr/bin/env python3
"""The boots of scripts/kunit-boots, read and checked in one place for
make test (scripts/test.sh) and make mutate (scripts/mutate.py).

A row is NAME MACHINE RAN CONSOLE CASES ARGS...: RAN is may or must,
CONSOLE is clean or a report scripts/splat.py names (EXPECTED), ARGS "-"
for none.  Run as a script, prints the rows as
"NAME MACHINE RAN CONSOLE CASES [ARG...]", one a line, or what is wrong
with the table, and exits 1.  With --skips JSON, prints the cases the
KUnit run of JSON (make test's suite boot) skipped that no boot of the
table must run, one a line, and exits 1 if there is one (2 if JSON
cannot be read): every other case must run in that boot, or it checks
nothing.

usage: kunit_boots.py [--skips JSON]
"""

import fnmatch
import os
import sys

from kunit_counts import skipped
from splat import EXPECTED

TABLE = os.path.join(os.path.dirname(os.path.abspath(__file__)),
		     'kunit-boots')


def boots():
	"""(name, machine, ran, console, cases, args) per row; ValueError
	if the table is wrong."""
	rows = []
	with open(TABLE, encoding='utf-8') as f:
		for line in f:
			fields = line.split()
			if not fields or fields[0].startswith('#'):
				continue
			if len(fields) < 6 or fields[2] not in ('may', 'must'):
				raise ValueError('not NAME MACHINE may|must CONSOLE '
						 'CASES ARGS: ' + line.strip())
			name, machine, ran, console, cases = fields[:5]
			if console != 'clean' and console not in EXPECTED:
				raise ValueError(f'boot {name}: CONSOLE {console} is '
						 'neither clean nor a report of '
						 'scripts/splat.py')
			args = [a for a in fields[5:] if a != '-']
			rows.append((name, machine, ran, console, cases, args))
	if not rows:
		raise ValueError('no boot')
	return rows


def run_elsewhere(case, rows):
	"""Whether a boot of @rows must run @case (SUITE.CASE): a "may" row
	could skip it too."""
	return any(row[2] == 'must' and fnmatch.fnmatchcase(case, row[4])
		   for row in rows)


def main():
	try:
		rows = boots()
	except (OSError, ValueError) as e:
		print(f'scripts/kunit-boots: {e}')
		return 2 if sys.argv[1:2] == ['--skips'] else 1
	if sys.argv[1:2] == ['--skips'] and len(sys.argv) == 3:
		try:
			cases = skipped(sys.argv[2])
		except (OSError, ValueError) as e:
			print(f'{sys.argv[2]}: {e}')
			return 2
		strays = [c for c in cases if not run_elsewhere(c, rows)]
		for case in strays:
			print(case)
		return 1 if strays else 0
	if sys.argv[1:]:
		print(__doc__.strip().splitlines()[-1], file=sys.stderr)
		return 2
	for name, machine, ran, console, cases, args in rows:
		print(' '.join([name, machine, ran, console, cases] + args))
	return 0


if __name__ == '__main__':
	sys.exit(main())
