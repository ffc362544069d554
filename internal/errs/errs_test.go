package errs

import (
	"errors"
	"testing"
)

func TestMarks(t *testing.T) {
	base := errors.New("x out of range")
	in, set := Input(base), Settings(base)
	switch {
	case in.Error() != base.Error() || set.Error() != base.Error():
		t.Errorf("texts changed: %q, %q", in, set)
	case !errors.Is(in, BadInput) || errors.Is(in, BadSettings) || !errors.Is(in, base):
		t.Errorf("Input: %v", in)
	case !errors.Is(set, BadInput) || !errors.Is(set, BadSettings) || !errors.Is(set, base):
		t.Errorf("Settings: %v", set)
	case Input(nil) != nil || Settings(nil) != nil:
		t.Error("nil marked")
	case Input(in) != in || Settings(set) != set:
		t.Error("marked twice")
	}
}
