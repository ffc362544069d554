//go:build amd64 && !purego

#include "textflag.h"

// AVX2+FMA micro-kernels; see micro_go.go for what each computes and
// micro_amd64.go for the preconditions. Strides are passed in elements and
// turned into bytes here. Rows 1 and 2 of a 4-row block are addressed as
// base+stride and base+2·stride; row 3 has its own pointer.

// func abt4x8AVX2(k int, ap, bt *float64, ldb, n int, y *float64, ldy int, dst *float64, ldd int, sub int) (ssq float64)
//
// For each 8-column chunk, Y0–Y7 hold the 4×8 tile (row r in Y(2r),
// Y(2r+1)); the inner loop adds the outer product of the packed A column c
// (four broadcasts) and the packed Bᵀ row c (two loads). Y12–Y15 collect
// the squares of the residual, one register per row.
TEXT ·abt4x8AVX2(SB), NOSPLIT, $0-88
	MOVQ k+0(FP), R8
	MOVQ ap+8(FP), SI
	MOVQ bt+16(FP), DI
	MOVQ ldb+24(FP), R9
	SHLQ $3, R9
	MOVQ n+32(FP), CX
	MOVQ y+40(FP), AX
	MOVQ ldy+48(FP), BX
	SHLQ $3, BX
	MOVQ dst+56(FP), DX
	MOVQ ldd+64(FP), R10
	SHLQ $3, R10
	LEAQ (AX)(BX*2), R12
	ADDQ BX, R12
	LEAQ (DX)(R10*2), R13
	ADDQ R10, R13
	VXORPD Y12, Y12, Y12
	VXORPD Y13, Y13, Y13
	VXORPD Y14, Y14, Y14
	VXORPD Y15, Y15, Y15

abtChunk:
	VXORPD Y0, Y0, Y0
	VXORPD Y1, Y1, Y1
	VXORPD Y2, Y2, Y2
	VXORPD Y3, Y3, Y3
	VXORPD Y4, Y4, Y4
	VXORPD Y5, Y5, Y5
	VXORPD Y6, Y6, Y6
	VXORPD Y7, Y7, Y7
	MOVQ SI, R11
	MOVQ DI, R14
	MOVQ R8, R15

abtInner:
	VMOVUPD      (R14), Y8
	VMOVUPD      32(R14), Y9
	VBROADCASTSD (R11), Y10
	VFMADD231PD  Y8, Y10, Y0
	VFMADD231PD  Y9, Y10, Y1
	VBROADCASTSD 8(R11), Y11
	VFMADD231PD  Y8, Y11, Y2
	VFMADD231PD  Y9, Y11, Y3
	VBROADCASTSD 16(R11), Y10
	VFMADD231PD  Y8, Y10, Y4
	VFMADD231PD  Y9, Y10, Y5
	VBROADCASTSD 24(R11), Y11
	VFMADD231PD  Y8, Y11, Y6
	VFMADD231PD  Y9, Y11, Y7
	ADDQ         $32, R11
	ADDQ         R9, R14
	DECQ         R15
	JNZ          abtInner

	CMPQ sub+72(FP), $0
	JEQ  abtStore

	// Residual y − tile, and its squares.
	VMOVUPD     (AX), Y8
	VMOVUPD     32(AX), Y9
	VSUBPD      Y0, Y8, Y0
	VSUBPD      Y1, Y9, Y1
	VFMADD231PD Y0, Y0, Y12
	VFMADD231PD Y1, Y1, Y12
	VMOVUPD     (AX)(BX*1), Y10
	VMOVUPD     32(AX)(BX*1), Y11
	VSUBPD      Y2, Y10, Y2
	VSUBPD      Y3, Y11, Y3
	VFMADD231PD Y2, Y2, Y13
	VFMADD231PD Y3, Y3, Y13
	VMOVUPD     (AX)(BX*2), Y8
	VMOVUPD     32(AX)(BX*2), Y9
	VSUBPD      Y4, Y8, Y4
	VSUBPD      Y5, Y9, Y5
	VFMADD231PD Y4, Y4, Y14
	VFMADD231PD Y5, Y5, Y14
	VMOVUPD     (R12), Y10
	VMOVUPD     32(R12), Y11
	VSUBPD      Y6, Y10, Y6
	VSUBPD      Y7, Y11, Y7
	VFMADD231PD Y6, Y6, Y15
	VFMADD231PD Y7, Y7, Y15

