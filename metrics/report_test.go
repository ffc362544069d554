package metrics

import (
	"encoding/json"
	"math"
	"testing"
)

func TestFinite(t *testing.T) {
	for _, c := range []struct {
		x          float64
		json, text string
	}{
		{1.5, "1.5", "1.5"},
		{0, "0", "0"},
		{math.NaN(), "null", "n/a"},
		{math.Inf(1), "null", "n/a"},
		{math.Inf(-1), "null", "n/a"},
	} {
		v := Finite(c.x)
		b, err := json.Marshal(v)
		if err != nil {
			t.Fatalf("Finite(%v): %v", c.x, err)
		}
		if string(b) != c.json || Format("%.3g", v) != c.text {
			t.Errorf("Finite(%v): JSON %s, text %q; want %s, %q", c.x, b, Format("%.3g", v), c.json, c.text)
		}
	}
}
