module github.com/hashicorp/memberlist

go 1.25.0

require (
	github.com/google/btree v1.1.3
	github.com/hashicorp/go-msgpack/v2 v2.1.5
	github.com/hashicorp/go-multierror v1.1.1
)

require (
	github.com/hashicorp/errwrap v1.1.0 // indirect
	go.yaml.in/yaml/v3 v3.0.5 // indirect
	golang.org/x/net v0.57.0 // indirect
	golang.org/x/sys v0.47.0 // indirect
)
