"""The statistics that scripts/report.py's tables and scripts/plot.py's
plots both compute, in one place so that a speedup in a table and the same
speedup in its plot are one number, computed one way.

Reads and writes no file: these are functions of lists of runs, the result
dicts of scripts/results.py or the rows of build/report/results.csv (their
fields are strings either way), and of lists of numbers.  Medians, not
means: a boot's luck (a vCPU descheduled by the host) makes outliers.
"""

import random
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


def median_ci(values, resamples=2000):
	"""The median of values and a 95% bootstrap interval of it, (median,
	low, high): resampled with a fixed seed, so a report is the same
	each time it is made of the same runs."""
	draw = random.Random(0)
	medians = sorted(statistics.median(draw.choices(values, k=len(values)))
			 for _ in range(resamples))
	return (statistics.median(values), medians[int(0.025 * resamples)],
		medians[int(0.975 * resamples) - 1])


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
