package ratings

import (
	"bufio"
	"context"
	"math"
	"os"

	"gonum.org/v1/gonum/mat"
	"runtime"
	"runtime/debug"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/rpca-gd/rpca"
)

// BenchmarkFitGenerated fits Generate's ratings at rank 10 with α = 0.05,
// as rpca complete --rank 10 --alpha 0.05 --holdout 0.01 does (Algorithm
// 2 with per-line counts on the ratings minus their median), and reports
// the generation and fit times, the iterations, the peak resident memory
// of the process (VmHWM, Linux), the held-out RMSE on clean ratings, and
// the precision and recall of the ratings set aside against the junk.
// It runs a tenth of the MovieLens 20M shape; RPCA_BENCH_ML20M=1 runs the
// full MovieLens20M shape (20 million ratings) instead:
//
//	RPCA_BENCH_ML20M=1 go test -run x -bench FitGenerated -benchtime 1x -timeout 30m ./ratings
func BenchmarkFitGenerated(b *testing.B) {
	s := MovieLens20M
	name := "ml20m-tenth"
	if os.Getenv("RPCA_BENCH_ML20M") != "" {
		name = "ml20m"
	} else {
		s.Users, s.Items, s.Ratings = s.Users/10, s.Items/10, s.Ratings/10
	}
	b.Run(name, func(b *testing.B) {
		for range b.N {
			runtime.GC()
			debug.FreeOSMemory()
			_ = os.WriteFile("/proc/self/clear_refs", []byte("5"), 0) // reset VmHWM
			t0 := time.Now()
			g, err := Generate(s)
			if err != nil {
				b.Fatal(err)
			}
			gen := time.Since(t0)
			held := HoldOut(g.Len(), 0.01, 1)
			t1 := time.Now()
			o := Options{Rank: 10, Alpha: 0.05}
			if os.Getenv("XSCALED") != "" {
				o.Method = &rpca.GD{PerLine: true, Update: rpca.UpdateRule(os.Getenv("XSCALED"))}
			}
			if os.Getenv("XVAL") != "" {
				var tv []float64
				for k, h := range held {
					if !h {
						tv = append(tv, g.Val[k])
					}
				}
				off := median(tv)
				// fitted indices: rows/cols in order of first appearance among training ratings
				rm, cm := map[int]int{}, map[int]int{}
				for k, h := range held {
					if h {
						continue
					}
					if _, ok := rm[g.Row[k]]; !ok {
						rm[g.Row[k]] = len(rm)
					}
					if _, ok := cm[g.Col[k]]; !ok {
						cm[g.Col[k]] = len(cm)
					}
				}
				o.Settings.Stop.Patience = 1 << 30
				it := 0
				o.Settings.Stop.Validation = func(u, v *mat.Dense) float64 {
					it++
					if it%5 != 0 && it > 3 {
						return 0
					}
					var ss float64
					n := 0
					for k, h := range held {
						i, ok1 := rm[g.Row[k]]
						j, ok2 := cm[g.Col[k]]
						if !h || g.Junk[k] || !ok1 || !ok2 {
							continue
						}
						p := off + mat.Dot(u.RowView(i), v.RowView(j))
						p = min(5, max(0.5, p))
						ss += (p - g.Val[k]) * (p - g.Val[k])
						n++
					}
					b.Logf("iter %d heldout rmse %.4f", it, math.Sqrt(ss/float64(n)))
					return 0
				}
			}
			o.Settings.Callback = func(r rpca.Record) {
				if r.Iter%10 == 0 {
					b.Logf("iter %d res %.6g fc %.3g %.1fs", r.Iter, r.Residual, r.FactorChange, r.Elapsed.Seconds())
				}
			}
			m, err := Fit(context.Background(), g.Ratings, held, o)
			if err != nil {
				b.Fatal(err)
			}
			fit := time.Since(t1)
			clean := make([]bool, g.Len())
			var setAside, found, junk int
			t := 0
			for k, h := range held {
				clean[k] = h && !g.Junk[k]
				if h {
					continue
				}
				out := m.IsOutlier(t)
				t++
				setAside += b2i(out)
				junk += b2i(g.Junk[k])
				found += b2i(out && g.Junk[k])
			}
			ev := m.Evaluate(g.Ratings, clean)
			b.ReportMetric(gen.Seconds(), "gen-s")
			b.ReportMetric(fit.Seconds(), "fit-s")
			b.ReportMetric(float64(m.Result.Iterations), "iters")
			b.ReportMetric(float64(vmHWM())/(1<<20), "peak-MiB")
			b.ReportMetric(ev.RMSE, "rmse")
			b.ReportMetric(ev.MeanRMSE, "mean-rmse")
			b.ReportMetric(float64(found)/float64(max(1, setAside)), "precision")
			b.ReportMetric(float64(found)/float64(max(1, junk)), "recall")
			b.Logf("%s: %d ratings, stop %s", name, g.Len(), m.Result.Stop)
		}
	})
}

func b2i(b bool) int {
	if b {
		return 1
	}
	return 0
}

// vmHWM returns the peak resident memory of the process in bytes
// (VmHWM), or 0 where /proc/self/status is unavailable.
func vmHWM() uint64 {
	f, err := os.Open("/proc/self/status")
	if err != nil {
		return 0
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if v, ok := strings.CutPrefix(sc.Text(), "VmHWM:"); ok {
			kb, err := strconv.ParseUint(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(v), "kB")), 10, 64)
			if err == nil {
				return kb << 10
			}
		}
	}
	return 0
}

var _ = rpca.GD{}
