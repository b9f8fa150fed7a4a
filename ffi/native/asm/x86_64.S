/*
 * doca-ts machine code, x86-64 System V. The bytes in ffi/native/machine-code.ts are assembled from this file by
 * `deno task machine-code` (scripts/machine-code.ts); tests/ffi-machine-code.test.ts re-assembles it and compares.
 * Position-independent: the ring's address is patched into the two movabs immediates at load time.
 */
	.intel_syntax noprefix
	.text

/*
 * Completion ring stubs (ffi/native/completion-ring.ts): DOCA's task completion callback
 *   void cb(void *task, union doca_data task_user_data, union doca_data ctx_user_data)
 * (task in rdi, task_user_data in rsi, ctx_user_data in rdx; rax, rcx, r8, r9 scratch) appends
 * (task, task_user_data, ctx_user_data, ok) to the ring: u64 count at [0], u64 capacity at [8], 32-byte entries
 * from [64]. count is incremented even when full (the drain detects an overflow); nothing is written past the end.
 * A success whose task user data has bit 40 set (a batch member, bits 20..29 its counter) is only counted: the u64
 * at [16] (all counters) and counter i at [0x41000 + 8 * i] are incremented, no entry is written.
 */
ring_ok:
	movabs rax, 0                   /* the ring's address, patched */
	.set ring_address_ok, . - 8         /* where the patch goes */
	bt rsi, 40
	jc counted
	mov ecx, 1
	jmp record
counted:
	mov r8, rsi
	shr r8, 20
	and r8d, 1023                   /* the counter */
	inc qword ptr [rax + 16]
	inc qword ptr [rax + r8 * 8 + 0x41000]
	ret
	.p2align 5
ring_error:
	movabs rax, 0                   /* the ring's address, patched */
	.set ring_address_error, . - 8
	xor ecx, ecx
record:
	mov r8, [rax]                   /* count */
	lea r9, [r8 + 1]
	mov [rax], r9                   /* count + 1, stored even when full */
	cmp r8, [rax + 8]               /* capacity */
	jae full
	shl r8, 5                       /* * 32 */
	add r8, rax
	mov [r8 + 64], rdi
	mov [r8 + 72], rsi
	mov [r8 + 80], rdx
	mov [r8 + 88], rcx
full:
	ret
ring_end:

/*
 * call_each (ffi/native/native-call.ts): one FFI call for many native calls.
 *   uint64_t call_each(void *fn, uint64_t n, const uint64_t *col0, const uint64_t *col1, const uint64_t *col2,
 *                      uint32_t result_mask)
 * calls fn(col0[i], col1[i], col2[i]) for i < n and stops at the first call whose (int result & mask) != 0;
 * returns how many calls passed. rbx, rbp, r12-r15 are saved; the mask lives in the stack slot that realigns rsp.
 */
call_each:
	push rbx
	push rbp
	push r12
	push r13
	push r14
	push r15
	sub rsp, 8
	mov [rsp], r9
	mov rbx, rdi
	mov rbp, rsi
	mov r12, rdx
	mov r13, rcx
	mov r14, r8
	xor r15d, r15d
each_loop:
	cmp r15, rbp
	jae each_done
	mov rdi, [r12 + r15 * 8]
	mov rsi, [r13 + r15 * 8]
	mov rdx, [r14 + r15 * 8]
	call rbx
	test [rsp], eax
	jne each_done
	inc r15
	jmp each_loop
each_done:
	mov rax, r15
	add rsp, 8
	pop r15
	pop r14
	pop r13
	pop r12
	pop rbp
	pop rbx
	ret

/*
 * int call_each_packed(const uint64_t args[7], const void *unused): call_each(args[0..5]) with its result stored
 * in args[6]; returns 0. A comparison function's shape, so that Deno reaches it through libc's
 * bsearch(args, args, 1, 1, call_each_packed) (see native-call.ts).
 */
call_each_packed:
	push rbx
	mov rbx, rdi
	mov rsi, [rbx + 8]
	mov rdx, [rbx + 16]
	mov rcx, [rbx + 24]
	mov r8, [rbx + 32]
	mov r9, [rbx + 40]
	mov rdi, [rbx]
	call call_each
	mov [rbx + 48], rax
	xor eax, eax
	pop rbx
	ret
call_each_end:
