#!/usr/bin/env python3
"""Check that every test the series' text names exists.

ktask.rst, the cover letter and the commit messages back their claims
with the tests that check them: a KUnit case (ktask_test_*), or an
in-guest test (the list of names after "in-guest").
A renamed or removed test would leave the claim with none.  A KUnit name
must be a KUNIT_CASE of lib/test_ktask.c, an in-guest name a string
literal of guest/; either may be the stem of several (``ktask_test_x_*``).
Prints each name that is not; exits 1 if there is one.

usage: named_tests.py TREE TOP
"""

import glob
import os
import re
import sys

# A case, not a function of the test (named with its parentheses).
KUNIT = re.compile(r'\bktask_test_\w+\b(?!\()')
# "in-guest [test[s]]" and the list of names that follows it.
GUEST = re.compile(r'in-guest\s+(?:tests?\s+)?'
		   r'((?:``)?[a-z]\w*(?:``)?(?:(?:,\s+|,?\s+and\s+)'
		   r'(?:``)?[a-z]\w*(?:``)?)*)')
NAME = re.compile(r'(?:``)?([a-z]\w*_\w+)(?:``)?')
CASE = re.compile(r'KUNIT_CASE(?:_PARAM)?\w*\((ktask_test_\w+)')


def commit_messages(top):
	"""The message part of each patch of the series, with its file."""
	series = os.path.join(top, 'patches', 'series')
	for name in open(series).read().split():
		text = open(os.path.join(top, 'patches', name)).read()
		yield name, text.split('\n---\n', 1)[0]


def texts(tree, top):
	yield 'ktask.rst', open(os.path.join(
		tree, 'Documentation', 'core-api', 'ktask.rst')).read()
	yield 'cover letter', open(os.path.join(
		top, 'patches', 'cover-letter.txt')).read()
	yield from commit_messages(top)


def guest_names(text):
	for names in GUEST.findall(' '.join(text.split())):
		yield from NAME.findall(names)


def known(name, names):
	"""A name, or the stem of names (vfio_memlock_two_* and the like)."""
	return name in names or any(n.startswith(name + '_') for n in names)


def main():
	if len(sys.argv) != 3:
		sys.exit(__doc__)
	tree, top = sys.argv[1:]
	cases = set(CASE.findall(open(os.path.join(
		tree, 'lib', 'test_ktask.c')).read()))
	literals = set()
	for path in glob.glob(os.path.join(top, 'guest', '*.c')):
		literals |= set(re.findall(r'"(\w+)"', open(path).read()))
	missing = []
	for where, text in texts(tree, top):
		for name in sorted(set(KUNIT.findall(text))):
			if not known(name.rstrip('_'), cases):
				missing.append('%s: KUnit %s' % (where, name))
		for name in sorted(set(guest_names(text))):
			if not known(name.rstrip('_'), literals):
				missing.append('%s: in-guest %s' % (where, name))
	for line in missing:
		print(line)
	print('%d named tests missing' % len(missing))
	return 1 if missing else 0


if __name__ == '__main__':
	sys.exit(main())
