package rpca_test

import (
	"context"
	"fmt"
	"log"
	"math/rand/v2"
	"os"
	"strings"
	"testing"

	"github.com/rpca-gd/rpca/gd"

	"gonum.org/v1/gonum/mat"

	"github.com/rpca-gd/rpca"
	"github.com/rpca-gd/rpca/accaltproj"
)

// exampleData returns a 200×150 matrix of rank 3 with 5% of its entries
// corrupted, and its low-rank part.
func exampleData() (y, m *mat.Dense) { return lowRankPlusSparse(200, 150, 3, 7) }

// Decompose a fully observed matrix Y = M + S. AccAltProj is the fastest
// method for dense data and its speed does not depend on the conditioning
// of M; the paper's gradient method is &gd.Method{}.
func ExampleSolve() {
	y, m := exampleData()
	p := &rpca.Problem{Dense: y}
	s := rpca.Settings{Rank: 3, Alpha: 0.1}
	res, err := rpca.Solve(context.Background(), p, s, &accaltproj.Method{})
	if err != nil {
		log.Fatal(err)
	}
	// res.U·res.Vᵀ is the low-rank part, res.S the sparse part (CSR);
	// res.Verification says whether the answer was checked against Y.
	fmt.Printf("rank %d, stopped by %s, verified: %v\n", res.U.RawMatrix().Cols, res.Stop, res.Verification.Verified)
	fmt.Printf("low-rank part recovered to 1e-6: %v\n", relDiff(res.LowRank(), m) < 1e-6)
	// Output:
	// rank 3, stopped by residual-tol, verified: true
	// low-rank part recovered to 1e-6: true
}

// Decompose a partially observed matrix (robust matrix completion) with
// the paper's Algorithm 2: only the observed entries are given, as
// triplets.
func ExampleSolve_partial() {
	y, m := exampleData()
	rng := rand.New(rand.NewPCG(1, 2))
	var rows, cols []int
	var vals []float64
	for i := 0; i < 200; i++ {
		for j := 0; j < 150; j++ {
			if rng.Float64() < 0.5 { // observe half of the entries
				rows, cols, vals = append(rows, i), append(cols, j), append(vals, y.At(i, j))
			}
		}
	}
	obs, err := rpca.NewObserved(200, 150, rows, cols, vals)
	if err != nil {
		log.Fatal(err)
	}
	res, err := rpca.Solve(context.Background(), &rpca.Problem{Observed: obs}, rpca.Settings{Rank: 3, Alpha: 0.1}, &gd.Method{})
	if err != nil {
		log.Fatal(err)
	}
	fmt.Printf("%s on %d observed entries: all entries of M recovered to 1e-4: %v\n",
		res.Method, obs.Len(), relDiff(res.LowRank(), m) < 1e-4)
	// Output:
	// gd on 15126 observed entries: all entries of M recovered to 1e-4: true
}

// TestReadmeSnippets: every line of the README's Go code blocks appears in
// this file, so that the README shows only code that compiles and runs.
func TestReadmeSnippets(t *testing.T) {
	readme, err := os.ReadFile("README.md")
	if err != nil {
		t.Fatal(err)
	}
	self, err := os.ReadFile("example_test.go")
	if err != nil {
		t.Fatal(err)
	}
	have := map[string]bool{}
	for _, l := range strings.Split(string(self), "\n") {
		have[strings.TrimSpace(l)] = true
	}
	blocks := strings.Split(string(readme), "```go\n")
	if len(blocks) < 2 {
		t.Fatal("README has no Go code block")
	}
	for _, b := range blocks[1:] {
		code, _, ok := strings.Cut(b, "```")
		if !ok {
			t.Fatal("unterminated code block in README")
		}
		for _, l := range strings.Split(code, "\n") {
			if l = strings.TrimSpace(l); l != "" && !have[l] {
				t.Errorf("README line not in example_test.go: %q", l)
			}
		}
	}
}
