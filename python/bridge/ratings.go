package main

/*
#include <stdint.h>
*/
import "C"

import (
	"cmp"
	"context"
	"fmt"
	"math"
	"runtime/debug"
	"slices"
	"strconv"
	"unsafe"

	"github.com/rpca-gd/rpca"
	"github.com/rpca-gd/rpca/formats"
	"github.com/rpca-gd/rpca/formats/triples"
	"github.com/rpca-gd/rpca/ratings"
)

// completeConfig is the JSON configuration of a rating fit.
type completeConfig struct {
	Model string      `json:"model"` // gibbs (default) or als
	Rank  int         `json:"rank"`  // 0: 10 for gibbs, chosen by validation for als
	Alpha float64     `json:"alpha"`
	Ridge float64     `json:"ridge"` // als
	Clip  *[2]float64 `json:"clip"`
	Seed  uint64      `json:"seed"`
	CV    int         `json:"cv"` // > 0: cross-validate with this many folds instead of fitting
}

// rpca_complete_start fits a rating model (package ratings, rpca
// complete's defaults) to n ratings (user index, item index, value), the
// indices in [0, d1) and [0, d2); with "cv": K it cross-validates
// instead. It returns a handle, or 0 with *errOut set.
//
//export rpca_complete_start
func rpca_complete_start(users, items *C.int64_t, vals *C.double, n C.int64_t, config *C.char, errOut **C.char) C.int64_t {
	var c completeConfig
	if err := jsonStrict(C.GoString(config), &c); err != nil {
		*errOut = C.CString(errorJSON(fmt.Errorf("%w: %v", errBadConfig, err)))
		return 0
	}
	r, err := ratingsOf(unsafe.Slice((*int64)(unsafe.Pointer(users)), int(n)), unsafe.Slice((*int64)(unsafe.Pointer(items)), int(n)),
		unsafe.Slice((*float64)(unsafe.Pointer(vals)), int(n)))
	if err != nil {
		*errOut = C.CString(errorJSON(err))
		return 0
	}
	opt, err := c.options()
	if err != nil {
		*errOut = C.CString(errorJSON(err))
		return 0
	}
	opt.Settings.Seed = max(c.Seed, 1)
	ctx, cancel := context.WithCancel(context.Background())
	j := &job{task: task{done: make(chan struct{}), cancel: cancel}}
	j.last = rpca.Record{Iter: -1, Residual: math.NaN()}
	opt.Settings.Callback = func(rec rpca.Record) {
		j.mu.Lock()
		j.last = rec
		j.mu.Unlock()
	}
	go func() {
		defer close(j.done)
		defer func() {
			if p := recover(); p != nil {
				j.err = fmt.Errorf("rpca: internal error: %v (please report this)\n%s", p, debug.Stack())
			}
		}()
		if c.CV > 0 {
			o := opt
			o.Settings.Callback = nil
			j.cv, j.err = ratings.CrossValidate(ctx, r, c.CV, opt.Settings.Seed, o, func(f int, _ ratings.Fold) {
				j.mu.Lock()
				j.last = rpca.Record{Iter: f + 1, Residual: math.NaN()}
				j.mu.Unlock()
			})
			return
		}
		j.model, j.err = ratings.Fit(ctx, r, nil, opt)
	}()
	return jobs.add(j)
}

// options are the fit's options, the model chosen by the library
// (ratings.Choose) as rpca complete chooses it; both models fit the
// biases, and the ridge is an error for Gibbs, which has none.
func (c completeConfig) options() (ratings.Options, error) {
	if c.Model != "" && c.Model != ratings.ModelGibbs && c.Model != ratings.ModelALS {
		return ratings.Options{}, fmt.Errorf("%w: model must be gibbs or als, got %q", errBadConfig, c.Model)
	}
	req := ratings.Request{Model: cmp.Or(c.Model, ratings.ModelGibbs), Rank: c.Rank, Alpha: c.Alpha, Given: []string{"biases"}, Biases: true}
	if c.Ridge != 0 {
		req.Given = append(req.Given, "ridge")
		req.Params = map[string]string{"ridge": strconv.FormatFloat(c.Ridge, 'g', -1, 64)}
	}
	ch, err := ratings.Choose(req)
	if err != nil {
		return ratings.Options{}, fmt.Errorf("%w: %v", errBadConfig, err)
	}
	opt := ch.Options
	opt.Clip = c.Clip
	return opt, nil
}

