package video

import (
	"fmt"

	"github.com/rpca-gd/rpca"
	"github.com/rpca-gd/rpca/internal/note"
)

// NoteKind names a condition of a separation that its user should know
// of (Note).
type NoteKind = note.Kind

// The conditions [Report.Notes] and [Separation.Notes] report.
const (
	// NoteUnverified: rpca.Solve did not verify the low-rank background of
	// some windows; the masks still come from the residual.
	NoteUnverified NoteKind = "unverified"
	// NoteNoForeground: no pixel of any frame was marked as foreground.
	NoteNoForeground NoteKind = "no-foreground"
	// NoteUnconverged: some windows' solves ended at the iteration cap
	// (a warning: their backgrounds may be inaccurate).
	NoteUnconverged NoteKind = "unconverged"
	// NoteNotFitted: a stream never fitted its background (the frames
	// were too few or too small for the model), so every frame was
	// compared with the per-pixel median of the frames before it (a
	// warning).
	NoteNotFitted NoteKind = "not-fitted"
)

// Note is one condition of a separation in words, without the remedy,
// which a program adds in its own terms (a flag, a keyword argument)
// from Kind.
type Note = note.Note

// Notes lists the conditions of the run that its user should know of.
func (r *Report) Notes() []Note {
	fg := r.Mask.ForegroundRate > 0
	for _, w := range r.Windows {
		fg = fg || w.ForegroundRate > 0
	}
	out := notes(r.Unverified, max(len(r.Windows), 1), r.Verification, !fg, r.Unconverged)
	if r.Stream != nil && r.Stream.Fits == 0 {
		out = append(out, Note{Kind: NoteNotFitted, Warning: true, Text: "the stream's background was never fitted (the frames were too few or too small for the model): every frame was compared with the per-pixel median of the frames before it"})
	}
	return out
}

// Notes lists the conditions of the separation that its user should know
// of (Report.Notes for one window).
func (s *Separation) Notes() []Note {
	unverified, unconverged := 0, 0
	var v *rpca.Verification
	if res := s.Result; res != nil {
		v = res.Verification
		if v != nil && !v.Verified {
			unverified = 1
		}
		if !res.Stop.Converged() {
			unconverged = 1
		}
	}
	return notes(unverified, 1, v, s.MaskReport.Foreground == 0, unconverged)
}

// notes words the conditions of a run of the given number of windows.
func notes(unverified, windows int, first *rpca.Verification, noForeground bool, unconverged int) []Note {
	var out []Note
	switch {
	case unverified > 0 && windows == 1:
		out = append(out, Note{Kind: NoteUnverified, Text: fmt.Sprintf("the low-rank background is not verified as an exact robust-PCA fit (%s); the masks come from the residual all the same", first)})
	case unverified > 0:
		out = append(out, Note{Kind: NoteUnverified, Text: fmt.Sprintf("the low-rank background of %d of %d windows is not verified as an exact robust-PCA fit (first window: %s); the masks come from the residual all the same", unverified, windows, first)})
	}
	if noForeground {
		out = append(out, Note{Kind: NoteNoForeground, Text: "no pixel of any frame was marked as foreground; if something moves in the clip, the decision is too strict for it"})
	}
	switch {
	case unconverged > 0 && windows == 1:
		out = append(out, Note{Kind: NoteUnconverged, Warning: true, Text: "the solve stopped at the iteration cap without converging; the background may be inaccurate"})
	case unconverged > 0:
		out = append(out, Note{Kind: NoteUnconverged, Warning: true, Text: fmt.Sprintf("%d of the %d windows stopped at the iteration cap without converging; their backgrounds may be inaccurate", unconverged, windows)})
	}
	return out
}
