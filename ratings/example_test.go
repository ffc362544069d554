package ratings_test

import (
	"context"
	"fmt"
	"log"
	"strings"

	"github.com/rpca-gd/rpca/formats/triples"
	"github.com/rpca-gd/rpca/ratings"
)

// Fit a rank-1 model with regularised biases to a few ratings and predict
// a missing one. Here every user rates item b one star below item a,
// so alice's missing rating of b is predicted near 4 − 1 = 3.
func ExampleFit() {
	const data = `user,item,rating
alice,a,4
bob,a,5
bob,b,4
carol,a,3
carol,b,2
dave,a,2
dave,b,1
dave,c,5
alice,c,5
bob,c,5
`
	r, err := triples.Read(strings.NewReader(data), "example", triples.Options{Delimiter: ",", Header: true})
	if err != nil {
		log.Fatal(err)
	}
	model, err := ratings.Fit(context.Background(), r, nil, ratings.Options{Rank: 1, Baseline: ratings.BaselineNone})
	if err != nil {
		log.Fatal(err)
	}
	i, j, okRow, okCol := model.Index("alice", "b")
	if !okRow || !okCol {
		log.Fatal("unknown id")
	}
	fmt.Printf("alice would rate b about %.0f\n", model.Predict(i, j))
	// Output: alice would rate b about 3
}

// Fit rpca complete's default model, the Gibbs fit of mean, biases and
// rank-10 factors, to ratings that are a user's mood plus an item's
// quality, and predict the one rating missing from the grid.
func ExampleDefaults() {
	var b strings.Builder
	for u := range 12 {
		for it := range 8 {
			if u == 0 && it == 0 {
				continue // the missing rating: 1 + 0 + 0
			}
			fmt.Fprintf(&b, "user%d item%d %g\n", u, it, 1+0.25*float64(u%5)+0.5*float64(it%4))
		}
	}
	r, err := triples.Read(strings.NewReader(b.String()), "example", triples.Options{})
	if err != nil {
		log.Fatal(err)
	}
	model, err := ratings.Fit(context.Background(), r, nil, ratings.Defaults())
	if err != nil {
		log.Fatal(err)
	}
	i, j, _, _ := model.Index("user0", "item0")
	fmt.Printf("user0 would rate item0 about %.1f (%s fit)\n", model.Predict(i, j), model.Result.Method)
	// Output: user0 would rate item0 about 1.0 (gibbs fit)
}
