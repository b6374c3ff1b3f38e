#!/usr/bin/env python3
"""The boots of scripts/kunit-boots, read and checked in one place for
make test (scripts/test.sh) and make mutate (scripts/mutate.py).

A row is NAME MACHINE RAN CONSOLE CASES ARGS...: RAN is may or must,
CONSOLE is clean or a report scripts/splat.py names (EXPECTED), ARGS "-"
for none.  Run as a script, prints the rows as
"NAME MACHINE RAN CONSOLE CASES [ARG...]", one a line, or what is wrong
with the table, and exits 1.

usage: kunit_boots.py
"""

import os
import sys

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


def main():
	try:
		rows = boots()
	except (OSError, ValueError) as e:
		print(f'scripts/kunit-boots: {e}')
		return 1
	for name, machine, ran, console, cases, args in rows:
		print(' '.join([name, machine, ran, console, cases] + args))
	return 0


if __name__ == '__main__':
	sys.exit(main())
