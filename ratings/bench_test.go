package ratings

import (
	"context"
	"os"
	"runtime"
	"runtime/debug"
	"testing"
	"time"

	"github.com/rpca-gd/rpca/internal/methodtest"
)

// BenchmarkFitGenerated fits Generate's ratings at rank 10 with α = 0.05,
// as rpca complete --rank 10 --alpha 0.05 --holdout 0.01 [--method als]
// does (Algorithm 2's T with per-line counts on the ratings minus their
// median; the paper's gradient steps, or alternating least squares), and reports
// the generation and fit times, the iterations, the peak resident memory
// of the process (VmHWM on Linux), the held-out RMSE on clean ratings, and
// the precision and recall of the ratings set aside against the junk.
// It also fits the Gibbs fit of Defaults() with α = 0.05 (rpca complete
// --alpha 0.05 at its defaults). It runs a tenth of the MovieLens 20M
// shape with the three; RPCA_BENCH_ML20M=1 runs the full MovieLens20M
// shape (20 million ratings) with alternating least squares and Gibbs
// only (the gradient steps would take about 1000 iterations of a second
// each):
//
//	RPCA_BENCH_ML20M=1 go test -run x -bench FitGenerated -benchtime 1x -timeout 30m ./ratings
func BenchmarkFitGenerated(b *testing.B) {
	s := MovieLens20M
	shape := "ml20m-tenth"
	gibbs := Defaults()
	gibbs.Alpha = 0.05
	fits := []struct {
		name string
		opt  Options
	}{
		{"als", Options{Rank: 10, Alpha: 0.05, Model: &ALS{}}},
		{"gibbs", gibbs},
		{"gd", Options{Rank: 10, Alpha: 0.05, Model: &Gradient{}}},
	}
	if os.Getenv("RPCA_BENCH_ML20M") != "" {
		shape, fits = "ml20m", fits[:2]
	} else {
		s.Users, s.Items, s.Ratings = s.Users/10, s.Items/10, s.Ratings/10
	}
	for _, f := range fits {
		benchFit(b, shape+"/"+f.name, s, f.opt)
	}
}

func benchFit(b *testing.B, name string, s Shape, o Options) {
	b.Run(name, func(b *testing.B) {
		for range b.N {
			runtime.GC()
			debug.FreeOSMemory()
			methodtest.ResetPeakRSS()
			t0 := time.Now()
			g, err := Generate(s)
			if err != nil {
				b.Fatal(err)
			}
			gen := time.Since(t0)
			held := HoldOut(g.Len(), 0.01, 1)
			t1 := time.Now()
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
			b.ReportMetric(float64(methodtest.PeakRSS())/(1<<20), "peak-MiB")
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

// BenchmarkFitMovieLens fits the MovieLens ratings file named by
// RPCA_MOVIELENS at Defaults() (rpca complete's defaults, the Gibbs fit)
// and by alternating least squares with the rank and ridge chosen by
// validation, with 20% held out (HoldOut, seed 1), and reports the
// held-out RMSE:
//
//	RPCA_MOVIELENS=$PWD/../shared/data/ratings/ml-latest-small/ratings.csv go test -run x -bench FitMovieLens -count 5 ./ratings
func BenchmarkFitMovieLens(b *testing.B) {
	r := movieLens(b)
	held := HoldOut(r.Len(), 0.2, 1)
	clip := &[2]float64{0.5, 5}
	for _, c := range []struct {
		name string
		opt  Options
	}{{"gibbs", Defaults()}, {"als-auto", Options{Baseline: BaselineBiases}}} {
		b.Run(c.name, func(b *testing.B) {
			c.opt.Clip = clip
			var m *Model
			var err error
			for b.Loop() {
				if m, err = Fit(context.Background(), r, held, c.opt); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(m.Evaluate(r, held).RMSE, "rmse")
		})
	}
}
