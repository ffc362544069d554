package rpca_test

import (
	"testing"

	"github.com/rpca-gd/rpca/gd"

	"github.com/rpca-gd/rpca"
	"github.com/rpca-gd/rpca/accaltproj"
	"github.com/rpca-gd/rpca/internal/kernels"
)

// BenchmarkAssemblyLevels runs whole iterations of Algorithm 1 and of
// AccAltProj at d = 3000, r = 10, α = 0.1 with each instruction set level
// of the dense micro-kernels, so that the assembly is weighed against the
// project's own pure-Go kernels (docs/performance.md, "Assembly"). A level
// the machine lacks is skipped.
func BenchmarkAssemblyLevels(b *testing.B) {
	methods := []struct {
		name string
		new  func() rpca.Method
	}{
		{"gd", func() rpca.Method { return &gd.Method{} }},
		{"accaltproj", func() rpca.Method { return &accaltproj.Method{} }},
	}
	for _, m := range methods {
		for _, level := range kernels.Levels {
			b.Run(m.name+"/"+level, func(b *testing.B) {
				prev, ok := kernels.SetLevel(level)
				if !ok {
					b.Skipf("no %s kernels in this build or on this machine", level)
				}
				defer kernels.SetLevel(prev)
				benchGD(b, 3000, m.new, rpca.Stop{MaxIter: 10})
			})
		}
	}
}
