// Package resource holds Env, the bundle of resources a job's operators and
// tasks draw on: the memory manager their reservations come from, the file
// system their spill files go to and the spill file options.
//
// It is a leaf above memory and spill: it imports those two and the standard
// library only, so that the runtime (flow) and the kernels (sortjoin) share
// the bundle without importing each other.
//
// # Contracts
//
//   - An Env does not own what it points to: whoever made the manager and the
//     file system closes them (flow.Execute closes those it made itself).
//   - An Env is a value: copying it shares the manager and the file system.
//   - The zero value has no memory manager; operators that need one say so in
//     their error.
package resource
