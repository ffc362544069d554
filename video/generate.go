package video

import (
	"cmp"
	"fmt"
	"math"
	"math/rand/v2"

	"gonum.org/v1/gonum/mat"

	"github.com/rpca-gd/rpca/metrics"
	"github.com/rpca-gd/rpca/video/frames"
)

// Scene names a family of generated clips whose foreground is known
// pixel by pixel ([Generate]). Each family is one way in which a real
// background departs from a single still image.
type Scene string

// The generated scenes. Every scene but SceneStatic has moving objects on
// a textured background; the truth masks cover the objects and nothing
// else.
const (
	// SceneStatic has no motion at all: camera noise only. Its truth is
	// empty on every frame.
	SceneStatic Scene = "static"
	// SceneIllumination brightens the whole scene gradually, from 0.6 to
	// 1.2 times its first level: a global illumination ramp (the
	// background is still rank 1).
	SceneIllumination Scene = "illumination"
	// SceneLightSwitch adds a pool of light to part of the scene halfway
	// through the clip: a background with two states (rank 2).
	SceneLightSwitch Scene = "light-switch"
	// SceneWaving makes a quarter of the scene oscillate, with a phase
	// that varies across it, like foliage in the wind (rank 3).
	SceneWaving Scene = "waving"
	// SceneShadows gives every object a cast shadow, which darkens the
	// background it falls on by 40% without changing its colour or
	// texture. Shadows are not foreground.
	SceneShadows Scene = "shadows"
	// SceneSmallSlow has four objects of 4×4 pixels and one large object
	// that crosses the scene at half a pixel per frame.
	SceneSmallSlow Scene = "small-slow"
)

// Scenes lists the generated scenes in a fixed order.
var Scenes = []Scene{SceneStatic, SceneIllumination, SceneLightSwitch, SceneWaving, SceneShadows, SceneSmallSlow}

// GenerateOptions sizes a generated clip. Zero values take the defaults.
type GenerateOptions struct {
	Width, Height int     // frame size (default 96×72; at least 32×24)
	Frames        int     // number of frames (default 120; at least 10)
	Noise         float64 // standard deviation of the camera noise (default 0.02; < 0: none)
	Gray          bool    // one channel instead of three
	Seed          uint64  // the texture, colours and noise
}

// Clip is a generated sequence with its truth.
type Clip struct {
	*frames.Sequence
	// Truth holds one mask per frame (row-major pixels): true where a
	// moving object is.
	Truth [][]bool
}

// Score compares masks (pixels × frames, nonzero = foreground, as from
// [Masks]) with the clip's truth, pooled over all frames.
func (c *Clip) Score(masks Matrix) (metrics.Scores, error) {
	r, n := masks.Dims()
	if r != c.Pixels() || n != len(c.Truth) {
		return metrics.Scores{}, fmt.Errorf("video: masks of %d×%d do not fit %d pixels × %d frames", r, n, c.Pixels(), len(c.Truth))
	}
	var pred, truth []bool
	for j, t := range c.Truth {
		truth = append(truth, t...)
		for i := range t {
			pred = append(pred, masks.At(i, j) != 0)
		}
	}
	return metrics.Detect(pred, truth)
}

// Generate returns a clip of the given scene: a textured background,
// changed as the scene says, moving objects of their own colours (at
// least 0.3 away from the background in some channel), Gaussian camera
// noise, and values rounded to 8 bits as a camera would store them.
func Generate(scene Scene, o GenerateOptions) (*Clip, error) {
	w, h, n := o.Width, o.Height, o.Frames
	if w == 0 && h == 0 {
		w, h = 96, 72
	}
	n = cmp.Or(n, 120)
	if w < 32 || h < 24 || n < 10 {
		return nil, fmt.Errorf("video: generated clips need at least 32×24 pixels and 10 frames, got %d×%d and %d", w, h, n)
	}
	noise := zeroMeansDefault(o.Noise, 0.02)
	switch scene {
	case SceneStatic, SceneIllumination, SceneLightSwitch, SceneWaving, SceneShadows, SceneSmallSlow:
	default:
		return nil, fmt.Errorf("video: unknown scene %q (want one of %v)", scene, Scenes)
	}
	rng := rand.New(rand.NewPCG(o.Seed, 0x9e3779b97f4a7c15))
	g := frames.Geometry{Width: w, Height: h, Color: !o.Gray}
	nc := g.Channels()
	p := g.Pixels()

	bg := texture(g, rng)

	objs := sceneObjects(scene, w, h, nc, rng)
	clip := &Clip{Sequence: &frames.Sequence{Geometry: g, Y: mat.NewDense(g.Rows(), n, nil)}}
	col := make([]float64, nc*p)
	for j := 0; j < n; j++ {
		t := float64(j) / float64(n-1)
		clip.Names = append(clip.Names, fmt.Sprintf("frame%04d.png", j+1))
		copy(col, bg)
		sceneChange(scene, col, g, j, n, t)
		truth := drawObjects(scene, objs, col, g, j)
		for i, v := range col {
			v += noise * rng.NormFloat64()
			col[i] = math.Round(255*min(max(v, 0), 1)) / 255
		}
		clip.Y.SetCol(j, col)
		clip.Truth = append(clip.Truth, truth)
	}
	return clip, nil
}

