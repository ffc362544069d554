package decompose

import (
	"fmt"

	"github.com/rpca-gd/rpca"
	"github.com/rpca-gd/rpca/internal/note"
	"github.com/rpca-gd/rpca/metrics"
)

// Note is one condition of a result in words, without the remedy, which
// a program adds in its own terms from Kind.
type Note = note.Note

// The conditions Notes reports.
const (
	// NoteFallback: a run of rpca.Solve was not verified, and the next
	// (a continuation, or the next method of a chain) was tried.
	NoteFallback note.Kind = "fallback"
	// NoteKept: after such runs, the answer kept is verified.
	NoteKept note.Kind = "kept"
	// NoteUnverified: the answer is not verified (a warning).
	NoteUnverified note.Kind = "unverified"
	// NoteUnconverged: a result without a verification (a regularised
	// fit, such as rpca complete's) stopped before its convergence rule
	// (a warning).
	NoteUnconverged note.Kind = "unconverged"
)

// Notes says what became of the verification of res: a note for each
// run that Solve left for the next, and a warning, naming the check that
// failed, when the answer kept is not verified. A result without a
// verification gets a warning when its method stopped before converging.
func Notes(res *rpca.Result) []Note {
	if res == nil {
		return nil
	}
	if res.Verification == nil {
		if res.Stop.Converged() {
			return nil
		}
		return []Note{{Kind: NoteUnconverged, Warning: true, Text: fmt.Sprintf("%s stopped (%s) after %d iterations without converging (residual %s); its answer may be inaccurate",
			res.Method, res.Stop, res.Iterations, metrics.Format("%.3g", metrics.Finite(res.Residual)))}}
	}
	var out []Note
	for i, a := range res.Attempts {
		if i == len(res.Attempts)-1 || a.Verified {
			break
		}
		why := fmt.Sprintf("not verified (%s check)", a.Failed)
		if a.Err != "" {
			why = "failed: " + a.Err
		}
		next := "trying " + res.Attempts[i+1].Method
		if res.Attempts[i+1].Continued {
			next = "letting it go on from that answer"
		}
		out = append(out, Note{Kind: NoteFallback, Text: fmt.Sprintf("%s's answer was %s; %s", a.Method, why, next)})
	}
	if v := res.Verification; !v.Verified {
		out = append(out, Note{Kind: NoteUnverified, Warning: true, Text: fmt.Sprintf("%s's answer is %s", res.Method, v)})
	} else if len(res.Attempts) > 1 {
		out = append(out, Note{Kind: NoteKept, Text: fmt.Sprintf("kept %s's answer, which is verified", res.Method)})
	}
	return out
}
