package main

import (
	"bytes"
	"flag"
	"strings"
	"testing"
)

// TestHelpDocumentsEveryFlag checks that "rpca CMD -h" lists every flag of
// the commands of this file's owner, and the overview lists them.
func TestHelpDocumentsEveryFlag(t *testing.T) {
	e := &env{stdout: &bytes.Buffer{}, stderr: &bytes.Buffer{}}
	sets := map[string]*flag.FlagSet{
		"decompose": (&decomposeFlags{}).register(e),
		"complete":  (&completeFlags{}).register(e),
		"synth":     (&synthFlags{}).register(e),
	}
	overview := mustRun(t, "help").stdout
	for name, fs := range sets {
		if !strings.Contains(overview, "  "+name+" ") {
			t.Errorf("'rpca help' does not list %s", name)
		}
		r := mustRun(t, name, "-h")
		if !strings.HasPrefix(r.stdout, "Usage: rpca "+name) {
			t.Errorf("%s -h: %q", name, r.stdout[:min(len(r.stdout), 80)])
		}
		n := 0
		fs.VisitAll(func(f *flag.Flag) {
			n++
			if !strings.Contains(r.stdout, "  --"+f.Name+" ") && !strings.Contains(r.stdout, "  --"+f.Name+"\n") {
				t.Errorf("%s -h does not document --%s", name, f.Name)
			}
			if strings.TrimSpace(f.Usage) == "" {
				t.Errorf("%s: flag -%s has no description", name, f.Name)
			}
		})
		if n < 10 {
			t.Errorf("%s: only %d flags seen", name, n)
		}
		// "rpca help CMD" prints the same.
		if r2 := mustRun(t, "help", name); r2.stdout != r.stdout {
			t.Errorf("'rpca help %s' differs from '%s -h'", name, name)
		}
	}
}

func TestUnknownCommandAndFlag(t *testing.T) {
	wantError(t, 2, []string{"unknown command", "decomposer"}, "decomposer")
	// A mistyped flag gives one line, not the whole help.
	r := runCLI(t, t.Context(), "complete", "--hold-out", "0.1")
	if r.code != 2 || r.stdout != "" || strings.Count(r.stderr, "\n") != 1 || !strings.Contains(r.stderr, "-hold-out") {
		t.Errorf("exit %d, stdout %q, stderr %q", r.code, r.stdout, r.stderr)
	}
}
