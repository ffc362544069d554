package formats_test

import (
	"github.com/rpca-gd/rpca"
	"github.com/rpca-gd/rpca/formats"
)

// The solver's sparse result can be written directly as sparse.mtx.
var _ formats.SparseMatrix = (*rpca.Sparse)(nil)
