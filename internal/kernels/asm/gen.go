// Command asm generates internal/kernels/micro_amd64.s, the AVX2+FMA
// micro-kernels, with avo (github.com/mmcloughlin/avo). It is its own
// module so that the main module does not depend on avo. Run it through
// go generate in internal/kernels:
//
//	go generate ./internal/kernels
//
// The kernels use fixed registers, chosen so that a 4×8 tile and its
// operands fit the sixteen YMM registers; the generator writes the
// repeated parts (rows, column blocks, the loops with and without
// prefetching) as loops. What each kernel computes is in micro_go.go and
// its preconditions in micro_amd64.go.
package main

import (
	"fmt"

	. "github.com/mmcloughlin/avo/build"
	"github.com/mmcloughlin/avo/gotypes"
	. "github.com/mmcloughlin/avo/operand"
	. "github.com/mmcloughlin/avo/reg"
)

// pfd is how far ahead (bytes) abt4x8AVX2 prefetches the rows of Y and
// dst it streams through; measured best at 5000×5000, k = 10 (one worker).
const pfd = 2048

// ymm are the vector registers by number.
var ymm = []VecPhysical{Y0, Y1, Y2, Y3, Y4, Y5, Y6, Y7, Y8, Y9, Y10, Y11, Y12, Y13, Y14, Y15}

// rows returns the addresses of the four rows of a 4-row block at disp:
// rows 0–2 as base + r·stride, row 3 from its own pointer row3.
func rows(base, stride, row3 Register, disp int) [4]Mem {
	return [4]Mem{
		{Base: base, Disp: disp},
		{Base: base, Index: stride, Scale: 1, Disp: disp},
		{Base: base, Index: stride, Scale: 2, Disp: disp},
		{Base: row3, Disp: disp},
	}
}

// row3 sets dst to base + 3·stride, the pointer rows takes for row 3.
func row3(base, stride, dst Register) {
	LEAQ(Mem{Base: base, Index: stride, Scale: 2}, dst)
	ADDQ(stride, dst)
}

// zero clears ymm[lo] … ymm[hi−1].
func zero(lo, hi int) {
	for r := lo; r < hi; r++ {
		VXORPD(ymm[r], ymm[r], ymm[r])
	}
}

// prefetch prefetches the four rows.
func prefetch(ms [4]Mem) {
	for _, m := range ms {
		PREFETCHT0(m)
	}
}

// arg loads the argument name into r.
func arg(name string, r Register) { Load(Param(name), r) }

// stride loads the stride argument name, given in elements, into r as
// bytes.
func stride(name string, r Register) {
	Load(Param(name), r)
	SHLQ(U8(3), r)
}

// addr is the stack address of an argument or result.
func addr(c gotypes.Component) Mem {
	b, err := c.Resolve()
	if err != nil {
		panic(err)
	}
	return b.Addr
}

func main() {
	ConstraintExpr("amd64,!purego")
	abt()
	axv()
	aty()
	gram12()
	clip()
	prefetchRows()
	Generate()
}

// abt generates abt4x8AVX2: for each 8-column chunk, Y0–Y7 hold the 4×8
// tile (row r in Y(2r), Y(2r+1)); the inner loop adds the outer product of
// the packed A column (four broadcasts) and the packed Bᵀ row (two
// loads). Y12–Y15 collect the squares of the residual, one per row.
func abt() {
	TEXT("abt4x8AVX2", NOSPLIT, "func(k int, ap, bt *float64, ldb, n int, y *float64, ldy int, dst *float64, ldd int, sub int) (ssq float64)")
	arg("k", R8)
	arg("ap", RSI)
	arg("bt", RDI)
	stride("ldb", R9)
	arg("n", RCX)
	arg("y", RAX)
	stride("ldy", RBX)
	arg("dst", RDX)
	stride("ldd", R10)
	row3(RAX, RBX, R12)
	row3(RDX, R10, R13)
	zero(12, 16)

	Label("abtChunk")
	prefetch(rows(RAX, RBX, R12, pfd))
	prefetch(rows(RDX, R10, R13, pfd))
	zero(0, 8)
	MOVQ(RSI, R11)
	MOVQ(RDI, R14)
	MOVQ(R8, R15)

	Label("abtInner")
	VMOVUPD(Mem{Base: R14}, Y8)
	VMOVUPD(Mem{Base: R14, Disp: 32}, Y9)
	for r := 0; r < 4; r++ {
		b := ymm[10+r%2]
		VBROADCASTSD(Mem{Base: R11, Disp: 8 * r}, b)
		VFMADD231PD(Y8, b, ymm[2*r])
		VFMADD231PD(Y9, b, ymm[2*r+1])
	}
	ADDQ(U8(32), R11)
	ADDQ(R9, R14)
	DECQ(R15)
	JNZ(LabelRef("abtInner"))

	CMPQ(addr(Param("sub")), U8(0))
	JEQ(LabelRef("abtStore"))
	Comment("Residual y − tile, and its squares.")
	for r, m := range rows(RAX, RBX, R12, 0) {
		a, b := ymm[8+2*(r%2)], ymm[9+2*(r%2)]
		hi := m
		hi.Disp = 32
		VMOVUPD(m, a)
		VMOVUPD(hi, b)
		VSUBPD(ymm[2*r], a, ymm[2*r])
		VSUBPD(ymm[2*r+1], b, ymm[2*r+1])
		VFMADD231PD(ymm[2*r], ymm[2*r], ymm[12+r])
		VFMADD231PD(ymm[2*r+1], ymm[2*r+1], ymm[12+r])
	}

	Label("abtStore")
	for r, m := range rows(RDX, R10, R13, 0) {
		hi := m
		hi.Disp = 32
		VMOVUPD(ymm[2*r], m)
		VMOVUPD(ymm[2*r+1], hi)
	}
	for _, p := range []Register{RDI, RAX, R12, RDX, R13} {
		ADDQ(U8(64), p)
	}
	SUBQ(U8(8), RCX)
	JNZ(LabelRef("abtChunk"))

	VADDPD(Y13, Y12, Y12)
	VADDPD(Y15, Y14, Y14)
	VADDPD(Y14, Y12, Y12)
	VEXTRACTF128(U8(1), Y12, X13)
	VADDPD(X13, X12, X12)
	VHADDPD(X12, X12, X12)
	VMOVSD(X12, addr(Return("ssq")))
	VZEROUPPER()
	RET()
}

