//go:build amd64 && !purego

#include "textflag.h"

// AVX2 versions of colScanGo and rowScanGo (see scan.go). Magnitude bits
// are formed by clearing the sign bit (VPAND with 0x7fff…); they and all
// bounds are below 2⁶³, so the signed VPCMPGTQ orders them correctly.
// Lists are appended to by storing the four possible int32 indices of a
// step, compressed with compressLUT, and advancing by the popcount of the
// mask: up to 3 slots past the end are written (callers leave scanPad).

// compressLUT[m] lists the set bits of the 4-bit mask m in increasing
// order (unused lanes 0), as four int32.
DATA compressLUT<>+0(SB)/4, $0
DATA compressLUT<>+4(SB)/4, $0
DATA compressLUT<>+8(SB)/4, $0
DATA compressLUT<>+12(SB)/4, $0
DATA compressLUT<>+16(SB)/4, $0
DATA compressLUT<>+20(SB)/4, $0
DATA compressLUT<>+24(SB)/4, $0
DATA compressLUT<>+28(SB)/4, $0
DATA compressLUT<>+32(SB)/4, $1
DATA compressLUT<>+36(SB)/4, $0
DATA compressLUT<>+40(SB)/4, $0
DATA compressLUT<>+44(SB)/4, $0
DATA compressLUT<>+48(SB)/4, $0
DATA compressLUT<>+52(SB)/4, $1
DATA compressLUT<>+56(SB)/4, $0
DATA compressLUT<>+60(SB)/4, $0
DATA compressLUT<>+64(SB)/4, $2
DATA compressLUT<>+68(SB)/4, $0
DATA compressLUT<>+72(SB)/4, $0
DATA compressLUT<>+76(SB)/4, $0
DATA compressLUT<>+80(SB)/4, $0
DATA compressLUT<>+84(SB)/4, $2
DATA compressLUT<>+88(SB)/4, $0
DATA compressLUT<>+92(SB)/4, $0
DATA compressLUT<>+96(SB)/4, $1
DATA compressLUT<>+100(SB)/4, $2
DATA compressLUT<>+104(SB)/4, $0
DATA compressLUT<>+108(SB)/4, $0
DATA compressLUT<>+112(SB)/4, $0
DATA compressLUT<>+116(SB)/4, $1
DATA compressLUT<>+120(SB)/4, $2
DATA compressLUT<>+124(SB)/4, $0
DATA compressLUT<>+128(SB)/4, $3
DATA compressLUT<>+132(SB)/4, $0
DATA compressLUT<>+136(SB)/4, $0
DATA compressLUT<>+140(SB)/4, $0
DATA compressLUT<>+144(SB)/4, $0
DATA compressLUT<>+148(SB)/4, $3
DATA compressLUT<>+152(SB)/4, $0
DATA compressLUT<>+156(SB)/4, $0
DATA compressLUT<>+160(SB)/4, $1
DATA compressLUT<>+164(SB)/4, $3
DATA compressLUT<>+168(SB)/4, $0
DATA compressLUT<>+172(SB)/4, $0
DATA compressLUT<>+176(SB)/4, $0
DATA compressLUT<>+180(SB)/4, $1
DATA compressLUT<>+184(SB)/4, $3
DATA compressLUT<>+188(SB)/4, $0
DATA compressLUT<>+192(SB)/4, $2
DATA compressLUT<>+196(SB)/4, $3
DATA compressLUT<>+200(SB)/4, $0
DATA compressLUT<>+204(SB)/4, $0
DATA compressLUT<>+208(SB)/4, $0
DATA compressLUT<>+212(SB)/4, $2
DATA compressLUT<>+216(SB)/4, $3
DATA compressLUT<>+220(SB)/4, $0
DATA compressLUT<>+224(SB)/4, $1
DATA compressLUT<>+228(SB)/4, $2
DATA compressLUT<>+232(SB)/4, $3
DATA compressLUT<>+236(SB)/4, $0
DATA compressLUT<>+240(SB)/4, $0
DATA compressLUT<>+244(SB)/4, $1
DATA compressLUT<>+248(SB)/4, $2
DATA compressLUT<>+252(SB)/4, $3
GLOBL compressLUT<>(SB), RODATA|NOPTR, $256

