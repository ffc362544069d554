package rpca

import (
	"context"
	"errors"
	"fmt"
)

// Method is an algorithm that decomposes a Problem. The gradient method of
// the paper is [GD]; the baselines are altproj.Method and ialm.Method.
// Implementations must honour ctx, validate their own parameters, and
// return errors (never panic) for bad input.
type Method interface {
	// Name is a short identifier such as "gd", "altproj" or "ialm".
	Name() string

	// Solve runs the method. Callers should use [Solve], which validates
	// the problem and the shared settings first.
	Solve(ctx context.Context, p *Problem, s Settings) (*Result, error)
}

// Solve decomposes p with method m (the gradient method [GD] with its
// defaults when m is nil). It checks the problem and the shared settings,
// then hands over to the method. On cancellation it returns ctx's error.
func Solve(ctx context.Context, p *Problem, s Settings, m Method) (*Result, error) {
	if err := p.Validate(); err != nil {
		return nil, err
	}
	d1, d2 := p.Dims()
	if err := s.validate(d1, d2); err != nil {
		return nil, err
	}
	if s.Stop.TargetError > 0 && p.Truth == nil {
		return nil, errNoTruth
	}
	if m == nil {
		m = &GD{}
	}
	if ctx == nil {
		ctx = context.Background()
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	res, err := m.Solve(ctx, p, s)
	if err != nil {
		return nil, err
	}
	if res == nil {
		return nil, fmt.Errorf("rpca: method %s returned no result", m.Name())
	}
	return res, nil
}

// ErrDiverged is wrapped by the error a method returns when its iterates
// become non-finite or explode; the message names the likely cause.
var ErrDiverged = errors.New("rpca: iterates diverged")

// ErrDenseOnly is returned by methods that need a fully observed matrix
// when given a partially observed one.
var ErrDenseOnly = errors.New("rpca: method needs a fully observed (dense) matrix")
