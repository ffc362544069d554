// Package rpca splits a data matrix Y into a low-rank part M and a sparse
// part S of gross corruptions (robust principal component analysis), also
// when most entries of Y are missing.
//
// The main method is the projected gradient descent of Yi, Park, Chen and
// Caramanis, "Fast Algorithms for Robust PCA via Gradient Descent"
// (NeurIPS 2016): Algorithm 1 for a fully observed Y and Algorithm 2 for a
// partially observed one (which also solves robust matrix completion). The
// baselines the paper compares against live in the packages altproj and
// ialm; all methods implement [Method] and are run through [Solve]:
//
//	p := &rpca.Problem{Dense: y}                      // or Observed: obs
//	s := rpca.Settings{Rank: 10, Alpha: 0.1}
//	res, err := rpca.Solve(ctx, p, s, &rpca.GD{})     // or &altproj.Method{}, &ialm.Method{}
//	m := res.LowRank()                                // forms U·Vᵀ on request
//
// The low-rank part is always returned as factors U (d1×k) and V (d2×k) with
// M = U·Vᵀ, and the sparse part as a [Sparse] matrix, so that results for
// matrices too large to hold densely stay small.
package rpca
