package video_test

import (
	"context"
	"fmt"

	"github.com/rpca-gd/rpca/metrics"
	"github.com/rpca-gd/rpca/video"
)

// Separate a generated clip in which a light is switched on halfway
// through: the rank check finds the background's second state, and the
// foreground masks are scored against the clip's truth. For real frames,
// load them with video.Load(ctx, "frames/", video.Options{}).
func ExampleSeparate() {
	clip, err := video.Generate(video.SceneLightSwitch, video.GenerateOptions{Width: 64, Height: 48, Frames: 60, Seed: 1})
	if err != nil {
		panic(err)
	}
	sep, err := video.Separate(context.Background(), clip.Sequence, video.DefaultOptions())
	if err != nil {
		panic(err)
	}
	var pred, truth []bool
	for j, t := range clip.Truth {
		truth = append(truth, t...)
		for i := range t {
			pred = append(pred, sep.Masks.At(i, j) > 0)
		}
	}
	s, err := metrics.Detect(pred, truth)
	if err != nil {
		panic(err)
	}
	fmt.Printf("background rank %d (%s), foreground F ≥ 0.9: %v\n", sep.Rank, sep.RankRule, s.F >= 0.9)
	// Output: background rank 2 (robust), foreground F ≥ 0.9: true
}