// axv generates axv4AVX2: dot products of the 4 rows of A with the k rows
// of Xᵀ over 4-column chunks, in blocks of three rows of Xᵀ (two when a
// block of one would be left; one only for k = 1). In a block of c rows,
// accumulator Y(3r+j) holds row r against row j of the block, Y12–Y14 the
// chunk of Xᵀ and Y15 that of A. Between blocks and calls the accumulators
// live in accv[(4j+r)·8 + lane] (lanes 0–3); the caller sums the lanes
// once a row is done, so a panel can be fed tile by tile. When pf is not
// nil every loop pass also prefetches one cache line, walking the rows of
// stride lda from pf (the next tile) n columns at a time.
func axv() {
	TEXT("axv4AVX2", NOSPLIT, "func(n int, a *float64, lda int, xt *float64, ldx, k int, accv *float64, pf *float64)")
	arg("n", R11)
	arg("a", R12)
	stride("lda", RBX)
	arg("xt", RCX)
	stride("ldx", RDX)
	arg("k", RSI)
	arg("accv", R9)
	arg("pf", R13)
	XORQ(R14, R14)

	Label("axvBlock")
	CMPQ(RSI, U8(1))
	JEQ(LabelRef("axvC1"))
	CMPQ(RSI, U8(2))
	JEQ(LabelRef("axvC2"))
	CMPQ(RSI, U8(4))
	JEQ(LabelRef("axvC2"))
	JMP(LabelRef("axvC3"))
	for _, c := range []int{3, 2, 1} {
		axvBlock(c)
	}
}

// axvBlock generates the block of c rows of Xᵀ.
func axvBlock(c int) {
	name := fmt.Sprintf("axvC%d", c)
	acc := func(r, j int) (VecPhysical, Mem) {
		return ymm[3*r+j], Mem{Base: R9, Disp: (4*j + r) * 64}
	}
	Label(name)
	for r := 0; r < 4; r++ {
		for j := 0; j < c; j++ {
			y, m := acc(r, j)
			VMOVUPD(m, y)
		}
	}
	MOVQ(R12, RAX)
	row3(RAX, RBX, R8)
	MOVQ(RCX, R10)
	MOVQ(R11, RDI)
	TESTQ(R13, R13)
	JNZ(LabelRef(name + "LoopPF"))

	body := func(loop string) {
		xt := rows(R10, RDX, nil, 0)
		for j := 0; j < c; j++ {
			VMOVUPD(xt[j], ymm[12+j])
		}
		for r, m := range rows(RAX, RBX, R8, 0) {
			if c == 1 {
				VFMADD231PD(m, Y12, ymm[3*r])
				continue
			}
			VMOVUPD(m, Y15)
			for j := 0; j < c; j++ {
				VFMADD231PD(ymm[12+j], Y15, ymm[3*r+j])
			}
		}
		ADDQ(U8(32), RAX)
		ADDQ(U8(32), R8)
		ADDQ(U8(32), R10)
		SUBQ(U8(4), RDI)
		JNZ(LabelRef(loop))
	}
	Label(name + "Loop")
	body(name + "Loop")

	Label(name + "Done")
	for r := 0; r < 4; r++ {
		for j := 0; j < c; j++ {
			y, m := acc(r, j)
			VMOVUPD(y, m)
		}
	}
	switch c {
	case 3:
		LEAQ(Mem{Base: RCX, Index: RDX, Scale: 2}, RCX)
		ADDQ(RDX, RCX)
	case 2:
		LEAQ(Mem{Base: RCX, Index: RDX, Scale: 2}, RCX)
	case 1:
		ADDQ(RDX, RCX)
	}
	ADDQ(U32(256*c), R9)
	SUBQ(U8(c), RSI)
	JNZ(LabelRef("axvBlock"))
	VZEROUPPER()
	RET()

	Label(name + "LoopPF")
	PREFETCHT0(Mem{Base: R13, Index: R14, Scale: 8})
	ADDQ(U8(8), R14)
	CMPQ(R14, R11)
	JLT(LabelRef(name + "PFRow"))
	XORQ(R14, R14)
	ADDQ(RBX, R13)
	Label(name + "PFRow")
	body(name + "LoopPF")
	JMP(LabelRef(name + "Done"))
}

