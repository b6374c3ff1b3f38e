#!/usr/bin/env python3
"""Count the test cases of a kunit.py --json file (KUnit's or the guest's).

Prints "PASSED FAILED SKIPPED" (a crashed case, one of a plan that has
no result, counts as failed; so does a file that cannot be read), and
each failed case on standard error.  scripts/checks.sh (count_json) and
scale.py use it; kunit_boots.py uses skipped().

usage: kunit_counts.py JSON
"""

import json
import sys


def counts(path, failures=None):
	"""(passed, failed, skipped) of the cases in @path; failed names go
	to the list @failures if given."""
	tally = {'PASS': 0, 'FAIL': 0, 'SKIP': 0}

	def walk(group):
		for case in group.get('test_cases', []):
			status = case.get('status', 'FAIL')
			kind = status if status in ('PASS', 'SKIP') else 'FAIL'
			tally[kind] += 1
			if kind == 'FAIL' and failures is not None:
				failures.append(f'{group.get("name")}.'
						f'{case.get("name") or "(no result)"} {status}')
		for sub in group.get('sub_groups', []):
			walk(sub)
	try:
		with open(path, encoding='utf-8') as f:
			walk(json.load(f))
	except (OSError, ValueError):
		tally['FAIL'] += 1
		if failures is not None:
			failures.append(f'{path}: no results')
	return tally['PASS'], tally['FAIL'], tally['SKIP']


def any_skipped(group):
	"""Whether a case of @group, or of a group below it, skipped."""
	return any(case.get('status') == 'SKIP'
		   for case in group.get('test_cases', [])) or \
		any(any_skipped(sub) for sub in group.get('sub_groups', []))


def skipped(path):
	"""The skipped cases of @path's suites, each as SUITE.CASE; a case
	with parameters (a group below its suite) once, whichever of them
	skipped."""
	with open(path, encoding='utf-8') as f:
		top = json.load(f)
	names = []
	for suite in top.get('sub_groups', []):
		prefix = f'{suite.get("name")}.'
		names += [prefix + str(case.get('name'))
			  for case in suite.get('test_cases', [])
			  if case.get('status') == 'SKIP']
		names += [prefix + str(sub.get('name'))
			  for sub in suite.get('sub_groups', [])
			  if any_skipped(sub)]
	return names


def main():
	if len(sys.argv) != 2:
		print(__doc__.strip().splitlines()[-1], file=sys.stderr)
		return 2
	failures = []
	passed, failed, nr_skipped = counts(sys.argv[1], failures)
	for name in failures:
		print(f'FAIL: kunit {name}', file=sys.stderr)
	print(passed, failed, nr_skipped)
	return 0


if __name__ == '__main__':
	sys.exit(main())
