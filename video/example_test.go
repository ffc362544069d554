package video_test

import (
	"context"
	"fmt"

	"github.com/rpca-gd/rpca/video"
)

// Separate a generated clip in which a light is switched on halfway
// through: the rank check finds the background's second state, and the
// foreground masks are scored against the clip's truth. For real frames,
// load them with frames.Load(ctx, "frames/", frames.Options{}) (package video/frames).
func ExampleSeparate() {
	clip, err := video.Generate(video.SceneLightSwitch, video.GenerateOptions{Width: 64, Height: 48, Frames: 60, Seed: 1})
	if err != nil {
		panic(err)
	}
	sep, err := video.Separate(context.Background(), clip.Sequence, video.DefaultOptions())
	if err != nil {
		panic(err)
	}
	s, err := clip.Score(sep.Masks)
	if err != nil {
		panic(err)
	}
	fmt.Printf("background rank %d (%s), foreground F ≥ 0.9: %v\n", sep.Rank, sep.RankRule, s.F >= 0.9)
	// Output: background rank 2 (robust), foreground F ≥ 0.9: true
}
