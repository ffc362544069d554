package video

import (
	"strings"
	"testing"

	"github.com/rpca-gd/rpca"
)

// Notes names each condition once, with the number of windows it holds
// for, and nothing for a clean run.
func TestNotes(t *testing.T) {
	failed := &rpca.Verification{Failed: rpca.CheckStructure, Reason: "a reason"}
	kinds := func(ns []Note) string {
		var k []string
		for _, n := range ns {
			k = append(k, string(n.Kind))
			if n.Warning != (n.Kind == NoteUnconverged || n.Kind == NoteNotFitted) {
				t.Errorf("%s: warning %v", n.Kind, n.Warning)
			}
		}
		return strings.Join(k, ",")
	}
	clean := &Report{Mask: MaskSummary{ForegroundRate: 0.01}}
	if got := kinds(clean.Notes()); got != "" {
		t.Errorf("a clean run: %s", got)
	}
	// Windows: the foreground of any window counts; the counts are named.
	rep := &Report{Unverified: 2, Unconverged: 1, Verification: failed,
		Windows: []WindowInfo{{ForegroundRate: 0}, {ForegroundRate: 0.2}, {}}}
	ns := rep.Notes()
	if got := kinds(ns); got != "unverified,unconverged" {
		t.Fatalf("windows: %s", got)
	}
	if !strings.Contains(ns[0].Text, "2 of 3 windows") || !strings.Contains(ns[0].Text, "a reason") || !strings.Contains(ns[1].Text, "1 of the 3 windows") {
		t.Errorf("windows: %+v", ns)
	}
	rep.Windows[1].ForegroundRate = 0
	if got := kinds(rep.Notes()); got != "unverified,no-foreground,unconverged" {
		t.Errorf("no foreground in any window: %s", got)
	}
	// One separation.
	sep := &Separation{Result: &rpca.Result{Stop: rpca.StopMaxIter, Verification: failed}}
	ns = sep.Notes()
	if got := kinds(ns); got != "unverified,no-foreground,unconverged" || strings.Contains(ns[0].Text, "windows") {
		t.Errorf("one separation: %s %+v", got, ns)
	}
	// A stream: fitted, or never.
	stream := &Report{Mask: MaskSummary{ForegroundRate: 0.01}, Stream: &StreamReport{Fits: 3}}
	if got := kinds(stream.Notes()); got != "" {
		t.Errorf("a fitted stream: %s", got)
	}
	stream.Stream.Fits = 0
	if got := kinds(stream.Notes()); got != "not-fitted" {
		t.Errorf("a stream never fitted: %s", got)
	}
	sep = &Separation{MaskReport: MaskReport{Foreground: 0.1}} // the median: no result
	if got := kinds(sep.Notes()); got != "" {
		t.Errorf("the median: %s", got)
	}
}
