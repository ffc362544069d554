// Package rpca is the contract of robust principal component analysis:
// split a data matrix Y into a low-rank part M and a sparse part S of
// gross corruptions, also when most entries of Y are missing.
//
// A [Problem] holds Y (dense, or the observed entries Φ), [Settings] the
// rank r and the corruption fraction α, and a [Method] the algorithm.
// [Solve] checks the input, moves the data to a robust frame (location
// and scale), runs the method, folds a constant offset back in, and
// verifies the answer ([Verification]): a [Result] is either verified or
// says why not. The methods live in their own packages: gd (the gradient
// method of Yi, Park, Chen and Caramanis, NeurIPS 2016, Algorithms 1 and
// 2, and scaled steps), als, accaltproj, altproj and ialm; methods.Auto
// picks among them by the data and falls back when an answer fails its
// checks.
//
//	p := &rpca.Problem{Dense: y}                 // or Observed: obs
//	s := rpca.Settings{Rank: 10, Alpha: 0.1}
//	res, err := rpca.Solve(ctx, p, s, &gd.Method{}) // or &accaltproj.Method{}, &methods.Auto{}
//	m := res.LowRank()                           // forms U·Vᵀ on request
//
// The low-rank part is always returned as factors U (d1×k) and V (d2×k)
// with M = U·Vᵀ, and the sparse part as a [Sparse] matrix, so that
// results for matrices too large to hold densely stay small.
package rpca
