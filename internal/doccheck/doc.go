// Package doccheck holds only a test: it walks the module and checks what
// its documentation shows. Every Example function is attached to the package
// or to an exported identifier (go/doc drops an example whose name matches
// nothing, so pkgsite and `go doc -http` would never show it), and the
// declarations and doc comments of exported names do not show unexported
// identifiers of their package (such as `const EstimateChunk = chunkSize`,
// whose value a reader cannot look up).
//
// `go doc` in a terminal prints no examples at all; pkgsite (`go doc -http`,
// pkg.go.dev) shows them with the identifier they are attached to, and
// `go test -run Example ./...` runs them.
package doccheck
