package request

import (
	"errors"
	"testing"
)

// TestError: the message names the model and the options, and the rule
// broken is the error's cause.
func TestError(t *testing.T) {
	rule := errors.New("they tune als")
	for _, c := range []struct {
		e    *Error
		want string
	}{
		{&Error{Scope: "ratings: model", Model: "gibbs", Err: rule}, "ratings: model gibbs: they tune als"},
		{&Error{Scope: "video: method", Model: "median", Options: []string{"mu", "gamma"}, Err: rule}, "video: method median with mu, gamma: they tune als"},
	} {
		if got := c.e.Error(); got != c.want || !errors.Is(c.e, rule) {
			t.Errorf("got %q (is the rule: %v), want %q", got, errors.Is(c.e, rule), c.want)
		}
	}
}
