package mtx_test

import (
	"github.com/rpca-gd/rpca"
	"github.com/rpca-gd/rpca/formats/mtx"
)

// The solver's sparse result can be written directly as sparse.mtx.
var _ mtx.Sparse = (*rpca.Sparse)(nil)

// So can the observed entries of a partially observed problem.
var _ mtx.Sparse = (*rpca.Observed)(nil)
