package formats

import (
	"math/rand/v2"
	"testing"
)

// TestFindDuplicateRandom compares FindDuplicate with a quadratic search.
func TestFindDuplicateRandom(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	for trial := 0; trial < 200; trial++ {
		n := 1 + rng.IntN(30)
		tr := &Triplets{D1: 6, D2: 6}
		for k := 0; k < n; k++ {
			tr.Row = append(tr.Row, rng.IntN(6))
			tr.Col = append(tr.Col, rng.IntN(6))
			tr.Val = append(tr.Val, 0)
		}
		wa, wb, wok := -1, -1, false
		for b := 0; b < n && !wok; b++ {
			for a := 0; a < b; a++ {
				if tr.Row[a] == tr.Row[b] && tr.Col[a] == tr.Col[b] {
					wa, wb, wok = a, b, true
					break
				}
			}
		}
		a, b, ok := tr.FindDuplicate()
		if ok != wok || (ok && (a != wa || b != wb)) {
			t.Fatalf("trial %d: got (%d, %d, %v), want (%d, %d, %v)", trial, a, b, ok, wa, wb, wok)
		}
	}
}
