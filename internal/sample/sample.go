// Package sample draws the set Φ of observed positions of the paper's
// observation model (Section 2, Algorithm 2): every entry (i, j) of a
// d1×d2 matrix is observed independently with probability p.
//
// It is the one sampler of the project: GD's subsampling, the file loader,
// the synthetic generator and the experiments all use it, so that the same
// p and seed observe the same entries everywhere. The positions of row i
// depend only on (p, seed, i, d2): rows can be drawn in any order, in
// parallel, or while a file streams past, with the same result.
package sample

import (
	"math"
	"math/rand/v2"
	"runtime"
	"slices"
	"sync"
)

// golden is the SplitMix64 increment ⌊2⁶⁴/φ⌋.
const golden = 0x9e3779b97f4a7c15

// Mix is the SplitMix64 output function, a bijection of uint64 with good
// avalanche; Mix(key + (n+1)·golden) is output n of SplitMix64 seeded
// with key.
func Mix(z uint64) uint64 {
	z ^= z >> 30
	z *= 0xbf58476d1ce4e5b9
	z ^= z >> 27
	z *= 0x94d049bb133111eb
	return z ^ z>>31
}

// HashAt returns the n-th number of the counter-based generator key.
func HashAt(key, n uint64) uint64 { return Mix(key + (n+1)*golden) }

// Key derives the key of one random stream from a seed.
func Key(seed, stream uint64) uint64 { return Mix(Mix(seed+stream*golden) ^ stream) }

// SeedRow reseeds pcg for row i of the stream with the given key.
func SeedRow(pcg *rand.PCG, key uint64, i int) {
	pcg.Seed(HashAt(key, 2*uint64(i)), HashAt(key, 2*uint64(i)+1))
}

// streamPositions is the stream of the positions; streamCover that of the
// entries added by Cover. (The synthetic generator's streams 1–6 are its
// own.)
const (
	streamPositions uint64 = 3
	streamCover     uint64 = 7
)

// Bernoulli is the observation model: each entry observed independently
// with probability P ∈ (0, 1], the draws keyed by Seed.
type Bernoulli struct {
	P    float64
	Seed uint64
}

// Row appends to dst the observed columns j < d2 of row i, in increasing
// order. The gaps between them are Geometric(p) (failures before the next
// success, ⌊log U / log(1−p)⌋), so a row costs O(1) per observed entry.
func (b Bernoulli) Row(dst []int32, i, d2 int) []int32 {
	var pcg rand.PCG
	return b.row(&pcg, dst, i, d2)
}

func (b Bernoulli) row(pcg *rand.PCG, dst []int32, i, d2 int) []int32 {
	if b.P >= 1 {
		for j := 0; j < d2; j++ {
			dst = append(dst, int32(j))
		}
		return dst
	}
	SeedRow(pcg, Key(b.Seed, streamPositions), i)
	rng := rand.New(pcg)
	invLog := 1 / math.Log1p(-b.P) // < 0
	for j := -1; ; {
		g := math.Floor(math.Log(1-rng.Float64()) * invLog)
		if g >= float64(d2-1-j) {
			return dst
		}
		j += int(g) + 1
		dst = append(dst, int32(j))
	}
}

// rowsPerBlock is the number of rows one goroutine samples at a time.
const rowsPerBlock = 2048

// Positions returns Φ for a d1×d2 matrix in compressed sparse row form:
// the observed columns of row i are colIdx[rowPtr[i]:rowPtr[i+1]],
// increasing. Rows are drawn in parallel on up to workers goroutines
// (GOMAXPROCS when workers ≤ 0); the result does not depend on workers.
func (b Bernoulli) Positions(d1, d2, workers int) (rowPtr []int, colIdx []int32) {
	if workers <= 0 {
		workers = runtime.GOMAXPROCS(0)
	}
	nb := (d1 + rowsPerBlock - 1) / rowsPerBlock
	blocks := make([][]int32, nb)
	rowPtr = make([]int, d1+1)
	mean := float64(rowsPerBlock) * float64(d2) * b.P
	est := int(min(mean+4*math.Sqrt(mean)+16, float64(rowsPerBlock)*float64(d2)))
	next := make(chan int)
	var wg sync.WaitGroup
	for w := 0; w < min(workers, nb); w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			var pcg rand.PCG
			for blk := range next {
				cols := make([]int32, 0, est)
				for i := blk * rowsPerBlock; i < min((blk+1)*rowsPerBlock, d1); i++ {
					before := len(cols)
					cols = b.row(&pcg, cols, i, d2)
					rowPtr[i+1] = len(cols) - before
				}
				blocks[blk] = cols
			}
		}()
	}
	for blk := 0; blk < nb; blk++ {
		next <- blk
	}
	close(next)
	wg.Wait()
	for i := 0; i < d1; i++ {
		rowPtr[i+1] += rowPtr[i]
	}
	colIdx = make([]int32, rowPtr[d1])
	for blk, cols := range blocks {
		copy(colIdx[rowPtr[blk*rowsPerBlock]:], cols)
	}
	return rowPtr, colIdx
}

// Cover adds one position to every empty row and then to every empty
// column of Φ (given and returned in compressed sparse row form): row i
// gets a column, and column j a row, chosen at random from a stream keyed
// by seed and the line's index. Algorithm 2 cannot recover a row or
// column it never observes; with d2 = 50 frames and p = 0.2, for example,
// a row is empty with probability 0.8⁵⁰ ≈ 1.4e-5. added is the number of
// positions added; when it is 0 the inputs are returned unchanged.
func Cover(d1, d2 int, rowPtr []int, colIdx []int32, seed uint64) (_ []int, _ []int32, added int) {
	key := Key(seed, streamCover)
	extra := make(map[int][]int32) // row → columns to add
	colSeen := make([]bool, d2)
	for _, c := range colIdx {
		colSeen[c] = true
	}
	for i := 0; i < d1; i++ {
		if rowPtr[i] == rowPtr[i+1] {
			j := int32(HashAt(key, uint64(i)) % uint64(d2))
			extra[i] = append(extra[i], j)
			colSeen[j] = true
			added++
		}
	}
	for j, seen := range colSeen {
		if !seen {
			i := int(HashAt(key, uint64(d1)+uint64(j)) % uint64(d1))
			extra[i] = append(extra[i], int32(j))
			added++
		}
	}
	if added == 0 {
		return rowPtr, colIdx, 0
	}
	newPtr := make([]int, d1+1)
	newIdx := make([]int32, 0, len(colIdx)+added)
	for i := 0; i < d1; i++ {
		row := colIdx[rowPtr[i]:rowPtr[i+1]]
		if add := extra[i]; len(add) > 0 {
			merged := append(append([]int32(nil), row...), add...)
			slices.Sort(merged)
			row = merged
		}
		newIdx = append(newIdx, row...)
		newPtr[i+1] = len(newIdx)
	}
	return newPtr, newIdx, added
}

// Subset marks k distinct indices of [0, n), uniformly at random, drawn
// from rng by Floyd's algorithm (k draws, each a new index). It panics
// unless 0 ≤ k ≤ n.
func Subset(rng *rand.Rand, n, k int) []bool {
	if k < 0 || k > n {
		panic("sample: subset size out of range")
	}
	in := make([]bool, n)
	for j := n - k; j < n; j++ {
		t := rng.IntN(j + 1)
		if in[t] {
			t = j
		}
		in[t] = true
	}
	return in
}
