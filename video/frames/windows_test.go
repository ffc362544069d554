package frames

import (
	"slices"
	"testing"
)

func TestWindowSizes(t *testing.T) {
	for _, tc := range []struct {
		n, size int
		want    []int
	}{
		{0, 200, nil},
		{100, 200, []int{100}},
		{200, 200, []int{200}},
		{299, 200, []int{299}},
		{300, 200, []int{200, 100}},
		{450, 200, []int{200, 250}},
		{1000, 200, []int{200, 200, 200, 200, 200}},
	} {
		got := WindowSizes(tc.n, 0, tc.size)
		if !slices.Equal(got, tc.want) {
			t.Errorf("WindowSizes(%d, %d) = %v, want %v", tc.n, tc.size, got, tc.want)
		}
		sum := 0
		for _, k := range got {
			sum += k
			if k < tc.size/2 && len(got) > 1 {
				t.Errorf("WindowSizes(%d, %d): window of %d", tc.n, tc.size, k)
			}
		}
		if sum != tc.n {
			t.Errorf("WindowSizes(%d, %d) covers %d frames", tc.n, tc.size, sum)
		}
	}
}

// TestSeparateWindowsDir: a directory of 70 frames in windows of 30
// (30 + 40) gives the same frames, in order, as the whole clip, each
// window separated on its own; a video file through the stand-in ffmpeg
// gives windows of 30 and 40 as well.
