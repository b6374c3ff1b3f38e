"""The busy table of scripts/report.py: ktask's real callers on a machine
with no CPU to spare (guest/busy_bench.c), where each must take no longer
and cost no more CPU time than on the unpatched kernel, whose code is
serial.

Benchmarks are named CALLER_LOAD: the load "busy" is a nice-0 CPU hog on
every vCPU, "late" the same hogs started once the call has a helper
(callers with helpers in the calling process only), "cpumax" a cgroup at
cpu.max 20% of one CPU.  For each, the
patched kernel at each thread count against the unpatched kernel: medians
and ranges of the wall and CPU times, their ratios, and the target (at
most 5% more of either, at the most threads) marked met or missed.  The
unpatched kernel runs its serial code at every thread count of the busy
table, in the same place in its boots as the patched kernel's count
(guest/busy_bench.c: busy_order()), and each count is compared with the
unpatched runs at that count; where it ran only 1 (mm_bench.c's rows),
with those.  Each patched row also has its ratios paired by round, the
median of the per-round ratios with a distribution-free 95% interval
(stats.median_ci()): whether the boots could tell a 5% difference at
all.  Its own rows at the other counts, against its 1, give the spread
of the same code run in another place, and each kernel's boots what else
the host ran meanwhile.  It reports and never judges, as report.py does.
"""

from stats import median, median_ci, ratio, spread

LOADS = ('busy', 'late', 'cpumax')
TARGET = 1.05


def busy_bench(name):
	"""Whether a ktask-mm: benchmark is one of the busy table's."""
	return name.rpartition('_')[2] in LOADS


TITLE = ['real callers on a busy machine (busy: a nice-0 hog on every vCPU; '
	 'late: the same hogs once the call has a helper, at once without one; '
	 'cpumax: in a cgroup at cpu.max 20%;',
	 '  wall and cpu vs unpatched = median / the unpatched median at the same thread count '
	 '(at 1 where it ran only 1); unpatched rows are its serial code at each count\'s place '
	 f'in the boot, against its 1; target <= {TARGET:.2f} for both;',
	 '  paired by round = the median of the per-round ratios of the patched boot to the '
	 'unpatched boot of its round, with a distribution-free 95% interval (6 rounds or more))']


def unpatched_base(group, threads):
	"""The unpatched runs a row at @threads is compared with: those at the
	same count, in the same place in their boots; at 1 where the unpatched
	kernel ran only 1 (and for its own rows)."""
	base = [r for r in group if r['label'] == 'unpatched']
	same = [r for r in base if int(r['threads']) == threads]
	return same if same else [r for r in base if int(r['threads']) == 1]


def median_ratio(runs, base, key):
	"""The median of @key over @runs divided by its median over @base."""
	return median([int(r[key]) for r in runs]) / median([int(r[key]) for r in base])


def paired_ratios(runs, base, key):
	"""Per round that both kernels booted, the median of @key over @runs'
	boot divided by that over @base's boot of the same round
	(results.boot_round()); [] if a run has no round.  make run boots the
	kernels in turn, a round minutes apart on the same host: a ratio per
	round cancels what drifts between rounds and runs (the host's other
	work, the first boots' extra QEMU time), which a ratio of medians over
	all boots keeps."""
	def per_round(sel):
		rounds = {}
		for r in sel:
			rounds.setdefault(r.get('round'), []).append(int(r[key]))
		return {k: median(v) for k, v in rounds.items()}
	num, den = per_round(runs), per_round(base)
	if None in num or None in den:
		return []
	return [num[k] / den[k] for k in sorted(num) if k in den]


def paired_cis(runs, base):
	"""The rounds paired, and [(median, low, high)] of the wall and then
	the CPU time ratios paired by round, median_ci()'s; no intervals with
	fewer than 2 rounds."""
	ratios = [paired_ratios(runs, base, key) for key in ('wall_ns', 'cpu_ns')]
	rounds = len(ratios[0])
	return rounds, [median_ci(r) for r in ratios] if rounds >= 2 else []


def ci_text(ci):
	"""'median (low-high)', or 'median (n<6)' with too few rounds for an
	interval."""
	med, low, high = ci
	if low is None:
		return f'{med:.2f} (n<6)'
	return f'{med:.2f} ({low:.2f}-{high:.2f})'


def paired(runs, base):
	"""The table's column: 'wall, cpu' paired by round, each 'median
	(95% interval)'; '-' with fewer than 2 rounds."""
	return ', '.join(ci_text(ci) for ci in paired_cis(runs, base)[1]) or '-'


