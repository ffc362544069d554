package main

import (
	"bytes"
	"context"
	"encoding/csv"
	"image/png"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// runExp runs the rpca command line with captured streams.
func runExp(ctx context.Context, args ...string) (code int, stdout, stderr string) {
	var out, errb bytes.Buffer
	code = run(ctx, &env{stdout: &out, stderr: &errb}, args)
	return code, out.String(), errb.String()
}

func TestExperimentCommand(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "fig1a")
	code, out, errOut := runExp(context.Background(), "experiment", "fig1a", "--quick", "--d", "150", "--rank", "3", "--rates", "1,0.7", "--out", dir)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	if !strings.Contains(out, "wrote "+dir) || !strings.Contains(out, "contraction") {
		t.Errorf("stdout %q", out)
	}
	if !strings.Contains(errOut, "fig1a: GD p=0.7") {
		t.Errorf("no progress on stderr: %q", errOut)
	}
	f, err := os.Open(filepath.Join(dir, "fig1a_rates.csv"))
	if err != nil {
		t.Fatal(err)
	}
	recs, err := csv.NewReader(f).ReadAll()
	f.Close()
	if err != nil || len(recs) != 3 || recs[1][0] != "1" || recs[2][0] != "0.7" {
		t.Fatalf("fig1a_rates.csv: %v %v", recs, err)
	}
	pf, err := os.Open(filepath.Join(dir, "fig1a.png"))
	if err != nil {
		t.Fatal(err)
	}
	defer pf.Close()
	if _, err := png.Decode(pf); err != nil {
		t.Fatal(err)
	}

	// The directory now exists: no clobbering without --force.
	code, _, errOut = runExp(context.Background(), "experiment", "fig1a", "--quick", "--d", "150", "--rank", "3", "--rates", "1", "--out", dir, "--quiet")
	if code != 1 || !strings.Contains(errOut, "force") {
		t.Errorf("existing output: exit %d, %q", code, errOut)
	}
	code, _, errOut = runExp(context.Background(), "experiment", "fig1a", "--quick", "--d", "150", "--rank", "3", "--rates", "1", "--out", dir, "--quiet", "--force")
	if code != 0 || errOut != "" {
		t.Errorf("--force --quiet: exit %d, stderr %q", code, errOut)
	}
}

func TestExperimentVideoCommand(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "video")
	code, out, errOut := runExp(context.Background(), "experiment", "video", "--quick", "--clips", "synthetic", "--max-frames", "50", "--max-iter", "100", "--out", dir, "--quiet")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	for _, name := range []string{"video-synthetic.png", "video_runs.csv", "video_scores.csv", "summary.txt"} {
		if st, err := os.Stat(filepath.Join(dir, name)); err != nil || st.Size() == 0 {
			t.Errorf("%s: %v", name, err)
		}
	}
	if !strings.Contains(out, "IALM") {
		t.Errorf("stdout %q", out)
	}
}

func TestExperimentUsage(t *testing.T) {
	ctx := context.Background()
	out := filepath.Join(t.TempDir(), "x")
	for _, c := range []struct {
		args []string
		code int
		want string
	}{
		{[]string{"experiment"}, 2, "missing NAME"},
		{[]string{"experiment", "fig7"}, 2, "unknown experiment"},
		{[]string{"experiment", "fig1a", "--rates", "1,x", "--out", out}, 2, "flag -rates"},
		{[]string{"experiment", "fig1a", "--rates", "2", "--out", out}, 2, "flag -rates"},
		{[]string{"experiment", "fig1b", "--dims", "1000,abc", "--out", out}, 2, "flag -dims"},
		{[]string{"experiment", "video", "--scale", "3", "--out", out}, 2, "flag -scale"},
		{[]string{"experiment", "fig1a", "--gamma", "-1", "--out", out}, 2, "flag -gamma"},
		{[]string{"experiment", "fig1a", "--step", "-1", "--out", out}, 2, "flag -step"},
		{[]string{"experiment", "fig1a", "extra", "--out", out}, 2, "unexpected argument"},
	} {
		code, _, errOut := runExp(ctx, c.args...)
		if code != c.code || !strings.Contains(errOut, c.want) {
			t.Errorf("%v: exit %d, stderr %q; want %d and %q", c.args, code, errOut, c.code, c.want)
		}
	}
	if _, err := os.Stat(out); err == nil {
		t.Error("a usage error created the output directory")
	}
	code, stdout, _ := runExp(ctx, "experiment", "-h")
	if code != 0 || !strings.Contains(stdout, "fig1b") || !strings.Contains(stdout, "--quick") {
		t.Errorf("help: exit %d, %q", code, stdout)
	}
	// A cancelled run exits with 130 and writes nothing.
	cctx, cancel := context.WithCancel(ctx)
	cancel()
	code, _, _ = runExp(cctx, "experiment", "fig1c", "--quick", "--d", "100", "--rank", "2", "--out", out, "--quiet")
	if code != 130 {
		t.Errorf("cancelled: exit %d, want 130", code)
	}
	if _, err := os.Stat(out); err == nil {
		t.Error("a cancelled run created the output directory")
	}
}
