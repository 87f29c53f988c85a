//go:build amd64 && !purego

#include "textflag.h"

// GROUP decodes the group of control byte i(SI) whose data start at AX
// into o(R8) and moves AX past its data: values 0 and 1 are shuffled out
// of the 16 bytes at AX (the low lane), values 2 and 3 out of the 16 at
// AX+off2 (the high lane), by the entry's two masks as one; the four are
// zig-zag decoded, (v>>1) ^ -(v&1), with Y5 four ones and Y6 zero.
#define GROUP(i, o) \
	MOVBQZX i(SI), CX; \
	SHLQ $6, CX; \
	MOVQ 32(R11)(CX*1), DX; \
	VMOVDQU (AX), X0; \
	VINSERTI128 $1, (AX)(DX*1), Y0, Y0; \
	VPSHUFB (R11)(CX*1), Y0, Y0; \
	VPSRLQ $1, Y0, Y1; \
	VPAND Y5, Y0, Y2; \
	VPSUBQ Y2, Y6, Y2; \
	VPXOR Y1, Y2, Y0; \
	VMOVDQU Y0, o(R8); \
	ADDQ 40(R11)(CX*1), AX

// func svbGroupsZZAVX2(cp, dp *byte, op *uint64, ng, lim uintptr, tab *[256]svbShuf) (p, n uintptr)
//
// Decodes the groups from cp while fewer than ng are done and the next
// starts at most lim bytes into dp: four a turn while four are left and
// the fourth starts within lim (a group moves at most 32 bytes), then
// one a turn. The caller (svbGroupsZZ) bounds every access.
TEXT ·svbGroupsZZAVX2(SB), NOSPLIT, $0-64
	MOVQ cp+0(FP), SI
	MOVQ dp+8(FP), DI
	MOVQ op+16(FP), R8
	MOVQ ng+24(FP), R9
	MOVQ lim+32(FP), R10
	MOVQ tab+40(FP), R11
	MOVQ DI, AX              // the next group's data
	ADDQ DI, R10             // the last start allowed
	ADDQ SI, R9              // the control bytes' end
	LEAQ -96(R10), R12       // the first of four groups' last start
	LEAQ -3(R9), R13         // four groups left while SI is below
	MOVQ $1, CX
	MOVQ CX, X5
	VPBROADCASTQ X5, Y5
	VPXOR Y6, Y6, Y6

loop4:
	CMPQ SI, R13
	JAE  loop1
	CMPQ AX, R12
	JA   loop1
	GROUP(0, 0)
	GROUP(1, 32)
	GROUP(2, 64)
	GROUP(3, 96)
	ADDQ $4, SI
	ADDQ $128, R8
	JMP  loop4

loop1:
	CMPQ SI, R9
	JAE  done
	CMPQ AX, R10
	JA   done
	GROUP(0, 0)
	INCQ SI
	ADDQ $32, R8
	JMP  loop1

done:
	VZEROUPPER
	SUBQ DI, AX
	MOVQ AX, p+48(FP)
	SUBQ cp+0(FP), SI
	MOVQ SI, n+56(FP)
	RET
