package experiment

import (
	"context"
	"fmt"
	"time"

	"github.com/rpca-gd/rpca"
	"github.com/rpca-gd/rpca/accaltproj"
	"github.com/rpca-gd/rpca/video"
	"gonum.org/v1/plot"
)

// runScenes separates one generated clip of each kind of changing
// background (video.Scenes) with the tool's defaults (video.DefaultOptions:
// ScaledGD, rank from the data), with AccAltProj in their place, and with
// the per-pixel temporal median, all with the same foreground decision,
// and scores the masks against the clips' truth, pooled over the frames.
// Files: scenes.csv (scene, method, rank, rank rule, precision, recall, F,
// seconds of the whole separation) and scenes.png (F per scene and
// method).
func runScenes(ctx context.Context, w *writer, o *Options) error {
	size := video.GenerateOptions{Seed: o.Seed}
	if o.Quick {
		size.Width, size.Height, size.Frames = 64, 48, 60
	}
	methods := []struct {
		label string
		opts  func() video.SeparateOptions
	}{
		{"default (scaledgd)", video.DefaultOptions},
		{"accaltproj", func() video.SeparateOptions {
			s := video.DefaultOptions()
			s.Method, s.Settings.Stop = &accaltproj.Method{}, rpca.Stop{}
			return s
		}},
		{"median", func() video.SeparateOptions {
			s := video.DefaultOptions()
			s.Method = nil
			return s
		}},
	}
	header := []string{"scene", "method", "rank", "rank_rule", "precision", "recall", "f_measure", "seconds"}
	var rows [][]string
	c := &chart{title: "foreground F on generated scenes", ylabel: "F (pooled over the frames)"}
	for _, m := range methods {
		c.series = append(c.series, series{name: m.label, noLine: true})
	}
	w.sumf("%-13s %-19s %4s %-7s %9s %7s %7s %8s", "scene", "method", "rank", "rule", "precision", "recall", "F", "seconds")
	for _, sc := range video.Scenes {
		clip, err := video.Generate(sc, size)
		if err != nil {
			return err
		}
		w.logf("scenes: %s: %d×%d, %d frames", sc, clip.Width, clip.Height, len(clip.Names))
		x := float64(len(c.xticks))
		c.xticks = append(c.xticks, plot.Tick{Value: x, Label: string(sc)})
		for k, m := range methods {
			if err := ctx.Err(); err != nil {
				return err
			}
			t0 := time.Now()
			sep, err := video.Separate(ctx, clip.Sequence, m.opts())
			if err != nil {
				return fmt.Errorf("scenes: %s: %s: %w", sc, m.label, err)
			}
			secs := time.Since(t0).Seconds()
			s, err := clip.Score(sep.Masks)
			if err != nil {
				return err
			}
			ser := &c.series[k]
			ser.xs, ser.ys = append(ser.xs, x-0.2+0.2*float64(k)), append(ser.ys, s.F)
			rows = append(rows, []string{string(sc), m.label, itoa(sep.Rank), sep.RankRule, num(s.Precision), num(s.Recall), num(s.F), num(secs)})
			w.sumf("%-13s %-19s %4d %-7s %9.3f %7.3f %7.3f %8.2f", sc, m.label, sep.Rank, sep.RankRule, s.Precision, s.Recall, s.F, secs)
		}
	}
	if err := w.writeCSV("scenes.csv", header, rows); err != nil {
		return err
	}
	return w.writeFile("scenes.png", c.writePNG)
}
