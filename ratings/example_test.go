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