abtStore:
	VMOVUPD Y0, (DX)
	VMOVUPD Y1, 32(DX)
	VMOVUPD Y2, (DX)(R10*1)
	VMOVUPD Y3, 32(DX)(R10*1)
	VMOVUPD Y4, (DX)(R10*2)
	VMOVUPD Y5, 32(DX)(R10*2)
	VMOVUPD Y6, (R13)
	VMOVUPD Y7, 32(R13)
	ADDQ    $64, DI
	ADDQ    $64, AX
	ADDQ    $64, R12
	ADDQ    $64, DX
	ADDQ    $64, R13
	SUBQ    $8, CX
	JNZ     abtChunk

	VADDPD       Y13, Y12, Y12
	VADDPD       Y15, Y14, Y14
	VADDPD       Y14, Y12, Y12
	VEXTRACTF128 $1, Y12, X13
	VADDPD       X13, X12, X12
	VHADDPD      X12, X12, X12
	VMOVSD       X12, ssq+80(FP)
	VZEROUPPER
	RET

// HSUM stores the sum of the four lanes of Y (whose low half is X) at
// off(R9).
#define HSUM(Y, X, off) \
	VEXTRACTF128 $1, Y, X15; \
	VADDPD       X15, X, X; \
	VHADDPD      X, X, X; \
	VMOVSD       X, off(R9)

// func ax4AVX2(n int, a *float64, lda int, xt *float64, ldx, nb int, out *[16]float64)
//
// Dot products of the 4 rows of A with nb rows of Xᵀ over 4-column chunks:
// accumulator Y(3r+c) holds row r against column c; Y12–Y14 hold the Xᵀ
// chunk, Y15 the A chunk. The lanes are summed at the end.
TEXT ·ax4AVX2(SB), NOSPLIT, $0-56
	MOVQ   n+0(FP), DI
	MOVQ   a+8(FP), AX
	MOVQ   lda+16(FP), BX
	SHLQ   $3, BX
	LEAQ   (AX)(BX*2), R8
	ADDQ   BX, R8
	MOVQ   xt+24(FP), CX
	MOVQ   ldx+32(FP), DX
	SHLQ   $3, DX
	MOVQ   nb+40(FP), SI
	MOVQ   out+48(FP), R9
	VXORPD Y0, Y0, Y0
	VXORPD Y1, Y1, Y1
	VXORPD Y2, Y2, Y2
	VXORPD Y3, Y3, Y3
	VXORPD Y4, Y4, Y4
	VXORPD Y5, Y5, Y5
	VXORPD Y6, Y6, Y6
	VXORPD Y7, Y7, Y7
	VXORPD Y8, Y8, Y8
	VXORPD Y9, Y9, Y9
	VXORPD Y10, Y10, Y10
	VXORPD Y11, Y11, Y11
	CMPQ   SI, $2
	JEQ    axLoop2
	JLT    axLoop1

axLoop3:
	VMOVUPD     (CX), Y12
	VMOVUPD     (CX)(DX*1), Y13
	VMOVUPD     (CX)(DX*2), Y14
	VMOVUPD     (AX), Y15
	VFMADD231PD Y12, Y15, Y0
	VFMADD231PD Y13, Y15, Y1
	VFMADD231PD Y14, Y15, Y2
	VMOVUPD     (AX)(BX*1), Y15
	VFMADD231PD Y12, Y15, Y3
	VFMADD231PD Y13, Y15, Y4
	VFMADD231PD Y14, Y15, Y5
	VMOVUPD     (AX)(BX*2), Y15
	VFMADD231PD Y12, Y15, Y6
	VFMADD231PD Y13, Y15, Y7
	VFMADD231PD Y14, Y15, Y8
	VMOVUPD     (R8), Y15
	VFMADD231PD Y12, Y15, Y9
	VFMADD231PD Y13, Y15, Y10
	VFMADD231PD Y14, Y15, Y11
	ADDQ        $32, AX
	ADDQ        $32, R8
	ADDQ        $32, CX
	SUBQ        $4, DI
	JNZ         axLoop3
	JMP         axReduce

