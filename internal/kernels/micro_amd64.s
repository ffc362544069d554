//go:build amd64 && !purego

#include "textflag.h"

// AVX2+FMA micro-kernels; see micro_go.go for what each
// computes and micro_amd64.go for the preconditions. Strides are passed in
// elements and turned into bytes here. Rows 1 and 2 of a 4-row block are
// addressed as base+stride and base+2·stride; row 3 has its own pointer.
// All loads and stores are unaligned ones.

// PFD is how far ahead (bytes) abt4x8AVX2 prefetches the rows of Y and
// dst it streams through; measured best at 5000×5000, k = 10 (one worker).
#define PFD 2048

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
	PREFETCHT0 PFD(AX)
	PREFETCHT0 PFD(AX)(BX*1)
	PREFETCHT0 PFD(AX)(BX*2)
	PREFETCHT0 PFD(R12)
	PREFETCHT0 PFD(DX)
	PREFETCHT0 PFD(DX)(R10*1)
	PREFETCHT0 PFD(DX)(R10*2)
	PREFETCHT0 PFD(R13)
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

// func axv4AVX2(n int, a *float64, lda int, xt *float64, ldx, k int, accv *float64, pf *float64)
//
// Dot products of the 4 rows of A with the k rows of Xᵀ over 4-column
// chunks, in blocks of three rows of Xᵀ (two when a block of one would be
// left; one only for k = 1). In a block of three, accumulator Y(3r+c) holds
// row r against column c, Y12–Y14 the chunk of Xᵀ and Y15 that of A. The
// accumulators live in accv[(4c+r)·8 + lane] (lanes 0–3) between blocks and
// calls; the caller sums the lanes once the whole row is done, so a panel
// can be fed tile by tile at little cost. When pf is not nil, every block
// loop also prefetches one cache line, walking the rows of stride lda from
// pf (the next tile) n columns at a time, so that the loads of the next
// tile spread over the whole call.
TEXT ·axv4AVX2(SB), NOSPLIT, $0-64
	MOVQ n+0(FP), R11
	MOVQ a+8(FP), R12
	MOVQ lda+16(FP), BX
	SHLQ $3, BX
	MOVQ xt+24(FP), CX
	MOVQ ldx+32(FP), DX
	SHLQ $3, DX
	MOVQ k+40(FP), SI
	MOVQ accv+48(FP), R9
	MOVQ pf+56(FP), R13
	XORQ R14, R14

axvBlock:
	CMPQ SI, $1
	JEQ  axvC1
	CMPQ SI, $2
	JEQ  axvC2
	CMPQ SI, $4
	JEQ  axvC2
	JMP  axvC3

axvC3:
	VMOVUPD 0(R9), Y0
	VMOVUPD 256(R9), Y1
	VMOVUPD 512(R9), Y2
	VMOVUPD 64(R9), Y3
	VMOVUPD 320(R9), Y4
	VMOVUPD 576(R9), Y5
	VMOVUPD 128(R9), Y6
	VMOVUPD 384(R9), Y7
	VMOVUPD 640(R9), Y8
	VMOVUPD 192(R9), Y9
	VMOVUPD 448(R9), Y10
	VMOVUPD 704(R9), Y11
	MOVQ R12, AX
	LEAQ (AX)(BX*2), R8
	ADDQ BX, R8
	MOVQ CX, R10
	MOVQ R11, DI
	TESTQ R13, R13
	JNZ   axvC3LoopPF

axvC3Loop:
	VMOVUPD (R10), Y12
	VMOVUPD (R10)(DX*1), Y13
	VMOVUPD (R10)(DX*2), Y14
	VMOVUPD (AX), Y15
	VFMADD231PD Y12, Y15, Y0
	VFMADD231PD Y13, Y15, Y1
	VFMADD231PD Y14, Y15, Y2
	VMOVUPD (AX)(BX*1), Y15
	VFMADD231PD Y12, Y15, Y3
	VFMADD231PD Y13, Y15, Y4
	VFMADD231PD Y14, Y15, Y5
	VMOVUPD (AX)(BX*2), Y15
	VFMADD231PD Y12, Y15, Y6
	VFMADD231PD Y13, Y15, Y7
	VFMADD231PD Y14, Y15, Y8
	VMOVUPD (R8), Y15
	VFMADD231PD Y12, Y15, Y9
	VFMADD231PD Y13, Y15, Y10
	VFMADD231PD Y14, Y15, Y11
	ADDQ $32, AX
	ADDQ $32, R8
	ADDQ $32, R10
	SUBQ $4, DI
	JNZ  axvC3Loop