// aty generates aty4x8AVX2: for each 8-column chunk the 4×8 tile of A
// stays in Y0–Y7 while every row of the accumulator is loaded (Y8, Y9),
// updated with the four broadcast weights yp[4c+r] and stored back; the
// chunk of the next tile (four rows of stride lda at pf) is prefetched
// meanwhile.
func aty() {
	TEXT("aty4x8AVX2", NOSPLIT, "func(n int, a *float64, lda int, yp *float64, l int, acct *float64, ldt int, pf *float64)")
	arg("n", RCX)
	arg("a", RAX)
	stride("lda", RBX)
	row3(RAX, RBX, R8)
	arg("yp", RSI)
	arg("l", R9)
	arg("acct", RDI)
	stride("ldt", R10)
	arg("pf", R14)
	row3(R14, RBX, R15)

	Label("atyChunk")
	prefetch(rows(R14, RBX, R15, 0))
	ADDQ(U8(64), R14)
	ADDQ(U8(64), R15)
	for r, m := range rows(RAX, RBX, R8, 0) {
		hi := m
		hi.Disp = 32
		VMOVUPD(m, ymm[2*r])
		VMOVUPD(hi, ymm[2*r+1])
	}
	MOVQ(RSI, R11)
	MOVQ(RDI, R12)
	MOVQ(R9, R13)

	Label("atyInner")
	VMOVUPD(Mem{Base: R12}, Y8)
	VMOVUPD(Mem{Base: R12, Disp: 32}, Y9)
	for r := 0; r < 4; r++ {
		b := ymm[10+r]
		VBROADCASTSD(Mem{Base: R11, Disp: 8 * r}, b)
		VFMADD231PD(ymm[2*r], b, Y8)
		VFMADD231PD(ymm[2*r+1], b, Y9)
	}
	VMOVUPD(Y8, Mem{Base: R12})
	VMOVUPD(Y9, Mem{Base: R12, Disp: 32})
	ADDQ(U8(32), R11)
	ADDQ(R10, R12)
	DECQ(R13)
	JNZ(LabelRef("atyInner"))

	ADDQ(U8(64), RAX)
	ADDQ(U8(64), R8)
	ADDQ(U8(64), RDI)
	SUBQ(U8(8), RCX)
	JNZ(LabelRef("atyChunk"))
	VZEROUPPER()
	RET()
}

