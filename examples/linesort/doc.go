// Package linesort sorts the lines of a text file of any size bytewise, as
// LC_ALL=C sort does, as a DataSet program within a memory budget. weir sort
// runs it.
//
// # Model
//
//	Read input (text splits) ──range-partition by bounds sampled from the
//	file──► count each range's lines and bytes ──► SortPartition (each range
//	sorted in managed memory, spilling sorted runs) ──► write every range at its
//	offset of one temporary file ──► rename to the output when the job succeeded
//
// Sampling the file up front (reading a few hundred 4 KiB chunks) gives the
// range bounds before the job starts, so the readers route lines at once instead
// of holding them back for the runtime's own sampling. Each range's subtask adds
// up the bytes it receives (chained in front of its sort, so no line is routed
// twice). A range's writer waits until every range's input has ended, which
// happens when the readers finish, at about the time the sorts start emitting;
// then it knows the sizes of the ranges before it, and all ranges write at once,
// each to its own part of the output (rangeFileSink).
//
// # Contracts
//
//   - The output is exactly LC_ALL=C sort's: a last line without a newline
//     gets one; empty lines, carriage returns, NUL bytes and invalid UTF-8 are
//     just bytes.
//   - The output is written next to Options.Output under a temporary name and
//     renamed when complete; on error or cancellation no output and no spill
//     file remain.
//   - Options.Dataset.Memory bounds what the job reserves; the job derives its
//     segment size, spill block size, read chunks and write buffers from it.
//     It does not set the Go runtime's memory limit: that is the caller's.
//   - A Job runs once; Progress may be called from any goroutine while it runs.
package linesort