axvC3Done:
	VMOVUPD Y0, 0(R9)
	VMOVUPD Y1, 256(R9)
	VMOVUPD Y2, 512(R9)
	VMOVUPD Y3, 64(R9)
	VMOVUPD Y4, 320(R9)
	VMOVUPD Y5, 576(R9)
	VMOVUPD Y6, 128(R9)
	VMOVUPD Y7, 384(R9)
	VMOVUPD Y8, 640(R9)
	VMOVUPD Y9, 192(R9)
	VMOVUPD Y10, 448(R9)
	VMOVUPD Y11, 704(R9)
	LEAQ (CX)(DX*2), CX
	ADDQ DX, CX
	ADDQ $768, R9
	SUBQ $3, SI
	JNZ  axvBlock
	VZEROUPPER
	RET

axvC3LoopPF:
	PREFETCHT0 (R13)(R14*8)
	ADDQ $8, R14
	CMPQ R14, R11
	JLT  axvC3PFRow
	XORQ R14, R14
	ADDQ BX, R13

axvC3PFRow:
	VMOVUPD (R10), Y12
	VMOVUPD (R10)(DX*1), Y13
	VMOVUPD (R10)(DX*2), Y14
	VMOVUPD (AX), Y15
	VFMADD231PD Y12, Y15, Y0
	VFMADD231PD Y13, Y15, Y1
	VFMADD231PD Y14, Y15, Y2
	VMOVUPD (AX)(BX*1), Y15
	VFMADD231PD Y12, Y15, Y3
	VFMADD231PD Y13, Y15, Y4
	VFMADD231PD Y14, Y15, Y5
	VMOVUPD (AX)(BX*2), Y15
	VFMADD231PD Y12, Y15, Y6
	VFMADD231PD Y13, Y15, Y7
	VFMADD231PD Y14, Y15, Y8
	VMOVUPD (R8), Y15
	VFMADD231PD Y12, Y15, Y9
	VFMADD231PD Y13, Y15, Y10
	VFMADD231PD Y14, Y15, Y11
	ADDQ $32, AX
	ADDQ $32, R8
	ADDQ $32, R10
	SUBQ $4, DI
	JNZ  axvC3LoopPF
	JMP axvC3Done

axvC2:
	VMOVUPD 0(R9), Y0
	VMOVUPD 256(R9), Y1
	VMOVUPD 64(R9), Y3
	VMOVUPD 320(R9), Y4
	VMOVUPD 128(R9), Y6
	VMOVUPD 384(R9), Y7
	VMOVUPD 192(R9), Y9
	VMOVUPD 448(R9), Y10
	MOVQ R12, AX
	LEAQ (AX)(BX*2), R8
	ADDQ BX, R8
	MOVQ CX, R10
	MOVQ R11, DI
	TESTQ R13, R13
	JNZ   axvC2LoopPF

axvC2Loop:
	VMOVUPD (R10), Y12
	VMOVUPD (R10)(DX*1), Y13
	VMOVUPD (AX), Y15
	VFMADD231PD Y12, Y15, Y0
	VFMADD231PD Y13, Y15, Y1
	VMOVUPD (AX)(BX*1), Y15
	VFMADD231PD Y12, Y15, Y3
	VFMADD231PD Y13, Y15, Y4
	VMOVUPD (AX)(BX*2), Y15
	VFMADD231PD Y12, Y15, Y6
	VFMADD231PD Y13, Y15, Y7
	VMOVUPD (R8), Y15
	VFMADD231PD Y12, Y15, Y9
	VFMADD231PD Y13, Y15, Y10
	ADDQ $32, AX
	ADDQ $32, R8
	ADDQ $32, R10
	SUBQ $4, DI
	JNZ  axvC2Loop

axvC2Done:
	VMOVUPD Y0, 0(R9)
	VMOVUPD Y1, 256(R9)
	VMOVUPD Y3, 64(R9)
	VMOVUPD Y4, 320(R9)
	VMOVUPD Y6, 128(R9)
	VMOVUPD Y7, 384(R9)
	VMOVUPD Y9, 192(R9)
	VMOVUPD Y10, 448(R9)
	LEAQ (CX)(DX*2), CX
	ADDQ $512, R9
	SUBQ $2, SI
	JNZ  axvBlock
	VZEROUPPER
	RET

