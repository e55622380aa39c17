// Package core is the vocabulary every layer of the stream runtime shares:
// a Record and its batches, the Output a batch is pushed into, the Emitter
// that fills batches, and the codec that writes records as bytes (channel
// state, feedback spills).
//
// It imports nothing of the stream runtime. Package stream re-exports
// Record; the other names are internal.
//
// # Contracts
//
// A batch ([]Record[T]) belongs to the caller of Output.Push: an Output
// copies what it keeps, and the caller may reuse the batch once Push
// returned. An Emitter is used by one goroutine.
package core