// texture returns a background of a few plane waves per channel, in
// [0.2, 0.7].
func texture(g frames.Geometry, rng *rand.Rand) []float64 {
	w, h, nc, p := g.Width, g.Height, g.Channels(), g.Pixels()
	bg := make([]float64, nc*p)
	for c := 0; c < nc; c++ {
		type wave struct{ fx, fy, ph, a float64 }
		waves := make([]wave, 4)
		for k := range waves {
			waves[k] = wave{rng.Float64()*0.6 - 0.3, rng.Float64()*0.6 - 0.3, 2 * math.Pi * rng.Float64(), 0.06}
		}
		for y := 0; y < h; y++ {
			for x := 0; x < w; x++ {
				v := 0.45
				for _, wv := range waves {
					v += wv.a * math.Sin(wv.fx*float64(x)+wv.fy*float64(y)+wv.ph)
				}
				bg[c*p+y*w+x] = min(max(v, 0.2), 0.7)
			}
		}
	}

	return bg
}

// sceneChange applies the scene's change of the background to frame j
// of n (t = j/(n−1)) in col.
func sceneChange(scene Scene, col []float64, g frames.Geometry, j, n int, t float64) {
	w, h, nc, p := g.Width, g.Height, g.Channels(), g.Pixels()
	switch scene {
	case SceneIllumination:
		gain := 0.6 + 0.6*t
		for i := range col {
			col[i] *= gain
		}
	case SceneLightSwitch:
		if j >= n/2 {
			cx, cy, r := 0.7*float64(w), 0.35*float64(h), 0.3*float64(h)
			for c := 0; c < nc; c++ {
				for y := 0; y < h; y++ {
					for x := 0; x < w; x++ {
						d2 := (sq(float64(x)-cx) + sq(float64(y)-cy)) / sq(r)
						col[c*p+y*w+x] += 0.3 * math.Exp(-d2)
					}
				}
			}
		}
	case SceneWaving:
		for c := 0; c < nc; c++ {
			for y := 0; y < h/2; y++ {
				for x := 0; x < w/2; x++ {
					phase := float64(x)/3 + float64(y)/4
					col[c*p+y*w+x] += 0.25 * math.Sin(2*math.Pi*float64(j)/9+phase)
				}
			}
		}
	}
}

// drawObjects draws the shadows, then the objects over them, of frame j
// into col, and returns the truth mask.
func drawObjects(scene Scene, objs []*object, col []float64, g frames.Geometry, j int) []bool {
	w, h, nc, p := g.Width, g.Height, g.Channels(), g.Pixels()
	truth := make([]bool, p)
	for _, ob := range objs {
		x0, y0 := ob.at(j)
		if scene == SceneShadows {
			sx, sy := x0+ob.w/2, y0+ob.h/3
			ob.cover(sx, sy, w, h, func(i, _, _ int) {
				for c := 0; c < nc; c++ {
					col[c*p+i] *= 0.6
				}
			})
		}
	}
	for _, ob := range objs {
		x0, y0 := ob.at(j)
		ob.cover(x0, y0, w, h, func(i, x, y int) {
			truth[i] = true
			for c := 0; c < nc; c++ {
				// The object's own colour with a little texture.
				col[c*p+i] = ob.color[c] + 0.04*math.Sin(float64(x-x0)+float64(2*(y-y0)))
			}
		})
	}
	return truth
}

func sq(x float64) float64 { return x * x }

// object is a moving rectangle of one colour.
type object struct {
	w, h           int
	x, y, vx, vy   float64
	color          []float64
	frameW, frameH int
}

// at returns the object's top-left corner in frame j: it moves at a
// constant velocity and bounces off the frame's edges.
func (o *object) at(j int) (int, int) {
	bounce := func(p, v float64, span int) int {
		s := float64(span)
		if s <= 0 {
			return 0
		}
		q := math.Mod(p+v*float64(j), 2*s)
		if q < 0 {
			q += 2 * s
		}
		if q > s {
			q = 2*s - q
		}
		return int(q)
	}
	return bounce(o.x, o.vx, o.frameW-o.w), bounce(o.y, o.vy, o.frameH-o.h)
}

// cover calls fn for every pixel of the object placed at (x0, y0) that
// lies in the w×h frame.
func (o *object) cover(x0, y0, w, h int, fn func(i, x, y int)) {
	for y := max(y0, 0); y < min(y0+o.h, h); y++ {
		for x := max(x0, 0); x < min(x0+o.w, w); x++ {
			fn(y*w+x, x, y)
		}
	}
}

// sceneObjects places the moving objects of a scene.
func sceneObjects(scene Scene, w, h, nc int, rng *rand.Rand) []*object {
	color := func() []float64 {
		// Far from the background's [0.2, 0.7] in at least one channel.
		c := make([]float64, nc)
		for k := range c {
			c[k] = 0.05 + 0.9*rng.Float64()
		}
		k := rng.IntN(nc)
		if rng.IntN(2) == 0 {
			c[k] = 0.02 + 0.05*rng.Float64()
		} else {
			c[k] = 0.93 + 0.05*rng.Float64()
		}
		return c
	}
	mk := func(ow, oh int, speed float64) *object {
		a := 2 * math.Pi * rng.Float64()
		return &object{
			w: ow, h: oh,
			x: rng.Float64() * float64(w-ow), y: rng.Float64() * float64(h-oh),
			vx: speed * math.Cos(a), vy: speed * math.Sin(a),
			color: color(), frameW: w, frameH: h,
		}
	}
	switch scene {
	case SceneStatic:
		return nil
	case SceneSmallSlow:
		objs := []*object{mk(w/5, h/4, 0.5)}
		for k := 0; k < 4; k++ {
			objs = append(objs, mk(4, 4, 1+rng.Float64()))
		}
		return objs
	}
	return []*object{mk(w/8, h/5, 1.5), mk(w/6, h/6, 2), mk(w/10, h/4, 1)}
}