// func colScanAVX2(x *float64, n int, lo, hi *uint64, above *int64, cc *int32) (nc int)
TEXT ·colScanAVX2(SB), NOSPLIT, $0-56
	MOVQ x+0(FP), SI
	MOVQ n+8(FP), CX
	MOVQ lo+16(FP), R10
	MOVQ hi+24(FP), R11
	MOVQ above+32(FP), R12
	MOVQ cc+40(FP), DI
	LEAQ compressLUT<>(SB), R13
	XORQ AX, AX                  // j
	XORQ DX, DX                  // nc
	VPCMPEQQ Y15, Y15, Y15
	VPSRLQ $1, Y15, Y15          // 0x7fff… in each lane
	VPXOR X14, X14, X14          // j in each int32 lane
	MOVL $4, R8
	VMOVD R8, X13
	VPBROADCASTD X13, X13        // 4 in each int32 lane

colLoop:
	VPAND (SI)(AX*8), Y15, Y0    // u
	VPCMPGTQ (R11)(AX*8), Y0, Y2 // u > hi
	VMOVDQU (R12)(AX*8), Y3
	VPSUBQ Y2, Y3, Y3            // above -= -1
	VMOVDQU Y3, (R12)(AX*8)
	VMOVDQU (R10)(AX*8), Y4
	VPCMPGTQ Y0, Y4, Y5          // lo > u
	VPOR Y5, Y2, Y5              // outside the bracket
	VMOVMSKPD Y5, R8
	XORQ $15, R8                 // inside
	MOVQ R8, R9
	SHLQ $4, R9
	VPADDD (R13)(R9*1), X14, X6
	VMOVDQU X6, (DI)(DX*4)
	POPCNTQ R8, R8
	ADDQ R8, DX
	VPADDD X13, X14, X14
	ADDQ $4, AX
	CMPQ AX, CX
	JLT colLoop

	VZEROUPPER
	MOVQ DX, nc+48(FP)
	RET

// func rowScanAVX2(x *float64, n int, lo, hi uint64, ge *int32) (ng, na int)
TEXT ·rowScanAVX2(SB), NOSPLIT, $0-56
	MOVQ x+0(FP), SI
	MOVQ n+8(FP), CX
	VPBROADCASTQ lo+16(FP), Y13
	VPBROADCASTQ hi+24(FP), Y12
	MOVQ ge+32(FP), DI
	LEAQ compressLUT<>(SB), R13
	XORQ AX, AX                  // j
	XORQ DX, DX                  // ng
	XORQ BX, BX                  // na
	VPCMPEQQ Y15, Y15, Y15
	VPSRLQ $1, Y15, Y15
	VPXOR X14, X14, X14
	MOVL $4, R8
	VMOVD R8, X11
	VPBROADCASTD X11, X11

rowLoop:
	VPAND (SI)(AX*8), Y15, Y0    // u
	VPCMPGTQ Y0, Y13, Y1         // lo > u
	VPCMPGTQ Y12, Y0, Y2         // u > hi
	VMOVMSKPD Y1, R8
	XORQ $15, R8                 // u ≥ lo
	VMOVMSKPD Y2, R9
	POPCNTQ R9, R9
	ADDQ R9, BX
	MOVQ R8, R10
	SHLQ $4, R10
	VPADDD (R13)(R10*1), X14, X6
	VMOVDQU X6, (DI)(DX*4)
	POPCNTQ R8, R8
	ADDQ R8, DX
	VPADDD X11, X14, X14
	ADDQ $4, AX
	CMPQ AX, CX
	JLT rowLoop

	VZEROUPPER
	MOVQ DX, ng+40(FP)
	MOVQ BX, na+48(FP)
	RET
