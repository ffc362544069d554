// Command gotime times rpca.Solve with the default method on an .npy
// matrix, for python/bench/compare.py: it prints the seconds of the call,
// the method, the iterations and whether the answer is verified.
package main

import (
	"context"
	"fmt"
	"os"
	"time"

	"github.com/rpca-gd/rpca"
	"github.com/rpca-gd/rpca/formats/npy"
	"github.com/rpca-gd/rpca/methods"
)

func main() {
	y, err := npy.ReadFile(os.Args[1])
	if err != nil {
		panic(err)
	}
	m, _ := methods.New("auto", false, nil)
	t := time.Now()
	res, err := rpca.Solve(context.Background(), &rpca.Problem{Dense: y}, rpca.Settings{Rank: 10, Alpha: 0.1, Seed: 1}, m)
	if err != nil {
		panic(err)
	}
	fmt.Printf("%.4f %s %d %v\n", time.Since(t).Seconds(), res.Method, res.Iterations, res.Verification.Verified)
}