axLoop2:
	VMOVUPD     (CX), Y12
	VMOVUPD     (CX)(DX*1), Y13
	VMOVUPD     (AX), Y15
	VFMADD231PD Y12, Y15, Y0
	VFMADD231PD Y13, Y15, Y1
	VMOVUPD     (AX)(BX*1), Y15
	VFMADD231PD Y12, Y15, Y3
	VFMADD231PD Y13, Y15, Y4
	VMOVUPD     (AX)(BX*2), Y15
	VFMADD231PD Y12, Y15, Y6
	VFMADD231PD Y13, Y15, Y7
	VMOVUPD     (R8), Y15
	VFMADD231PD Y12, Y15, Y9
	VFMADD231PD Y13, Y15, Y10
	ADDQ        $32, AX
	ADDQ        $32, R8
	ADDQ        $32, CX
	SUBQ        $4, DI
	JNZ         axLoop2
	JMP         axReduce

axLoop1:
	VMOVUPD     (CX), Y12
	VFMADD231PD (AX), Y12, Y0
	VFMADD231PD (AX)(BX*1), Y12, Y3
	VFMADD231PD (AX)(BX*2), Y12, Y6
	VFMADD231PD (R8), Y12, Y9
	ADDQ        $32, AX
	ADDQ        $32, R8
	ADDQ        $32, CX
	SUBQ        $4, DI
	JNZ         axLoop1

axReduce:
	HSUM(Y0, X0, 0)
	HSUM(Y1, X1, 8)
	HSUM(Y2, X2, 16)
	HSUM(Y3, X3, 32)
	HSUM(Y4, X4, 40)
	HSUM(Y5, X5, 48)
	HSUM(Y6, X6, 64)
	HSUM(Y7, X7, 72)
	HSUM(Y8, X8, 80)
	HSUM(Y9, X9, 96)
	HSUM(Y10, X10, 104)
	HSUM(Y11, X11, 112)
	VZEROUPPER
	RET

// func aty4x8AVX2(n int, a *float64, lda int, yp *float64, l int, acct *float64, ldt int)
//
// For each 8-column chunk the 4×8 tile of A stays in Y0–Y7 while every row
// c of the accumulator is loaded (Y8, Y9), updated with the four broadcast
// weights yp[4c+r] and stored back.
TEXT ·aty4x8AVX2(SB), NOSPLIT, $0-56
	MOVQ n+0(FP), CX
	MOVQ a+8(FP), AX
	MOVQ lda+16(FP), BX
	SHLQ $3, BX
	LEAQ (AX)(BX*2), R8
	ADDQ BX, R8
	MOVQ yp+24(FP), SI
	MOVQ l+32(FP), R9
	MOVQ acct+40(FP), DI
	MOVQ ldt+48(FP), R10
	SHLQ $3, R10

atyChunk:
	VMOVUPD (AX), Y0
	VMOVUPD 32(AX), Y1
	VMOVUPD (AX)(BX*1), Y2
	VMOVUPD 32(AX)(BX*1), Y3
	VMOVUPD (AX)(BX*2), Y4
	VMOVUPD 32(AX)(BX*2), Y5
	VMOVUPD (R8), Y6
	VMOVUPD 32(R8), Y7
	MOVQ    SI, R11
	MOVQ    DI, R12
	MOVQ    R9, R13

atyInner:
	VMOVUPD      (R12), Y8
	VMOVUPD      32(R12), Y9
	VBROADCASTSD (R11), Y10
	VFMADD231PD  Y0, Y10, Y8
	VFMADD231PD  Y1, Y10, Y9
	VBROADCASTSD 8(R11), Y11
	VFMADD231PD  Y2, Y11, Y8
	VFMADD231PD  Y3, Y11, Y9
	VBROADCASTSD 16(R11), Y12
	VFMADD231PD  Y4, Y12, Y8
	VFMADD231PD  Y5, Y12, Y9
	VBROADCASTSD 24(R11), Y13
	VFMADD231PD  Y6, Y13, Y8
	VFMADD231PD  Y7, Y13, Y9
	VMOVUPD      Y8, (R12)
	VMOVUPD      Y9, 32(R12)
	ADDQ         $32, R11
	ADDQ         R10, R12
	DECQ         R13
	JNZ          atyInner

	ADDQ $64, AX
	ADDQ $64, R8
	ADDQ $64, DI
	SUBQ $8, CX
	JNZ  atyChunk
	VZEROUPPER
	RET
