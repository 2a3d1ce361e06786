// Package scenarios is the registry of the bench command's scenarios: what
// each one generates (geostat/synthetic), what it times and how it checks its
// result before any figure is reported.
//
// A scenario whose library is not in the module yet is registered without
// a Setup and names the package it waits for; it becomes available when
// its implementation is added here against that package's API.
package scenarios
