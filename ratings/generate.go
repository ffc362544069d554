package ratings

import (
	"cmp"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"sort"
	"strconv"

	"github.com/rpca-gd/rpca/formats/triples"
	"github.com/rpca-gd/rpca/internal/kernels"
	"github.com/rpca-gd/rpca/internal/sample"
)

// Shape describes generated ratings (see [Generate]). Its zero fields
// take the values of [MovieLens20M].
type Shape struct {
	// Users and Items are the numbers of rows and columns.
	Users, Items int
	// Ratings is the number of ratings, at least MinPerUser per user.
	Ratings int
	// Rank is the rank of the interaction term.
	Rank int
	// Junk is the fraction of ratings moved to the opposite end of the
	// scale after generation (the "flipped" junk of rpca experiment
	// ratings); 0 generates none.
	Junk float64
	// Seed selects the ratings.
	Seed uint64
}

// MovieLens20M is the shape of the MovieLens 20M data set (138,493 users,
// 26,744 movies, 20,000,263 ratings), with a rank-10 interaction and 5%
// junk.
var MovieLens20M = Shape{Users: 138_493, Items: 26_744, Ratings: 20_000_263, Rank: 10, Junk: 0.05, Seed: 1}

// MinPerUser is the least number of ratings a generated user has, as in
// the MovieLens releases.
const MinPerUser = 20

// Generated holds generated ratings and which of them are junk.
type Generated struct {
	*triples.Ratings
	// Junk[k] tells whether rating k was flipped.
	Junk []bool
}

// Generate returns ratings shaped like a public ratings data set: on the
// half-star scale 0.5 … 5, each is 3.5 plus a user bias, an item bias, a
// rank-s.Rank interaction and noise, rounded. Item popularity falls off
// as a power law (weight (j+1)^−0.9), users' numbers of ratings are
// MinPerUser plus a log-normal share of the rest, and a user rates
// distinct items drawn by popularity, so the sampling is as far from
// uniform as in real ratings. The ratings are sorted by user and item.
// The result depends only on s.
func Generate(s Shape) (*Generated, error) {
	s = s.withDefaults()
	if err := s.check(); err != nil {
		return nil, err
	}
	rng := rand.New(rand.NewPCG(s.Seed, 0x9e4e7a7e))
	g := &generator{s: s}
	g.factors(rng)
	counts := g.userCounts(rng)
	start := make([]int, s.Users+1)
	for i, n := range counts {
		start[i+1] = start[i] + n
	}
	n := start[s.Users]
	r := &triples.Ratings{RowIndex: make(map[string]int, s.Users), ColIndex: make(map[string]int, s.Items)}
	r.D1, r.D2 = s.Users, s.Items
	r.Row, r.Col, r.Val = make([]int, n), make([]int, n), make([]float64, n)
	r.RowIDs, r.ColIDs = make([]string, s.Users), make([]string, s.Items)
	for i := range r.RowIDs {
		r.RowIDs[i] = "u" + strconv.Itoa(i+1)
		r.RowIndex[r.RowIDs[i]] = i
	}
	for j := range r.ColIDs {
		r.ColIDs[j] = "i" + strconv.Itoa(j+1)
		r.ColIndex[r.ColIDs[j]] = j
	}
	// Users in blocks with their own streams, so the result does not
	// depend on the number of workers.
	const block = 1024
	blocks := (s.Users + block - 1) / block
	kernels.ForEach(blocks, 0, func(b int) {
		brng := rand.New(rand.NewPCG(s.Seed, uint64(b)+1))
		seen := make([]bool, s.Items)
		for i := b * block; i < min(s.Users, (b+1)*block); i++ {
			cols := r.Col[start[i]:start[i+1]]
			g.pickItems(brng, seen, cols)
			for k, j := range cols {
				q := start[i] + k
				r.Row[q] = i
				r.Val[q] = g.value(brng, i, j)
			}
		}
	})
	junk := sample.Subset(rng, n, int(math.Round(s.Junk*float64(n))))
	for q, flip := range junk {
		switch {
		case !flip:
		case r.Val[q] >= (scaleLo+scaleHi)/2:
			r.Val[q] = scaleLo
		default:
			r.Val[q] = scaleHi
		}
	}
	return &Generated{Ratings: r, Junk: junk}, nil
}

// The rating scale of Generate.
const (
	scaleLo, scaleHi = 0.5, 5.0
	popularityPower  = 0.9
)

func (s Shape) withDefaults() Shape {
	d := MovieLens20M
	s.Users = cmp.Or(s.Users, d.Users)
	s.Items = cmp.Or(s.Items, d.Items)
	s.Ratings = cmp.Or(s.Ratings, d.Ratings)
	s.Rank = cmp.Or(s.Rank, d.Rank)
	return s
}