def paired_target(runs, base):
	"""The target line's end: the ratios paired by round, and whether
	the top of both intervals shows the target met; '' with fewer than
	2 rounds."""
	rounds, cis = paired_cis(runs, base)
	if not cis:
		return ''
	if any(low is None for _, low, _ in cis):
		shown = 'not resolved (an interval needs 6 rounds)'
	elif max(high for _, _, high in cis) <= TARGET:
		shown = 'shown at 95%'
	else:
		shown = 'not shown at 95%'
	return (f'; paired by round over {rounds} rounds: '
		f'wall {ci_text(cis[0])}, cpu {ci_text(cis[1])}, target {shown}')


def host_lines(runs):
	"""Per kernel, what else the host ran during its boots (scripts/boot.sh:
	boot_host_line), which under TCG slows every guest instruction, the
	more so when it lands in one kernel's boots."""
	lines = []
	for label in ('patched', 'unpatched'):
		boots = {r['boot']: r for r in runs
			 if r['label'] == label and r.get('host_other_cpu_ms')}
		if not boots:
			continue
		other = sorted(int(r['host_other_cpu_ms']) for r in boots.values())
		steal = [int(r.get('host_steal_ms') or 0) for r in boots.values()]
		length = median([int(r.get('boot_s') or 0) for r in boots.values()])
		qemu = sorted((int(r.get('qemu_cpu_ms') or 0), int(r.get('qemu_sys_ms') or 0))
			      for r in boots.values())
		lines.append(f'  host CPU time not QEMU\'s during the {len(boots)} {label} boots of '
			     f'median {length:.0f} s (other processes, host kernel threads, '
			     f'interrupts; tick-sampled): median {median(other) / 1000:.1f} s, '
			     f'most {other[-1] / 1000:.1f} s; steal most {max(steal) / 1000:.1f} s; '
			     f'QEMU\'s own most {qemu[-1][0] / 1000:.1f} s ({qemu[-1][1] / 1000:.1f} s '
			     f'in the host kernel), least {qemu[0][0] / 1000:.1f} s '
			     f'({qemu[0][1] / 1000:.1f} s)')
	return lines


def busy_rows(runs):
	"""The busy table's rows (a header first) and its target lines, from
	the mm runs; no rows if none is a busy one."""
	runs = [r for r in runs if busy_bench(r['bench']) and 'cpu_ns' in r]
	if not runs:
		return [], []
	rows = [('bench', 'kernel', 'threads', 'runs', 'wall ms median (min-max)',
		 'cpu ms median (min-max)', 'wall vs unpatched', 'cpu vs unpatched', 'used',
		 'wall, cpu paired by round (95%)')]
	targets = []
	for bench in dict.fromkeys(r['bench'] for r in runs):
		group = [r for r in runs if r['bench'] == bench]
		configs = sorted({(r['label'], int(r['threads'])) for r in group},
				 key=lambda k: (k[0] != 'unpatched', k[1]))
		for label, threads in configs:
			sel = [r for r in group if (r['label'], int(r['threads'])) == (label, threads)]
			wall = [int(r['wall_ns']) for r in sel]
			cpu = [int(r['cpu_ns']) for r in sel]
			base = unpatched_base(group, 1 if label == 'unpatched' else threads)
			base_wall = [int(r['wall_ns']) for r in base]
			base_cpu = [int(r['cpu_ns']) for r in base]
			rows.append((bench, label, str(threads), str(len(sel)), spread(wall, 1e6),
				     spread(cpu, 1e6), ratio(wall, base_wall), ratio(cpu, base_cpu),
				     ','.join(sorted({r.get('used', '?') for r in sel})),
				     paired(sel, base) if label == 'patched' else '-'))
		top = max((t for l, t in configs if l == 'patched'), default=0)
		sel = [r for r in group if r['label'] == 'patched' and int(r['threads']) == top]
		base = unpatched_base(group, top)
		if top > 1 and sel and base:
			wall = median_ratio(sel, base, 'wall_ns')
			cpu = median_ratio(sel, base, 'cpu_ns')
			met = wall <= TARGET and cpu <= TARGET
			targets.append(f'  {bench} at {top} threads: wall {wall:.2f}, cpu {cpu:.2f} '
				       f'of unpatched ({"met" if met else "missed"})'
				       f'{paired_target(sel, base)}')
		same = [r for r in group if r['label'] == 'unpatched' and int(r['threads']) == top]
		one = unpatched_base(group, 1)
		if top > 1 and same and one:
			wall = median_ratio(same, one, 'wall_ns')
			cpu = median_ratio(same, one, 'cpu_ns')
			targets.append(f'  {bench}, the same serial code (unpatched) in the place of {top} threads '
				       f'against that of 1: wall {wall:.2f}, cpu {cpu:.2f}')
	return rows, targets + host_lines(runs)
