// Command bridge is the C interface of the rpca library for the Python
// package (python/rpca), built with go build -buildmode=c-shared into
// _librpca.so. A solve runs in a goroutine of its own: the caller starts
// it (rpca_start), waits for it in short steps (rpca_wait) so that its own
// thread stays free to notice Ctrl-C, reads its progress (rpca_progress),
// may cancel it (rpca_cancel), and then reads the result (rpca_result,
// rpca_copy_factors, rpca_copy_sparse) and frees it (rpca_free).
//
// Y is read from the caller's buffer: a C-ordered float64 array is used
// in place, any other layout or type is copied once into a Go matrix; the
// caller keeps the buffer alive until rpca_free.
package main

/*
#include <stdint.h>
#include <stdlib.h>
*/
import "C"

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"unsafe"

	"github.com/rpca-gd/rpca"
	"github.com/rpca-gd/rpca/internal/buildinfo"
	"github.com/rpca-gd/rpca/internal/gcpolicy"
	"github.com/rpca-gd/rpca/ratings"
)

func main() {}

// jobs are the solves and the ratings fits Python has started.
var jobs table[*job]

func lookup(h C.int64_t) *job { return jobs.get(h) }

// lookupTask returns the solve, fit or separation of handle h, nil for
// none.
func lookupTask(h C.int64_t) *task {
	if j := jobs.get(h); j != nil {
		return &j.task
	}
	if v := videoJobs.get(h); v != nil {
		return &v.task
	}
	return nil
}

// rpca_start reads Y (d1×d2, elements of dtype 0 = float64 or 1 =
// float32, strides in bytes) and the optional mask (uint8, nonzero =
// observed; NULL: every entry, NaN entries missing), parses the JSON
// configuration, and starts the solve. It returns a handle > 0, or 0 with
// *errOut set to a JSON error (free it with rpca_free_string).
//
//export rpca_start
func rpca_start(data unsafe.Pointer, dtype C.int, d1, d2, s0, s1 C.int64_t, mask unsafe.Pointer, m0, m1 C.int64_t, config *C.char, errOut **C.char) C.int64_t {
	in := input{data: data, float32: dtype == 1, d1: int(d1), d2: int(d2), s0: int(s0), s1: int(s1),
		mask: mask, m0: int(m0), m1: int(m1)}
	gcpolicy.Tighten(8 * float64(d1) * float64(d2)) // the data as float64
	j, err := start(in, C.GoString(config))
	if err != nil {
		*errOut = C.CString(errorJSON(err))
		return 0
	}
	return jobs.add(j)
}

// rpca_wait waits up to ms milliseconds for the solve, fit or separation
// h to end and returns 1 when it has, 0 otherwise.
//
//export rpca_wait
func rpca_wait(h C.int64_t, ms C.int) C.int {
	t := lookupTask(h)
	if t == nil || t.wait(int(ms)) {
		return 1
	}
	return 0
}

// rpca_progress writes the last iteration's number, relative residual
// and elapsed seconds (-1, NaN, 0 before the first).
//
//export rpca_progress
func rpca_progress(h C.int64_t, iter *C.int64_t, residual, seconds *C.double) {
	j := lookup(h)
	if j == nil {
		return
	}
	r := j.progress()
	*iter, *residual, *seconds = C.int64_t(r.Iter), C.double(r.Residual), C.double(r.Elapsed.Seconds())
}

// rpca_cancel asks the solve, fit or separation h to stop; a solve ends
// within one iteration.
//
//export rpca_cancel
func rpca_cancel(h C.int64_t) {
	if t := lookupTask(h); t != nil {
		t.cancel()
	}
}

// rpca_result returns the outcome of an ended solve as JSON: the report
// (see report) or an error ({"error": …, "kind": …}). Free it with
// rpca_free_string.
//
//export rpca_result
func rpca_result(h C.int64_t) *C.char {
	j := lookup(h)
	if j == nil {
		return noSuch("solve")
	}
	j.wait(-1)
	switch {
	case j.err != nil:
		return resultJSON(nil, j.err)
	case j.cv != nil:
		return resultJSON(j.cv, nil)
	case j.model != nil:
		return resultJSON(modelReport(j.model), nil)
	}
	return resultJSON(j.report(), nil)
}

// noSuch is the error JSON for a handle that names no live object of
// the kind what ("solve", "separation", "subtractor").
func noSuch(what string) *C.char { return resultJSON(nil, fmt.Errorf("rpca: no such %s", what)) }

// resultJSON returns v as JSON, or err (or the encoding's error) as an
// error's JSON, in a C string for the caller to free.
func resultJSON(v any, err error) *C.char {
	if err == nil {
		var b []byte
		if b, err = json.Marshal(v); err == nil {
			return C.CString(string(b))
		}
	}
	return C.CString(errorJSON(err))
}

// rpca_copy_factors copies U (d1×k) and V (d2×k), row-major, into u and
// v, which hold d1·k and d2·k doubles (k from the report).
//
//export rpca_copy_factors
func rpca_copy_factors(h C.int64_t, u, v *C.double) {
	j := lookup(h)
	if j == nil || j.res == nil {
		return
	}
	copyDense(unsafe.Pointer(u), j.res.U)
	copyDense(unsafe.Pointer(v), j.res.V)
}

// rpca_copy_sparse copies S in compressed rows: rowptr holds d1+1
// int64, colidx and val nnz int32 and doubles (nnz from the report).
//
//export rpca_copy_sparse
func rpca_copy_sparse(h C.int64_t, rowptr *C.int64_t, colidx *C.int32_t, val *C.double) {
	j := lookup(h)
	if j == nil || j.res == nil || j.res.S == nil {
		return
	}
	s := j.res.S
	rp := unsafe.Slice((*int64)(unsafe.Pointer(rowptr)), len(s.RowPtr))
	for i, p := range s.RowPtr {
		rp[i] = int64(p)
	}
	copy(unsafe.Slice((*int32)(unsafe.Pointer(colidx)), len(s.ColIdx)), s.ColIdx)
	copy(unsafe.Slice((*float64)(unsafe.Pointer(val)), len(s.Val)), s.Val)
}

// rpca_free cancels the solve if it runs, waits for it, and forgets it;
// the caller's buffers are not read after it returns.
//
//export rpca_free
func rpca_free(h C.int64_t) {
	j := lookup(h)
	if j == nil {
		return
	}
	j.cancel()
	j.wait(-1)
	jobs.remove(h)
}

// rpca_free_string frees a string returned by the library.
//
//export rpca_free_string
func rpca_free_string(s *C.char) { C.free(unsafe.Pointer(s)) }

// rpca_version returns the library's version line (free it with
// rpca_free_string).
//
//export rpca_version
func rpca_version() *C.char { return C.CString(buildinfo.Version()) }

// errorJSON is an error as the Python package reads it: its message and
// its kind (bad_input, bad_settings, canceled, error).
func errorJSON(err error) string {
	kind := "error"
	switch {
	case errors.Is(err, context.Canceled):
		kind = "canceled"
	case errors.Is(err, rpca.ErrBadSettings), errors.Is(err, errBadConfig):
		kind = "bad_settings"
	case errors.Is(err, rpca.ErrBadInput),
		// What the ratings give cannot be fitted (too few of them, no
		// rank they support): the caller's data.
		errors.Is(err, ratings.ErrTooFewRatings), errors.Is(err, ratings.ErrSelect):
		kind = "bad_input"
	}
	b, _ := json.Marshal(map[string]string{"error": err.Error(), "kind": kind})
	return string(b)
}
