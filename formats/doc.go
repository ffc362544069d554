// Package formats reads and writes the file formats of the rpca command:
// NumPy .npy arrays, delimited text (CSV/TSV) of numbers, Matrix Market
// coordinate and array files, and "row col value" rating triplets with
// arbitrary string ids. It also provides atomic output: [WriteFileAtomic]
// for single files and [AtomicDir] for whole output directories.
//
// Every reader returns an error, never panics, on malformed input. Errors
// are one line, start with the file name given by the caller, and for text
// formats name the 1-based line (and field) of the problem. Readers check
// the sizes declared in a file's header against the bytes actually present
// before allocating, so a corrupt or hostile header cannot trigger a huge
// allocation.
package formats