func (s Shape) check() error {
	switch {
	case s.Users < 1 || s.Items < 2*MinPerUser:
		return fmt.Errorf("ratings: %d users and %d items: want at least 1 user and %d items", s.Users, s.Items, 2*MinPerUser)
	case s.Ratings < MinPerUser*s.Users || s.Ratings > s.Users*(s.Items/2):
		return fmt.Errorf("ratings: %d ratings for %d users and %d items: want %d to %d (%d to half the items per user)",
			s.Ratings, s.Users, s.Items, MinPerUser*s.Users, s.Users*(s.Items/2), MinPerUser)
	case s.Rank < 1:
		return fmt.Errorf("ratings: rank %d must be positive", s.Rank)
	case !(s.Junk >= 0 && s.Junk < 1):
		return errors.New("ratings: the junk fraction must be in [0, 1)")
	}
	return nil
}

// generator holds the model of Generate.
type generator struct {
	s          Shape
	u, v       []float64 // Users×Rank and Items×Rank
	rowB, colB []float64
	cdf        []float64 // cumulative item popularity, cdf[Items−1] = 1
}

// factors draws the biases, the interaction factors (entries of variance
// 0.5/√rank, so the interaction has standard deviation 0.5) and the
// popularity.
func (g *generator) factors(rng *rand.Rand) {
	s := g.s
	r := g.s.Rank
	sd := math.Sqrt(0.5 / math.Sqrt(float64(r)))
	g.u, g.v = make([]float64, s.Users*r), make([]float64, s.Items*r)
	for k := range g.u {
		g.u[k] = sd * rng.NormFloat64()
	}
	for k := range g.v {
		g.v[k] = sd * rng.NormFloat64()
	}
	g.rowB, g.colB = make([]float64, s.Users), make([]float64, s.Items)
	for i := range g.rowB {
		g.rowB[i] = 0.4 * rng.NormFloat64()
	}
	for j := range g.colB {
		g.colB[j] = 0.5 * rng.NormFloat64()
	}
	// Popularity in a random item order, so that item ids say nothing.
	g.cdf = make([]float64, s.Items)
	sum := 0.0
	for k, j := range rng.Perm(s.Items) {
		g.cdf[j] = math.Pow(float64(k+1), -popularityPower)
	}
	for j, w := range g.cdf {
		sum += w
		g.cdf[j] = sum
	}
	for j := range g.cdf {
		g.cdf[j] /= sum
	}
	g.cdf[s.Items-1] = 1
}

// userCounts returns each user's number of ratings: MinPerUser plus a
// share of the rest proportional to a log-normal activity, capped at half
// the items, summing to s.Ratings.
func (g *generator) userCounts(rng *rand.Rand) []int {
	s := g.s
	act := make([]float64, s.Users)
	for i := range act {
		act[i] = math.Exp(1.2 * rng.NormFloat64())
	}
	counts := make([]int, s.Users)
	limit := s.Items / 2
	left := s.Ratings - MinPerUser*s.Users
	for i := range counts {
		counts[i] = MinPerUser
	}
	// Spread the rest by activity, capping at limit; what the caps leave
	// goes to the others in the next round.
	open := make([]int, s.Users)
	for i := range open {
		open[i] = i
	}
	for left > 0 && len(open) > 0 {
		total := 0.0
		for _, i := range open {
			total += act[i]
		}
		given := 0
		for _, i := range open {
			add := min(limit-counts[i], int(float64(left)*act[i]/total))
			counts[i] += add
			given += add
		}
		left -= given
		open = slices.DeleteFunc(open, func(i int) bool { return counts[i] >= limit })
		if given == 0 { // rounding leftovers: one each to the most active
			slices.SortFunc(open, func(a, b int) int { return cmp.Compare(act[b], act[a]) })
			for _, i := range open[:min(left, len(open))] {
				counts[i]++
			}
			left -= min(left, len(open))
		}
	}
	return counts
}

// pickItems fills cols with distinct items drawn by popularity, sorted;
// seen is all false on entry and on return.
func (g *generator) pickItems(rng *rand.Rand, seen []bool, cols []int) {
	for k := range cols {
		for {
			j := sort.SearchFloat64s(g.cdf, rng.Float64())
			j = min(j, len(g.cdf)-1)
			if !seen[j] {
				seen[j] = true
				cols[k] = j
				break
			}
		}
	}
	for _, j := range cols {
		seen[j] = false
	}
	slices.Sort(cols)
}

// value is the rating of user i for item j before any junk.
func (g *generator) value(rng *rand.Rand, i, j int) float64 {
	x := 3.5 + g.rowB[i] + g.colB[j] + 0.3*rng.NormFloat64()
	r := g.s.Rank
	ui, vj := g.u[i*r:(i+1)*r], g.v[j*r:(j+1)*r]
	for c, a := range ui {
		x += a * vj[c]
	}
	return min(scaleHi, max(scaleLo, math.Round(2*x)/2))
}
