package rpca

import (
	"context"
	"errors"
)

// GD is the paper's projected gradient method: Algorithm 1 for a fully
// observed Y, Algorithm 2 for a partially observed one (or for a dense Y
// subsampled at rate SampleRate).
type GD struct{}

// Name returns "gd".
func (g *GD) Name() string { return "gd" }

// Solve runs the gradient method.
func (g *GD) Solve(ctx context.Context, p *Problem, s Settings) (*Result, error) {
	return nil, errors.New("rpca: gd not implemented yet")
}