axvC2LoopPF:
	PREFETCHT0 (R13)(R14*8)
	ADDQ $8, R14
	CMPQ R14, R11
	JLT  axvC2PFRow
	XORQ R14, R14
	ADDQ BX, R13

axvC2PFRow:
	VMOVUPD (R10), Y12
	VMOVUPD (R10)(DX*1), Y13
	VMOVUPD (AX), Y15
	VFMADD231PD Y12, Y15, Y0
	VFMADD231PD Y13, Y15, Y1
	VMOVUPD (AX)(BX*1), Y15
	VFMADD231PD Y12, Y15, Y3
	VFMADD231PD Y13, Y15, Y4
	VMOVUPD (AX)(BX*2), Y15
	VFMADD231PD Y12, Y15, Y6
	VFMADD231PD Y13, Y15, Y7
	VMOVUPD (R8), Y15
	VFMADD231PD Y12, Y15, Y9
	VFMADD231PD Y13, Y15, Y10
	ADDQ $32, AX
	ADDQ $32, R8
	ADDQ $32, R10
	SUBQ $4, DI
	JNZ  axvC2LoopPF
	JMP axvC2Done

axvC1:
	VMOVUPD 0(R9), Y0
	VMOVUPD 64(R9), Y3
	VMOVUPD 128(R9), Y6
	VMOVUPD 192(R9), Y9
	MOVQ R12, AX
	LEAQ (AX)(BX*2), R8
	ADDQ BX, R8
	MOVQ CX, R10
	MOVQ R11, DI
	TESTQ R13, R13
	JNZ   axvC1LoopPF

axvC1Loop:
	VMOVUPD (R10), Y12
	VFMADD231PD (AX), Y12, Y0
	VFMADD231PD (AX)(BX*1), Y12, Y3
	VFMADD231PD (AX)(BX*2), Y12, Y6
	VFMADD231PD (R8), Y12, Y9
	ADDQ $32, AX
	ADDQ $32, R8
	ADDQ $32, R10
	SUBQ $4, DI
	JNZ  axvC1Loop

axvC1Done:
	VMOVUPD Y0, 0(R9)
	VMOVUPD Y3, 64(R9)
	VMOVUPD Y6, 128(R9)
	VMOVUPD Y9, 192(R9)
	ADDQ DX, CX
	ADDQ $256, R9
	SUBQ $1, SI
	JNZ  axvBlock
	VZEROUPPER
	RET

axvC1LoopPF:
	PREFETCHT0 (R13)(R14*8)
	ADDQ $8, R14
	CMPQ R14, R11
	JLT  axvC1PFRow
	XORQ R14, R14
	ADDQ BX, R13

axvC1PFRow:
	VMOVUPD (R10), Y12
	VFMADD231PD (AX), Y12, Y0
	VFMADD231PD (AX)(BX*1), Y12, Y3
	VFMADD231PD (AX)(BX*2), Y12, Y6
	VFMADD231PD (R8), Y12, Y9
	ADDQ $32, AX
	ADDQ $32, R8
	ADDQ $32, R10
	SUBQ $4, DI
	JNZ  axvC1LoopPF
	JMP axvC1Done

// func aty4x8AVX2(n int, a *float64, lda int, yp *float64, l int, acct *float64, ldt int, pf *float64)
//
// For each 8-column chunk the 4×8 tile of A stays in Y0–Y7 while every row
// c of the accumulator is loaded (Y8, Y9), updated with the four broadcast
// weights yp[4c+r] and stored back. Meanwhile the chunk of the next tile
// (four rows of stride lda at pf) is prefetched.
TEXT ·aty4x8AVX2(SB), NOSPLIT, $0-64
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
	MOVQ pf+56(FP), R14
	LEAQ (R14)(BX*2), R15
	ADDQ BX, R15

atyChunk:
	PREFETCHT0 (R14)
	PREFETCHT0 (R14)(BX*1)
	PREFETCHT0 (R14)(BX*2)
	PREFETCHT0 (R15)
	ADDQ       $64, R14
	ADDQ       $64, R15
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

