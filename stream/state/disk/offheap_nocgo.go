//go:build !cgo

package disk

// offHeap says Pebble allocates its block cache and memtables in C memory;
// without cgo it allocates them on the Go heap.
const offHeap = false
