module github.com/rpca-gd/rpca/python/bridge

go 1.26.8

require (
	github.com/rpca-gd/rpca v0.0.0
	gonum.org/v1/gonum v0.17.0
)

require (
	golang.org/x/image v0.30.0 // indirect
	golang.org/x/sys v0.49.0 // indirect
)

replace github.com/rpca-gd/rpca => ../..
