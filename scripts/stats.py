"""The statistics that scripts/report.py's tables and scripts/plot.py's
plots both compute, in one place so that a speedup in a table and the same
speedup in its plot are one number, computed one way.

Reads and writes no file: these are functions of lists of runs, the result
dicts of scripts/results.py or the rows of build/report/results.csv (their
fields are strings either way), and of lists of numbers.  Medians, not
means: a boot's luck (a vCPU descheduled by the host) makes outliers.
"""

import math
import statistics


def median(values):
	"""The median, or None of no values (a thread count nobody ran)."""
	return statistics.median(values) if values else None


def median_of(runs, key):
	"""The median of a numeric field, over the runs that have it."""
	return median([float(r[key]) for r in runs if key in r])


def spread(values, scale):
	"""'median (min-max)' of values divided by scale."""
	med = statistics.median(values) / scale
	return f'{med:.1f} ({min(values) / scale:.1f}-{max(values) / scale:.1f})'


def ratio(num, den):
	"""Median of num / median of den, formatted; '-' when either side has
	no runs (no serial or unpatched run to compare with)."""
	if not num or not den:
		return '-'
	return f'{statistics.median(num) / statistics.median(den):.2f}'


def median_ci(values):
	"""(median, low, high) of values: low and high the order statistics
	k and n + 1 - k of the n sorted values, k the largest with
	P(B(n, 1/2) < k) at most 2.5%, an interval that holds the true median
	at least 95% of the time whatever the distribution; low and high None
	with fewer than 6 values, which give no such interval."""
	xs = sorted(values)
	n = len(xs)
	below = k = 0
	while below + math.comb(n, k) / 2 ** n <= 0.025:
		below += math.comb(n, k) / 2 ** n
		k += 1
	if k == 0:
		return statistics.median(xs), None, None
	return statistics.median(xs), xs[k - 1], xs[n - k]


def rate(run):
	"""Bytes per nanosecond (GB/s) of an mm run: its speed is a rate, not a
	time, as memset writes more with more threads."""
	return int(run['bytes']) / int(run['wall_ns'])


def by_threads(runs, value=lambda run: run):
	"""{thread count: [value(run), ...]}, runs in their order."""
	out = {}
	for r in runs:
		out.setdefault(int(r['threads']), []).append(value(r))
	return out


def unique(items):
	"""The distinct items in the order they first come: the tables keep
	the order in which the guest ran the jobs, loads and configurations."""
	return list(dict.fromkeys(items))
