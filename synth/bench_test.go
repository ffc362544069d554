package synth

import "testing"

// BenchmarkDense generates the paper's d = 5000, r = 10, α = 0.1 problem.
func BenchmarkDense(b *testing.B) {
	cfg := Config{D1: 5000, D2: 5000, Rank: 10, Alpha: 0.1, Seed: 1}
	for b.Loop() {
		if _, err := Dense(cfg); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkObserved generates d = 2·10⁵, r = 10, α = 0.1 at the paper's
// rate p = 0.15·r²·log(d)/d (|Φ| ≈ 3.7·10⁷), as in Figure 1(b).
func BenchmarkObserved(b *testing.B) {
	const d = 200_000
	cfg := Config{D1: d, D2: d, Rank: 10, Alpha: 0.1, Seed: 1, P: PaperRate(d, 10)}
	for b.Loop() {
		if _, err := Observed(cfg); err != nil {
			b.Fatal(err)
		}
	}
}
