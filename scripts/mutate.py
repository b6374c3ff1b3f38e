#!/usr/bin/env python3
"""Mutation testing of kernel/ktask.c against the KUnit suite.

Puts each mutation of scripts/ktask_mutants.py into build/linux's
kernel/ktask.c in turn, builds make test's debug KUnit kernel
(build/kunit, CONFIG_PREEMPT=y) and boots the suite on the NUMA machine,
as make test's first KUnit stage does, then puts the file back.  A
mutation the suite passes is booted again as make test boots the same
kernel for the cases that skip on the NUMA machine (scripts/kunit-boots:
the lockdep case three times, the SMT cases, the isolated-CPU cases).
Each boot is judged as make test judges it: its cases, then its console
(scripts/splat.py: no kernel report, or the one the table names); not
the boots' preemption models, and an oops ends a boot at once
(panic_on_oops=1), a hang in 2 minutes.  What survives them all is a
rule no KUnit case checks; the in-guest tests may still check it: where
to look, not a verdict.

Usage: scripts/mutate.py [INDEX...] [--glob 'ktask.ktask_test_*']
(--glob: only those cases, and only in the NUMA boot.)  Prints one line
per mutation (KILLED, SURVIVED, NOBUILD or NOBOOT, the boot that killed
it and the cases that failed, or that skipped in a boot made for them)
and writes them to build/mutate.log.  About 70 s per mutation once
build/kunit is built (make test builds it), 55 s more for a survivor.
Run nothing else that boots a kernel meanwhile; builds of the harness
wait for it (build/.kbuild.lock).
"""

import fcntl
import os
import re
import signal
import subprocess
import sys

TOP = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(TOP, 'scripts'))
from ktask_mutants import MUTANTS, stale  # noqa: E402
from kunit_boots import boots as kunit_boots_table, run_elsewhere  # noqa: E402

TREE = os.path.join(TOP, 'build', 'linux')
SOURCE = os.path.join(TREE, 'kernel', 'ktask.c')
LOG = os.path.join(TOP, 'build', 'mutate.log')


def die(msg):
    sys.exit('error: ' + msg)


def kunit_boots():
    """make test's boots of build/kunit: the suite's own, then those of
    scripts/kunit-boots (read by scripts/kunit_boots.py), each as name,
    machine (configs/kunit-qemu.py), case glob, kernel arguments, which
    cases may skip (a function of the case's name), and the console's one
    expected report, or 'clean'.  In the suite's boot only the cases a
    boot of the table runs may skip (check_kunit_skips in test.sh)."""
    try:
        rows = kunit_boots_table()
    except (OSError, ValueError) as e:
        die('scripts/kunit-boots: %s' % e)
    suite = [('numa', 'numa', None, [],
              lambda case: run_elsewhere('ktask.' + case, rows), 'clean')]
    return suite + [(name, machine, cases, args,
                     (lambda case: False) if ran == 'must' else
                     (lambda case: True), console)
                    for name, machine, ran, console, cases, args in rows]


# The suite's boot, as make test's first (scripts/test.sh) builds and
# boots it (kunit.py run), then the boots of scripts/kunit-boots (exec) for
# a survivor.
BOOTS = kunit_boots()


def kunit_command(action, glob, kernel_args):
    cfg = os.path.join(TOP, 'configs')
    cmd = ['python3', '-u', 'tools/testing/kunit/kunit.py', action,
           '--qemu_config=' + os.path.join(cfg, 'kunit-qemu.py'),
           '--build_dir=' + os.path.join(TOP, 'build', 'kunit'),
           '--make_options', 'CC=ccache gcc',
           '--kunitconfig=lib/test_ktask.kunitconfig',
           '--kunitconfig=' + os.path.join(cfg, 'guest.config'),
           '--kunitconfig=' + os.path.join(cfg, 'kunit-qemu.config'),
           '--kunitconfig=' + os.path.join(cfg, 'debug.config'),
           # An oops ends the boot at once (QEMU runs with -no-reboot),
           # and a hang in 2 minutes: a whole run takes about 20 s.
           '--kernel_args', 'panic_on_oops=1', '--timeout', '120']
    for arg in kernel_args:
        cmd += ['--kernel_args', arg]
    return cmd + ([glob] if glob else [])


CONSOLE = os.path.join(TOP, 'build', 'kunit', 'test.log')


def console_verdict(console):
    """KILLED by the console of the last boot, as make test's check of it
    (scripts/splat.py) would fail, or SURVIVED."""
    cmd = ['python3', os.path.join(TOP, 'scripts', 'splat.py')]
    if console != 'clean':
        cmd += ['--expect', console]
    out = subprocess.run(cmd + [CONSOLE], stdout=subprocess.PIPE,
                         stderr=subprocess.STDOUT, text=True,
                         errors='replace')
    lines = out.stdout.strip().splitlines() or ['exit %d' % out.returncode]
    if out.returncode == 1:
        # The first report (or "no report matches"), and the summary.
        heads = [line for line in lines
                 if not line.startswith('    |') and '(expected)' not in line]
        return 'KILLED', ['(console: %s)' % '; '.join(
            dict.fromkeys(heads[:1] + lines[-1:]))]
    if out.returncode:
        die('scripts/splat.py on %s: %s' % (CONSOLE, lines[-1]))
    return 'SURVIVED', []


