//go:build cgo

package disk

// offHeap says Pebble allocates its block cache and memtables in C memory
// (its cgo build), outside the Go heap and its soft limit.
const offHeap = true
