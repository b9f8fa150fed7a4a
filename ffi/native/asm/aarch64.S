/*
 * doca-ts machine code, aarch64 AAPCS64. The bytes in ffi/native/machine-code.ts are assembled from this file by
 * `deno task machine-code` (scripts/machine-code.ts); tests/ffi-machine-code.test.ts re-assembles it and compares.
 * Position-independent: the ring's address is patched into the literal at ring_address.
 */
	.text

/*
 * Completion ring stubs (ffi/native/completion-ring.ts): task in x0, task_user_data in x1, ctx_user_data in x2 (x3,
 * x9-x12 scratch) appended with ok to the ring, or a counted success (bit 40 of x1) only counted (see x86_64.S for
 * the layout).
 */
ring_ok:
	tbnz x1, #40, counted
	mov x3, #1
	b record
counted:
	ldr x9, ring_address
	ldr x10, [x9, #16]              // all counters
	add x10, x10, #1
	str x10, [x9, #16]
	ubfx x10, x1, #20, #10          // the counter
	add x9, x9, #0x41, lsl #12      // counters at 0x41000
	ldr x11, [x9, x10, lsl #3]
	add x11, x11, #1
	str x11, [x9, x10, lsl #3]
	ret
ring_error:
	mov x3, #0
record:
	ldr x9, ring_address            // PC-relative literal
	ldr x10, [x9]                   // count
	add x11, x10, #1
	str x11, [x9]                   // count + 1, stored even when full
	ldr x12, [x9, #8]               // capacity
	cmp x10, x12
	b.hs full
	add x10, x9, x10, lsl #5
	stp x0, x1, [x10, #64]
	stp x2, x3, [x10, #80]
full:
	ret
	.p2align 3
ring_address:
	.quad 0                         // the ring's address, patched
ring_end:

/*
 * call_each (ffi/native/native-call.ts): see x86_64.S for the contract. x19-x25 saved in an 80-byte frame with x29/x30.
 */
call_each:
	stp x29, x30, [sp, #-80]!
	mov x29, sp
	stp x19, x20, [sp, #16]
	stp x21, x22, [sp, #32]
	stp x23, x24, [sp, #48]
	str x25, [sp, #64]
	mov x19, x0
	mov x20, x1
	mov x21, x2
	mov x22, x3
	mov x23, x4
	mov x25, x5
	mov x24, #0
each_loop:
	cmp x24, x20
	b.hs each_done
	ldr x0, [x21, x24, lsl #3]
	ldr x1, [x22, x24, lsl #3]
	ldr x2, [x23, x24, lsl #3]
	blr x19
	tst w0, w25
	b.ne each_done
	add x24, x24, #1
	b each_loop
each_done:
	mov x0, x24
	ldr x25, [sp, #64]
	ldp x23, x24, [sp, #48]
	ldp x21, x22, [sp, #32]
	ldp x19, x20, [sp, #16]
	ldp x29, x30, [sp], #80
	ret

/* int call_each_packed(const uint64_t args[7], const void *unused): see x86_64.S. */
call_each_packed:
	stp x29, x30, [sp, #-32]!
	mov x29, sp
	str x19, [sp, #16]
	mov x19, x0
	ldp x0, x1, [x19]
	ldp x2, x3, [x19, #16]
	ldp x4, x5, [x19, #32]
	bl call_each
	str x0, [x19, #48]
	mov w0, #0
	ldr x19, [sp, #16]
	ldp x29, x30, [sp], #32
	ret
call_each_end:
