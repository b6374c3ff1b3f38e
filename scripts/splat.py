#!/usr/bin/env python3
"""Find the kernel's reports of bugs in console logs, and print them.

A report starts at a line the debug options print (WARN, BUG, lockdep,
KASAN, KFENCE, UBSAN, debugobjects, kmemleak, a hung task, an oops) and
ends at its "---[ end trace" line or, failing that, after MAX_LINES.  The
warnings the KUnit suite's misuse cases trigger on purpose are expected
and skipped: a WARN in ktask_args_valid() (the function its WARNING or
RIP line names, ktask_run_numa() where it is inlined) whose title, the
message between its "cut here" line and its WARNING line, is one of that
function's, and the WARN of a helper's second lock in ktask_mutex_lock()
when its call trace has ktask_test_lock_second's chunk function.

With --kcsan, a KCSAN data race counts only if it is in ktask's code:
one of its accesses in a function named ktask_* or *_ktask* (other
code's races are printed, but not counted); other reports count as
without it.

With --expect NAME, a boot that must make one report: exactly one
report whose lines, joined, match EXPECTED[NAME] (Python, DOTALL) is
expected; none, or more than one, counts as one report.

Prints each report, then a summary line; exits 1 if any counted.

usage: splat.py [--kcsan | --expect NAME] LOG...
"""

import re
import sys

MAX_LINES = 60

# The reports a boot of scripts/kunit-boots must make, by name.
EXPECTED = {
	# ktask_test_lockdep_inversion: the cycle of the case's job (its
	# lock class is named after lib/test_ktask.c) and its mutex.
	'lockdep-cycle': r'(?=.*possible circular locking dependency)'
			 r'(?=.*\(ktask \S*lib/test_ktask\.c:)(?=.*\(&d\.lock\))',
}

START = re.compile(
	r'(WARNING: |BUG: |UBSAN: |ODEBUG: |unreferenced object 0x|'
	r'INFO: task .* blocked for more than|Kernel panic - |Oops: |'
	r'general protection fault|kernel BUG at |'
	r'INFO: trying to register non-static key|'
	r'Watchdog detected hard LOCKUP|rcu: INFO: .*detected stall|'
	r'self-detected stall)')
END = re.compile(r'---\[ end (trace|Kernel panic)')
# The warnings of the misuse cases, each (the functions that may name it,
# its title, a frame its call trace must have, if any): those of
# ktask_args_valid() (or ktask_run_numa() it is inlined into), and that
# of ktask_mutex_lock() for a helper's second lock, from
# ktask_test_lock_second alone, so that a real caller's second lock (the
# chunks of hugetlbfs fallocate take the fault mutex with it) is still a
# report.
ARGS_FUNCS = {'ktask_args_valid', 'ktask_run_numa'}
MISUSES = [
	(ARGS_FUNCS,
	 re.compile(r'ktask: (thread function and minimum chunk size are '
		    r'required|\d+ nodes at NULL|node -?\d+ does not exist|'
		    r'range at \S+ of \d+ units wraps)$'), None),
	({'ktask_mutex_lock'},
	 re.compile(r'ktask: a helper takes a second lock with '
		    r'ktask_mutex_lock\(\)$'),
	 re.compile(r'\bktask_test_two_locks_chunk\+0x')),
]
CUT_HERE = re.compile(r'-+\[ cut here \]-+')
# The function of a WARNING line ("at FILE:LINE FUNC+0x..") or a RIP line.
WARN_FUNC = re.compile(r'(?:WARNING: .* at \S+:\d+ |RIP: \S+:)([\w.]+)\+0x')
# How far before a WARNING line its "cut here" line may be.
MAX_TITLE = 8
KCSAN = re.compile(r'BUG: KCSAN: data-race in (\S+) / (\S+)|BUG: KCSAN: data-race in (\S+)')
KTASK_FUNC = re.compile(r'(^|_)ktask')

# The timestamp and the KUnit indentation before a kernel message.
PREFIX = re.compile(r'^\s*(\[\s*[\d.]+\]\s*)?')


def title(lines, start):
	"""The lines between the "cut here" line before @start and @start."""
	for i in range(start - 1, max(start - MAX_TITLE, 0) - 1, -1):
		if CUT_HERE.search(lines[i]):
			return [PREFIX.sub('', line) for line in lines[i + 1:start]]
	return []


def expected_misuse(titles, block):
	"""Whether a report is a WARN of a misuse case: its function, its title
	and, for some, a frame of its call trace."""
	funcs = {m.group(1) for line in block for m in [WARN_FUNC.search(line)] if m}
	return any(names & funcs and
		   any(title_re.search(line) for line in titles) and
		   (frame is None or any(frame.search(line) for line in block))
		   for names, title_re, frame in MISUSES)


def reports(path):
	"""(line number, title lines, lines) of each report in @path."""
	with open(path, encoding='utf-8', errors='replace') as f:
		lines = [line.rstrip('\r\n') for line in f]
	i = 0
	while i < len(lines):
		if not START.search(lines[i]):
			i += 1
			continue
		start = i
		i += 1
		while i < len(lines) and i - start < MAX_LINES:
			if END.search(lines[i]):
				i += 1
				break
			# The next report, but for the "WARNING: CPU" line of
			# debugobjects' WARN, whose message is "ODEBUG: ...".
			if START.search(lines[i]) and not (
					'WARNING: CPU' in lines[i] and
					'ODEBUG: ' in lines[start]):
				break
			i += 1
		yield start + 1, title(lines, start), lines[start:i]


def kcsan_in_ktask(first):
	m = KCSAN.search(first)
	if not m:
		return None
	funcs = [f for f in m.groups() if f]
	return any(KTASK_FUNC.search(f.split('+')[0]) for f in funcs)


def main():
	args = sys.argv[1:]
	kcsan = bool(args) and args[0] == '--kcsan'
	if kcsan:
		args = args[1:]
	want = None
	if len(args) > 1 and args[0] == '--expect':
		if args[1] not in EXPECTED:
			print(f'splat.py: no expected report named {args[1]}',
			      file=sys.stderr)
			return 2
		want = re.compile(EXPECTED[args[1]], re.DOTALL)
		args = args[2:]
	if not args:
		print(__doc__.strip().splitlines()[-1], file=sys.stderr)
		return 2
	counted = expected = other = wanted = 0
	for path in args:
		try:
			found = list(reports(path))
		except OSError as e:
			print(f'splat.py: {path}: {e.strerror}', file=sys.stderr)
			return 2
		for lineno, titles, block in found:
			first = PREFIX.sub('', block[0])
			if expected_misuse(titles, block):
				expected += 1
				continue
			if want and want.search('\n'.join(block)):
				wanted += 1
				print(f'{path}:{lineno}: (expected) {first}')
				if wanted == 1:
					continue
			if kcsan:
				# Other reports count as they do without --kcsan.
				ours = kcsan_in_ktask(first)
				if ours is False:
					other += 1
					print(f'{path}:{lineno}: (not in ktask) {first}')
					continue
			counted += 1
			print(f'{path}:{lineno}: {first}')
			for line in block[1:]:
				print('    | ' + line)
	if want and not wanted:
		counted += 1
		print(f'splat.py: no report matches {want.pattern}')
	what = 'reports (KCSAN: races in ktask only)' if kcsan else 'reports'
	print(f'splat.py: {counted} {what}' +
	      (f', {other} races elsewhere' if kcsan else '') +
	      (f', {expected} expected misuse warnings' if expected else '') +
	      (f', {wanted} expected by --expect' if want else ''))
	return 1 if counted else 0


if __name__ == '__main__':
	sys.exit(main())
