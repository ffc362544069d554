package rpca_test

import (
	"context"
	"fmt"
	"os"
	"strconv"
	"strings"
	"testing"

	"github.com/rpca-gd/rpca/gd"

	"github.com/rpca-gd/rpca"
	"github.com/rpca-gd/rpca/synth"
)

// BenchmarkObservedIterations times Phase II of Algorithm 2 on the
// paper's Figure 1(b) model (r = 10, α = 0.1, p = 0.15·r²·log(d)/d) for
// 20 iterations and reports the cost of one iteration, in total and per
// observed entry (ns/entry, wall clock with all workers). The sizes are
// d = 1e4 and 5e4, or those listed in RPCA_BENCH_D (comma-separated).
func BenchmarkObservedIterations(b *testing.B) {
	ds := []int{10_000, 50_000}
	if s := os.Getenv("RPCA_BENCH_D"); s != "" {
		ds = nil
		for _, f := range strings.Split(s, ",") {
			v, err := strconv.ParseFloat(strings.TrimSpace(f), 64)
			if err != nil {
				b.Fatalf("RPCA_BENCH_D: %v", err)
			}
			ds = append(ds, int(v))
		}
	}
	for _, d := range ds {
		b.Run(fmt.Sprintf("d=%d", d), func(b *testing.B) {
			const r, alpha = 10, 0.1
			in, err := synth.Observed(synth.Config{D1: d, D2: d, Rank: r, Alpha: alpha, P: synth.PaperRate(d, r), Seed: 1})
			if err != nil {
				b.Fatal(err)
			}
			p := in.Problem()
			n := float64(p.Observed.Len())
			var perIter, initS float64
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				res, err := rpca.Solve(context.Background(), p, rpca.Settings{Rank: r, Alpha: alpha, Stop: rpca.Stop{MaxIter: 20}}, &gd.Method{})
				if err != nil {
					b.Fatal(err)
				}
				h := res.History
				initS = h[0].Elapsed.Seconds()
				perIter = (h[len(h)-1].Elapsed - h[0].Elapsed).Seconds() / float64(res.Iterations)
			}
			b.ReportMetric(perIter*1e3, "ms/iter")
			b.ReportMetric(perIter*1e9/n, "ns/entry")
			b.ReportMetric(initS*1e3, "init-ms")
		})
	}
}
