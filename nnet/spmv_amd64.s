//go:build !noasm && !gccgo && !safe

#include "textflag.h"

// func spmvAVX2(out *float32, n int, wt *float32, stride int, idx *int32, val *float32, k int)
//
// out[j] += val[t]·wt[idx[t]·stride + j] for t = 0..k-1 in turn and
// j = 0..n-1 (n a multiple of 8): every product is rounded (VMULPS)
// before it is added (VADDPS), in the order of t, as the portable axpy
// does, so the sums are the same bits. Blocks of 64 outputs stay in
// eight registers across all k inputs, then blocks of 8.
TEXT ·spmvAVX2(SB), NOSPLIT, $0-56
	MOVQ out+0(FP), DI
	MOVQ n+8(FP), CX
	MOVQ wt+16(FP), SI
	MOVQ stride+24(FP), R8
	SHLQ $2, R8
	MOVQ idx+32(FP), R9
	MOVQ val+40(FP), R10
	MOVQ k+48(FP), R11

block64:
	CMPQ CX, $64
	JL   block8
	VMOVUPS 0(DI), Y0
	VMOVUPS 32(DI), Y1
	VMOVUPS 64(DI), Y2
	VMOVUPS 96(DI), Y3
	VMOVUPS 128(DI), Y4
	VMOVUPS 160(DI), Y5
	VMOVUPS 192(DI), Y6
	VMOVUPS 224(DI), Y7
	XORQ AX, AX

loop64:
	CMPQ AX, R11
	JGE  store64
	MOVLQSX (R9)(AX*4), BX
	IMULQ   R8, BX
	ADDQ    SI, BX
	VBROADCASTSS (R10)(AX*4), Y15
	VMULPS 0(BX), Y15, Y8
	VMULPS 32(BX), Y15, Y9
	VMULPS 64(BX), Y15, Y10
	VMULPS 96(BX), Y15, Y11
	VADDPS Y8, Y0, Y0
	VADDPS Y9, Y1, Y1
	VADDPS Y10, Y2, Y2
	VADDPS Y11, Y3, Y3
	VMULPS 128(BX), Y15, Y12
	VMULPS 160(BX), Y15, Y13
	VMULPS 192(BX), Y15, Y14
	VMULPS 224(BX), Y15, Y8
	VADDPS Y12, Y4, Y4
	VADDPS Y13, Y5, Y5
	VADDPS Y14, Y6, Y6
	VADDPS Y8, Y7, Y7
	INCQ AX
	JMP  loop64

store64:
	VMOVUPS Y0, 0(DI)
	VMOVUPS Y1, 32(DI)
	VMOVUPS Y2, 64(DI)
	VMOVUPS Y3, 96(DI)
	VMOVUPS Y4, 128(DI)
	VMOVUPS Y5, 160(DI)
	VMOVUPS Y6, 192(DI)
	VMOVUPS Y7, 224(DI)
	ADDQ $256, DI
	ADDQ $256, SI
	SUBQ $64, CX
	JMP  block64

block8:
	CMPQ CX, $8
	JL   done
	VMOVUPS (DI), Y0
	XORQ AX, AX

loop8:
	CMPQ AX, R11
	JGE  store8
	MOVLQSX (R9)(AX*4), BX
	IMULQ   R8, BX
	ADDQ    SI, BX
	VBROADCASTSS (R10)(AX*4), Y15
	VMULPS (BX), Y15, Y8
	VADDPS Y8, Y0, Y0
	INCQ AX
	JMP  loop8

store8:
	VMOVUPS Y0, (DI)
	ADDQ $32, DI
	ADDQ $32, SI
	SUBQ $8, CX
	JMP  block8

done:
	VZEROUPPER
	RET

// func spmvAVX512(out *float32, n int, wt *float32, stride int, idx *int32, val *float32, k int)
//
// spmvAVX2 with 512-bit registers: n a multiple of 16, blocks of 128
// outputs in eight registers, then blocks of 16.
TEXT ·spmvAVX512(SB), NOSPLIT, $0-56
	MOVQ out+0(FP), DI
	MOVQ n+8(FP), CX
	MOVQ wt+16(FP), SI
	MOVQ stride+24(FP), R8
	SHLQ $2, R8
	MOVQ idx+32(FP), R9
	MOVQ val+40(FP), R10
	MOVQ k+48(FP), R11

zblock128:
	CMPQ CX, $128
	JL   zblock16
	VMOVUPS 0(DI), Z0
	VMOVUPS 64(DI), Z1
	VMOVUPS 128(DI), Z2
	VMOVUPS 192(DI), Z3
	VMOVUPS 256(DI), Z4
	VMOVUPS 320(DI), Z5
	VMOVUPS 384(DI), Z6
	VMOVUPS 448(DI), Z7
	XORQ AX, AX

zloop128:
	CMPQ AX, R11
	JGE  zstore128
	MOVLQSX (R9)(AX*4), BX
	IMULQ   R8, BX
	ADDQ    SI, BX
	VBROADCASTSS (R10)(AX*4), Z31
	VMULPS 0(BX), Z31, Z16
	VMULPS 64(BX), Z31, Z17
	VMULPS 128(BX), Z31, Z18
	VMULPS 192(BX), Z31, Z19
	VMULPS 256(BX), Z31, Z20
	VMULPS 320(BX), Z31, Z21
	VMULPS 384(BX), Z31, Z22
	VMULPS 448(BX), Z31, Z23
	VADDPS Z16, Z0, Z0
	VADDPS Z17, Z1, Z1
	VADDPS Z18, Z2, Z2
	VADDPS Z19, Z3, Z3
	VADDPS Z20, Z4, Z4
	VADDPS Z21, Z5, Z5
	VADDPS Z22, Z6, Z6
	VADDPS Z23, Z7, Z7
	INCQ AX
	JMP  zloop128

zstore128:
	VMOVUPS Z0, 0(DI)
	VMOVUPS Z1, 64(DI)
	VMOVUPS Z2, 128(DI)
	VMOVUPS Z3, 192(DI)
	VMOVUPS Z4, 256(DI)
	VMOVUPS Z5, 320(DI)
	VMOVUPS Z6, 384(DI)
	VMOVUPS Z7, 448(DI)
	ADDQ $512, DI
	ADDQ $512, SI
	SUBQ $128, CX
	JMP  zblock128

zblock16:
	CMPQ CX, $16
	JL   zdone
	VMOVUPS (DI), Z0
	XORQ AX, AX

zloop16:
	CMPQ AX, R11
	JGE  zstore16
	MOVLQSX (R9)(AX*4), BX
	IMULQ   R8, BX
	ADDQ    SI, BX
	VBROADCASTSS (R10)(AX*4), Z31
	VMULPS (BX), Z31, Z16
	VADDPS Z16, Z0, Z0
	INCQ AX
	JMP  zloop16

zstore16:
	VMOVUPS Z0, (DI)
	ADDQ $64, DI
	ADDQ $64, SI
	SUBQ $16, CX
	JMP  zblock16

zdone:
	VZEROUPPER
	RET