// gram12 generates gram12AVX2: the Gram matrix of n rows of width 12
// (96 bytes each), added to the 12×12 row-major g in three 4-column
// blocks, each for the rows at and below its diagonal block. Pass A keeps
// columns 0–3 of rows 0–11 in Y0–Y11; pass B keeps columns 4–7 of rows
// 4–11 in Y0–Y7 and columns 8–11 of rows 8–11 in Y8–Y11. Each rating adds
// one broadcast of z[i] times a loaded 4-vector of z per accumulator: 24
// FMAs a row, against 78 scalar multiply-adds for the lower triangle.
func gram12() {
	TEXT("gram12AVX2", NOSPLIT, "func(n int, z, dst *float64)")
	arg("n", RCX)
	arg("z", RSI)
	arg("dst", RDI)
	at := func(i, j int) Mem { return Mem{Base: RDI, Disp: 8 * (12*i + j)} }

	for i := range 12 {
		VMOVUPD(at(i, 0), ymm[i])
	}
	MOVQ(RSI, R8)
	MOVQ(RCX, R9)
	Label("gram12A")
	VMOVUPD(Mem{Base: R8}, Y12)
	for i := range 12 {
		b := ymm[13+i%2]
		VBROADCASTSD(Mem{Base: R8, Disp: 8 * i}, b)
		VFMADD231PD(Y12, b, ymm[i])
	}
	ADDQ(U8(96), R8)
	DECQ(R9)
	JNZ(LabelRef("gram12A"))
	for i := range 12 {
		VMOVUPD(ymm[i], at(i, 0))
	}

	for i := 4; i < 12; i++ {
		VMOVUPD(at(i, 4), ymm[i-4])
	}
	for i := 8; i < 12; i++ {
		VMOVUPD(at(i, 8), ymm[i])
	}
	MOVQ(RSI, R8)
	MOVQ(RCX, R9)
	Label("gram12B")
	VMOVUPD(Mem{Base: R8, Disp: 32}, Y12)
	VMOVUPD(Mem{Base: R8, Disp: 64}, Y13)
	for i := 4; i < 12; i++ {
		b := ymm[14+i%2]
		VBROADCASTSD(Mem{Base: R8, Disp: 8 * i}, b)
		VFMADD231PD(Y12, b, ymm[i-4])
		if i >= 8 {
			VFMADD231PD(Y13, b, ymm[i])
		}
	}
	ADDQ(U8(96), R8)
	DECQ(R9)
	JNZ(LabelRef("gram12B"))
	for i := 4; i < 12; i++ {
		VMOVUPD(ymm[i-4], at(i, 4))
	}
	for i := 8; i < 12; i++ {
		VMOVUPD(ymm[i], at(i, 8))
	}
	VZEROUPPER()
	RET()
}

// clip generates clip8AVX2, the hard threshold of one row: Y0–Y1 hold
// eight entries, Y2–Y3 their magnitudes and Y4–Y5 the masks of those not
// above ζ (Y15, broadcast; the comparison "not greater than" keeps a NaN,
// so that it reaches the sum of squares). Y10–Y11 collect the squares of
// the kept entries and Y12–Y13 the largest magnitudes; Y14 is the mask
// that clears the sign bit.
func clip() {
	TEXT("clip8AVX2", NOSPLIT, "func(n int, x *float64, zeta float64) (ssq, amax float64)")
	arg("n", RCX)
	arg("x", RSI)
	VBROADCASTSD(addr(Param("zeta")), Y15)
	VPCMPEQQ(Y14, Y14, Y14)
	VPSRLQ(U8(1), Y14, Y14)
	zero(10, 14)
	Label("clipLoop")
	for h := 0; h < 2; h++ {
		m := Mem{Base: RSI, Disp: 32 * h}
		x, a, keep := ymm[h], ymm[2+h], ymm[4+h]
		VMOVUPD(m, x)
		VANDPD(Y14, x, a)
		VMAXPD(a, ymm[12+h], ymm[12+h])
		VCMPPD(U8(0x0a), Y15, a, keep) // keep = !(|x| > ζ)
		VANDPD(keep, x, x)
		VMOVUPD(x, m)
		VFMADD231PD(x, x, ymm[10+h])
	}
	ADDQ(U8(64), RSI)
	SUBQ(U8(8), RCX)
	JNZ(LabelRef("clipLoop"))

	VADDPD(Y11, Y10, Y10)
	VEXTRACTF128(U8(1), Y10, X11)
	VADDPD(X11, X10, X10)
	VHADDPD(X10, X10, X10)
	VMOVSD(X10, addr(Return("ssq")))
	VMAXPD(Y13, Y12, Y12)
	VEXTRACTF128(U8(1), Y12, X13)
	VMAXPD(X13, X12, X12)
	VPERMILPD(U8(1), X12, X13)
	VMAXPD(X13, X12, X12)
	VMOVSD(X12, addr(Return("amax")))
	VZEROUPPER()
	RET()
}

// prefetchRows generates prefetchRowsAsm: for each index j of idx, a
// prefetch of the first and of the last byte of row j (at base +
// j·stride and lastOff bytes further). Prefetches are hints: they do not
// fault, and nothing waits for them, so the misses of a whole line of
// entries overlap with each other and with the work that follows.
func prefetchRows() {
	TEXT("prefetchRowsAsm", NOSPLIT, "func(base *float64, idx []int32, stride, last int)")
	arg("base", RAX)
	Load(Param("idx").Base(), RSI)
	Load(Param("idx").Len(), RCX)
	stride("stride", RDX)
	stride("last", R8)
	TESTQ(RCX, RCX)
	JZ(LabelRef("prefetchDone"))
	Label("prefetchLoop")
	MOVLQSX(Mem{Base: RSI}, RBX)
	IMULQ(RDX, RBX)
	ADDQ(RAX, RBX)
	PREFETCHT0(Mem{Base: RBX})
	PREFETCHT0(Mem{Base: RBX, Index: R8, Scale: 1})
	ADDQ(U8(4), RSI)
	DECQ(RCX)
	JNZ(LabelRef("prefetchLoop"))
	Label("prefetchDone")
	RET()
}