// ratingsOf builds the ratings with ids "0", "1", … from index arrays.
func ratingsOf(users, items []int64, vals []float64) (*triples.Ratings, error) {
	r := &triples.Ratings{RowIndex: map[string]int{}, ColIndex: map[string]int{}}
	id := func(ids *[]string, index map[string]int, k int64) int {
		s := strconv.FormatInt(k, 10)
		if i, ok := index[s]; ok {
			return i
		}
		index[s] = len(*ids)
		*ids = append(*ids, s)
		return index[s]
	}
	r.Triplets = formats.Triplets{Row: make([]int, len(vals)), Col: make([]int, len(vals)), Val: slices.Clone(vals)} // the caller's buffer is not kept
	for k := range vals {
		if users[k] < 0 || items[k] < 0 {
			return nil, rpca.BadInput(fmt.Errorf("rpca: rating %d has a negative index", k))
		}
		r.Row[k] = id(&r.RowIDs, r.RowIndex, users[k])
		r.Col[k] = id(&r.ColIDs, r.ColIndex, items[k])
	}
	r.D1, r.D2 = len(r.RowIDs), len(r.ColIDs)
	return r, nil
}

// rpca_complete_predict writes the predictions for n (user, item) index
// pairs into out and, in known, 1 where the model knew both (else the
// bias model or the training mean predicted).
//
//export rpca_complete_predict
func rpca_complete_predict(h C.int64_t, users, items *C.int64_t, n C.int64_t, out *C.double, known *C.uint8_t) {
	j := lookup(h)
	if j == nil || j.model == nil {
		return
	}
	us := unsafe.Slice((*int64)(unsafe.Pointer(users)), int(n))
	is := unsafe.Slice((*int64)(unsafe.Pointer(items)), int(n))
	o := unsafe.Slice((*float64)(unsafe.Pointer(out)), int(n))
	kn := unsafe.Slice((*uint8)(unsafe.Pointer(known)), int(n))
	for k := range o {
		v, ok := j.model.PredictAny(strconv.FormatInt(us[k], 10), strconv.FormatInt(is[k], 10))
		o[k], kn[k] = v, 0
		if ok {
			kn[k] = 1
		}
	}
}

// modelReport describes a rating fit for Python.
func modelReport(m *ratings.Model) map[string]any {
	rep := map[string]any{"method": m.Result.Method, "rank": m.Options.Rank, "iterations": m.Result.Iterations,
		"stop": string(m.Result.Stop), "users": len(m.RowIDs), "items": len(m.ColIDs), "train_mean": m.TrainMean,
		"outliers": m.Result.S.NNZ(), "set_aside": m.SetAside}
	if m.Result.Verification != nil {
		rep["verification"] = m.Result.Verification
	}
	if w := m.Warnings(); w != nil {
		rep["warnings"] = w
	}
	return rep
}

// rpca_complete_top writes the model's n best items for the user of
// index user (ratings.Predictor.TopN: the items the user has no training
// rating for, by the unclipped prediction) into items (indices) and preds
// (the clipped predictions), and returns how many it wrote, or -1 when
// the user has no training rating.
//
//export rpca_complete_top
func rpca_complete_top(h C.int64_t, user, n C.int64_t, items *C.int64_t, preds *C.double) C.int64_t {
	j := lookup(h)
	if j == nil || j.model == nil || n <= 0 {
		return -1
	}
	recs, err := j.model.TopN(context.Background(), []string{strconv.FormatInt(int64(user), 10)}, int(n), 1)
	if err != nil {
		return -1
	}
	it := unsafe.Slice((*int64)(unsafe.Pointer(items)), int(n))
	pr := unsafe.Slice((*float64)(unsafe.Pointer(preds)), int(n))
	for k, r := range recs {
		id, err := strconv.ParseInt(r.ColID, 10, 64)
		if err != nil {
			return -1
		}
		it[k], pr[k] = id, r.Prediction
	}
	return C.int64_t(len(recs))
}