def run_boot(action, machine, glob, kernel_args, may_skip, console, env):
    """One boot's verdict on the tree as it is, and the failed cases."""
    env = dict(env, KTASK_KUNIT_MACHINE=machine)
    # No console of an earlier boot to judge this one by.
    if os.path.exists(CONSOLE):
        os.unlink(CONSOLE)
    # The machine's lock too (hold_machine()): a QEMU left running holds
    # the machine, as under make test.
    out = subprocess.run(kunit_command(action, glob, kernel_args),
                         cwd=TREE, env=env, stdout=subprocess.PIPE,
                         stderr=subprocess.STDOUT, text=True,
                         errors='replace', pass_fds=(8,)).stdout
    out = re.sub(r'\x1b\[[0-9;]*m', '', out)
    if 'Starting KUnit Kernel' not in out:
        return ('NOBUILD', []) if action == 'run' else \
            ('NOBOOT', out.strip().splitlines()[-1:])
    failed = sorted(set(re.findall(r'\[FAILED\] (ktask_test_\w+)', out)))
    if failed or 'Testing complete' not in out or \
            re.search(r'failed: [1-9]|crashed: [1-9]', out):
        return 'KILLED', failed or ['(crash or time limit)']
    skipped = [case for case in
               re.findall(r'\[SKIPPED\] (ktask_test_\w+)', out)
               if not may_skip(case)]
    if skipped:
        return 'KILLED', ['(skipped)'] + skipped
    if not re.search(r'\[(PASSED|SKIPPED)\] ktask_test_', out):
        return 'KILLED', ['(no case ran)']
    return console_verdict(console)


def run_suite(glob, env):
    """The verdict of the first boot that kills the mutation, or of all."""
    for i, (name, machine, boot_glob, kernel_args, may_skip, console) in \
            enumerate(BOOTS):
        if i and glob:
            break   # the cases asked for, on the NUMA machine only
        verdict, failed = run_boot('exec' if i else 'run', machine,
                                   glob or boot_glob, kernel_args, may_skip,
                                   console, env)
        if verdict != 'SURVIVED':
            return verdict, ['(%s)' % name] + failed
    return 'SURVIVED', []


def parse_args(argv):
    glob, picks = None, []
    while argv:
        arg = argv.pop(0)
        if arg == '--glob' and argv:
            glob = argv.pop(0)
        elif arg.isdigit() and int(arg) < len(MUTANTS):
            picks.append(int(arg))
        else:
            die('usage: scripts/mutate.py [INDEX...] [--glob GLOB]; '
                'INDEX below %d' % len(MUTANTS))
    return picks or list(range(len(MUTANTS))), glob


def hold_machine():
    """Go on under lib.sh's machine_lock, as make test and make run do:
    a mutation's KUnit boots beside theirs would time out.  Re-runs this
    script under it, once: machine_lock leaves the lock on descriptor 8
    and its file in KTASK_MACHINE_LOCKED."""
    lock = os.environ.get('KTASK_MACHINE_LOCKED')
    try:
        if lock and os.path.samestat(os.fstat(8), os.stat(lock)):
            fcntl.flock(8, fcntl.LOCK_EX | fcntl.LOCK_NB)
            return
    except OSError:
        pass
    me = os.path.abspath(__file__)
    os.execvp('sh', ['sh', '-c', '. "${0%/*}/lib.sh" && machine_lock "make mutate" '
                     '&& exec python3 "$0" "$@"', me] + sys.argv[1:])


def main():
    picks, glob = parse_args(sys.argv[1:])
    hold_machine()
    if subprocess.run(['git', 'diff', '--quiet', 'HEAD', '--',
                       'kernel/ktask.c'], cwd=TREE).returncode:
        die('build/linux has changes in kernel/ktask.c: commit them first')
    # The tree is changed while this runs: hold off every other build
    # of the harness (lib.sh: locked).
    lock = open(os.path.join(TOP, 'build', '.kbuild.lock'), 'a')
    fcntl.flock(lock, fcntl.LOCK_EX)
    original = open(SOURCE).read()
    env = dict(os.environ, CCACHE_BASEDIR=TOP,
               KTASK_QEMU_ACCEL=subprocess.run(
                   [os.path.join(TOP, 'scripts', 'accel.sh')],
                   stdout=subprocess.PIPE, text=True).stdout.strip())
    # A stop by a signal puts the file back too.
    signal.signal(signal.SIGTERM, lambda *_: sys.exit('stopped'))
    counts = {}
    gone = {i for i, _, _ in stale(original)}
    with open(LOG, 'w') as log:
        for i in picks:
            name, text, replacement = MUTANTS[i]
            if i in gone:
                verdict, failed = 'STALE', ['the text is not in the file once']
            else:
                try:
                    with open(SOURCE, 'w') as f:
                        f.write(original.replace(text, replacement))
                    verdict, failed = run_suite(glob, env)
                finally:
                    with open(SOURCE, 'w') as f:
                        f.write(original)
            counts[verdict] = counts.get(verdict, 0) + 1
            line = '%2d %-8s %s: %s' % (i, verdict, name, ' '.join(failed))
            print(line, flush=True)
            log.write(line + '\n')
    print(', '.join('%d %s' % (n, v) for v, n in sorted(counts.items())))


if __name__ == '__main__':
    main()
