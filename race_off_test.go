//go:build !race

package main

// raceBuild reports whether the tests are built with the race detector.
const raceBuild = false
