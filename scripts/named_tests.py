#!/usr/bin/env python3
"""Check that every test the series' text names exists.

ktask.rst, the cover letter and the commit messages back their claims
with the tests that check them: a KUnit case (ktask_test_*, not written
as a call), or in-guest tests (the list of names, each with an
underscore, after "in-guest" or "in-guest test(s)", joined by commas or
"and").  A renamed or removed test would leave the claim with none.  A
KUnit name must be a KUNIT_CASE of lib/test_ktask.c, an in-guest name a
string literal of guest/; a name written as a stem (ktask_test_x_*)
must begin one.  Names written otherwise are not checked.
Prints each name that does not exist; exits 1 if there is one.

usage: named_tests.py TREE TOP
"""

import glob
import os
import re
import sys

# A case, not a function of the test (named with its parentheses).
KUNIT = re.compile(r'\bktask_test_\w+\b(?!\()')
# "in-guest [test[s]]" and the list of names that follows it.
ITEM = r'(?:``)?[a-z]\w*\*?(?:``)?'
GUEST = re.compile(r'in-guest\s+(?:tests?\s+)?(' + ITEM +
		   r'(?:(?:,?\s+and\s+|,\s+)' + ITEM + r')*)')
NAME = re.compile(r'(?:``)?([a-z]\w*_\w*)\*?(?:``)?')
CASE = re.compile(r'KUNIT_CASE(?:_PARAM)?\w*\((ktask_test_\w+)')


def read(path):
	with open(path, encoding='utf-8') as f:
		return f.read()


def commit_messages(top):
	"""The message part of each patch of the series, with its file."""
	for name in read(os.path.join(top, 'patches', 'series')).split():
		text = read(os.path.join(top, 'patches', name))
		yield name, text.split('\n---\n', 1)[0]


def texts(tree, top):
	"""Each text that names tests, with where it is."""
	yield 'ktask.rst', read(os.path.join(
		tree, 'Documentation', 'core-api', 'ktask.rst'))
	yield 'cover letter', read(os.path.join(
		top, 'patches', 'cover-letter.txt'))
	yield from commit_messages(top)


def guest_names(text):
	"""The in-guest test names of @text."""
	for names in GUEST.findall(' '.join(text.split())):
		yield from NAME.findall(names)


def known(name, names):
	"""A name, or a stem (ending in _) that begins one."""
	if name.endswith('_'):
		return any(n.startswith(name) for n in names)
	return name in names


def missing_names(tree, top):
	cases = set(CASE.findall(read(os.path.join(tree, 'lib',
						   'test_ktask.c'))))
	literals = set()
	for path in glob.glob(os.path.join(top, 'guest', '*.c')):
		literals |= set(re.findall(r'"(\w+)"', read(path)))
	for where, text in texts(tree, top):
		for name in sorted(set(KUNIT.findall(text))):
			if not known(name, cases):
				yield f'{where}: KUnit {name}'
		for name in sorted(set(guest_names(text))):
			if not known(name, literals):
				yield f'{where}: in-guest {name}'


def main():
	if len(sys.argv) != 3:
		print('usage: named_tests.py TREE TOP', file=sys.stderr)
		return 2
	try:
		missing = list(missing_names(*sys.argv[1:]))
	except OSError as e:
		print(f'named_tests.py: {e}')
		return 1
	for line in missing:
		print(line)
	print(f'{len(missing)} named tests missing')
	return 1 if missing else 0


if __name__ == '__main__':
	sys.exit(main())
