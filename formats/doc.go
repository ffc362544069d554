// Package formats holds what the file format packages below it share: the
// one-line Error with file, line and column, ErrNonFinite, and Triplets, a
// list of entries read from a coordinate file.
//
// The formats themselves are one package each, with Read and Write:
//
//	formats/npy      NumPy .npy arrays (any numeric dtype in, float64/float32 out)
//	formats/delim    delimited text of numbers (CSV, TSV, white space)
//	formats/mtx      Matrix Market, coordinate and array
//	formats/triples  "row col value" ratings and "row col" pairs with string ids
//
// Every reader returns an error, never panics, on malformed input. Errors
// are one line, start with the file name given by the caller, and for text
// formats name the 1-based line (and field) of the problem. Readers check
// the sizes declared in a file's header against the bytes actually present
// before allocating, so a corrupt or hostile header cannot trigger a huge
// allocation. Atomic output (files and whole directories) is package
// outdir.
package formats
