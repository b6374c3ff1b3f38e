/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Boot sector that scripts/accel.sh boots to learn whether KVM really runs
 * a guest on this machine.  Opening /dev/kvm proves little: on some nested
 * hosts KVM runs real-mode code but a kernel hangs in its decompressor.  So
 * this checks, in order, what a kernel needs before its first message:
 *
 *   - a timer interrupt arrives (the BIOS tick counter at 0x46c moves);
 *   - the CPU enters 64-bit long mode with paging;
 *   - 64 MiB of guest memory can be written;
 *   - an exception is delivered through the IDT (int3): the decompressor
 *     maps memory from its page fault handler.  This is the step that
 *     hangs where KVM is broken.
 *
 * Then it prints "accel-probe: long mode ok" on COM1 and ends QEMU through
 * the isa-debug-exit port 0xf4.  Build: gcc -c, ld -Ttext 0x7c00 --oformat
 * binary.  Run with at least 128 MiB of guest memory (QEMU's default).
 */
	.code16
	.globl	_start
_start:
	cli
	xor	%ax, %ax
	mov	%ax, %ds
	mov	%ax, %es
	mov	%ax, %ss
	mov	$0x7c00, %sp

	/* A timer interrupt must arrive: the BIOS ticks the dword at 0x46c. */
	mov	0x46c, %bx
	sti
0:	hlt
	cmp	0x46c, %bx
	je	0b
	cli

	/* PML4 at 0x1000 -> PDPT at 0x2000 -> PD at 0x3000. */
	mov	$0x1000, %di
	mov	$0x3000, %cx
	rep	stosb
	movl	$0x2003, 0x1000
	movl	$0x3003, 0x2000
	/* The PD identity-maps the first 1 GiB with 2 MiB pages. */
	mov	$0x3000, %di
	mov	$0x83, %eax
	mov	$512, %cx
0:	movl	%eax, (%di)
	add	$0x200000, %eax
	add	$8, %di
	loop	0b

	mov	%cr4, %eax
	or	$0x20, %eax		/* PAE */
	mov	%eax, %cr4
	mov	$0x1000, %eax
	mov	%eax, %cr3
	mov	$0xc0000080, %ecx	/* EFER */
	rdmsr
	or	$0x100, %eax		/* LME */
	wrmsr
	lgdtl	gdtr
	mov	%cr0, %eax
	or	$0x80000001, %eax	/* PG | PE */
	mov	%eax, %cr0
	ljmp	$0x08, $long_mode

	.code64
long_mode:
	/* Write one word in every 4 KiB page of 16..80 MiB. */
	mov	$0x1000000, %rdi
0:	movq	%rdi, (%rdi)
	add	$0x1000, %rdi
	cmp	$0x5000000, %rdi
	jb	0b

	/* Take an exception through the IDT and come back. */
	lidt	idtr
	int3

	lea	msg(%rip), %rsi
	mov	$0x3f8, %dx
0:	lodsb
	test	%al, %al
	jz	1f
	out	%al, %dx
	jmp	0b
1:	mov	$0xf4, %dx		/* isa-debug-exit: QEMU exits with 1 */
	xor	%al, %al
	out	%al, %dx
2:	hlt
	jmp	2b

breakpoint:
	iretq

msg:	.asciz	"accel-probe: long mode ok\n"

	.p2align 3
gdt:	.quad	0
	.quad	0x00209a0000000000	/* 0x08: 64-bit code */
gdtr:	.word	gdtr - gdt - 1
	.long	gdt

	.p2align 4
idt:	.fill	3 * 16, 1, 0		/* vectors 0-2: unused */
	.word	breakpoint, 0x08	/* vector 3 (#BP): interrupt gate */
	.byte	0, 0x8e
	.word	0
	.long	0, 0
idtr:	.word	idtr - idt - 1
	.quad	idt

	.org	510
	.word	0xaa55
