#!/usr/bin/env python3
"""Check that make mutate still applies to kernel/ktask.c.

Each mutation of scripts/ktask_mutants.py replaces a text that must be
in the file exactly once.  Once the code changes under it, make mutate
reports it STALE and runs nothing, and the rule it reverts goes
untested without anyone seeing it.  Prints each such mutation; exits 1
if there is one.

usage: mutants_apply.py TREE
"""

import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from ktask_mutants import stale  # noqa: E402


def main():
	if len(sys.argv) != 2:
		sys.exit(__doc__.strip().splitlines()[-1])
	with open(os.path.join(sys.argv[1], 'kernel', 'ktask.c'),
		  encoding='utf-8') as f:
		source = f.read()
	gone = stale(source)
	for i, name, count in gone:
		print('mutation %d (%s): its text is in kernel/ktask.c %d times'
		      % (i, name, count))
	sys.exit(1 if gone else 0)


if __name__ == '__main__':
	main()
