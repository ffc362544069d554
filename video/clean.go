package video

// cleanMask makes a foreground mask of one w×h frame (row-major) spatially
// coherent, returning a new mask:
//
//  1. a filter with hysteresis over the (2·radius+1)² window around each
//     pixel (clipped at the border): a foreground pixel stays foreground
//     when more than a third of its window is foreground, and a
//     background pixel becomes foreground when more than two thirds is.
//     It removes isolated pixels and thin streaks and fills small holes,
//     but keeps the corners of a solid object (a plain majority filter
//     rounds them off, a loss of 4 pixels per corner for a 3×3 window);
//  2. connected foreground regions (4-connected) of fewer than minSize
//     pixels are dropped.
//
// radius 0 skips step 1 and minSize ≤ 1 skips step 2. It panics if
// len(mask) ≠ w·h (a programming error).
func cleanMask(mask []bool, w, h, radius, minSize int) []bool {
	if len(mask) != w*h {
		panic("video: cleanMask size mismatch")
	}
	out := make([]bool, len(mask))
	copy(out, mask)
	if radius > 0 {
		// Summed-area table of the mask: O(w·h) whatever the radius.
		sat := make([]int32, (w+1)*(h+1))
		summedArea(sat, w, h, func(i int) int32 {
			if mask[i] {
				return 1
			}
			return 0
		})
		for y := 0; y < h; y++ {
			for x := 0; x < w; x++ {
				n, a := windowSum(sat, w, h, radius, x, y)
				area := int32(a)
				if mask[y*w+x] {
					out[y*w+x] = 3*n > area
				} else {
					out[y*w+x] = 3*n > 2*area
				}
			}
		}
	}
	if minSize > 1 {
		eachRegion(out, w, h, func(region []int) {
			if len(region) < minSize {
				for _, p := range region {
					out[p] = false
				}
			}
		})
	}
	return out
}

// eachRegion calls fn with the pixel indices of every 4-connected
// foreground region of the w×h mask, in the order of their first pixel
// (row-major). fn may clear the region's pixels in mask; the slice it gets
// is reused after it returns.
func eachRegion(mask []bool, w, h int, fn func(region []int)) {
	seen := make([]bool, len(mask))
	var stack, region []int
	for start := range mask {
		if !mask[start] || seen[start] {
			continue
		}
		region = region[:0]
		stack = append(stack[:0], start)
		seen[start] = true
		for len(stack) > 0 {
			p := stack[len(stack)-1]
			stack = stack[:len(stack)-1]
			region = append(region, p)
			x, y := p%w, p/w
			for _, q := range [4][2]int{{x - 1, y}, {x + 1, y}, {x, y - 1}, {x, y + 1}} {
				if q[0] < 0 || q[0] >= w || q[1] < 0 || q[1] >= h {
					continue
				}
				if i := q[1]*w + q[0]; mask[i] && !seen[i] {
					seen[i] = true
					stack = append(stack, i)
				}
			}
		}
		fn(region)
	}
}
