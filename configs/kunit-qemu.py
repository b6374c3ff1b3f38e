# The QEMU machine of make test's KUnit runs (scripts/test.sh passes it
# to kunit.py as --qemu_config): kunit.py's own x86_64 machine
# (tools/testing/kunit/qemu_configs/x86_64.py), with the topology the
# suite needs, in the environment's KTASK_KUNIT_MACHINE:
#
#   numa  2 NUMA nodes of 2 vCPUs, 1 GiB each (the default): ktask's
#         per-node jobs, helpers bound to nodes
#   smt   one node of 2 cores of 2 SMT threads: the cases that count
#         one thread per core
#
# and the accelerator scripts/accel.sh probed, in KTASK_QEMU_ACCEL (KVM
# if the host has it, else TCG with a thread per vCPU).  no_timer_check,
# as scripts/boot.sh says: TCG on a loaded host fails the IO-APIC timer
# check now and then, and the boot panics.
import os

from ..qemu_config import QemuArchParams

MACHINES = {
	'numa': ['-smp', '4,sockets=2,cores=2,threads=1', '-m', '2048',
		 '-object', 'memory-backend-ram,id=m0,size=1G',
		 '-object', 'memory-backend-ram,id=m1,size=1G',
		 '-numa', 'node,nodeid=0,cpus=0-1,memdev=m0',
		 '-numa', 'node,nodeid=1,cpus=2-3,memdev=m1'],
	'smt': ['-smp', '4,sockets=1,cores=2,threads=2', '-m', '1024'],
}

QEMU_ARCH = QemuArchParams(linux_arch='x86_64',
			   kconfig='''
CONFIG_SERIAL_8250=y
CONFIG_SERIAL_8250_CONSOLE=y''',
			   qemu_arch='x86_64',
			   kernel_path='arch/x86/boot/bzImage',
			   kernel_command_line='console=ttyS0 no_timer_check',
			   extra_qemu_params=['-bios', 'qboot.rom'] +
			   MACHINES[os.environ.get('KTASK_KUNIT_MACHINE', 'numa')] +
			   os.environ.get('KTASK_QEMU_ACCEL', '-accel tcg').split())
