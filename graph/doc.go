// Package graph runs graph iterations in the style of Flink's Gelly over a
// Graph of vertex and edge data sets: vertex-centric (Pregel,
// RunVertexCentric), scatter-gather (RunScatterGather) and gather-sum-apply
// (RunGatherSumApply). Each returns every vertex with its final value as a
// data set of the same program.
//
// # Model
//
// An iteration is one task of the program (dataset.GatherPair): the vertices
// of every subtask flow into it, then the edges. When the vertices have
// ended it gives them dense ids 0..n-1: for int64 keys that fill a range
// lo..lo+n-1 (numbered vertices) the id is the key less lo, with no table;
// for other int64 keys in a compact range, in the order they arrived,
// through a table; else through a map. The edges then come a batch at a
// time: each batch's keys are translated into dense ids in the iteration's
// Direction and the dense edges are kept in fixed blocks. After the last
// one a parallel counting sort places them, on Resources.Workers goroutines
// (the job's parallelism), as offsets (n+1), targets (dense ids) and the
// edges' values, compressed sparse rows: each worker counts the entries of
// a contiguous range of blocks by key, a prefix sum over the vertices and
// the workers tells each worker where its entries of each vertex go, and
// the workers place them there, a vertex's entries in the order its edges
// came. The reverse adjacency, when the iteration pulls messages, is
// counted and placed in the same passes; when the edges then carry no
// values (an EV of size zero), the forward targets are left out and placed
// from the reverse on their first use (pushing messages, Edges), a
// vertex's neighbours then in the order of their ids. Supersteps then run on the same
// workers, each owning a range of vertices of about equal edges; messages
// go into a dense array of one slot per vertex per worker, combined as they
// are sent when a combiner is given (the reader combines a vertex's slots
// over the workers), or into per-worker lists grouped by target with a
// counting sort when none is. A message sent to all of a vertex's
// neighbours (SendToAllNeighbors) with a combiner is only recorded once per
// vertex; after the sending phase, when such messages cover at least a
// sixteenth of the edges, each receiver pulls them over its in-neighbours
// (the reverse adjacency, when the reservation grants it; for All the
// adjacency is its own reverse), else they are pushed along the edges, as a
// direction-optimizing traversal does. The combiners of MinCombiner and
// SumCombiner are run as the engine's own loops, with no call per message.
// The values of the vertices live in one dense array, mapped back to their
// keys when the result is emitted.
//
// # Memory and spilling
//
// Everything is charged to one reservation of the job's memory manager.
// Vertex-sized state (keys, values, the id index, the offsets and the
// workers' cursors, the message slots, the active flags) is what an iteration needs to run at all and is
// forced past the budget; the edges are what may not fit. Their blocks are
// kept while the reservation grants them, and the arrays built from them
// when it grants those too; when it refuses, the dense edges go to a spill
// run instead (in records of 64 KiB of entries; a value of variable length
// carries its length, a value of no size takes no byte). With the blocks
// gone, the whole adjacency may fit: when the reservation grants it and the
// message slots besides, one pass over the run places it in memory.
// Otherwise the vertices are cut into ranges whose entries fit half the
// memory available, each range's adjacency counting-sorted from the run (a
// pass each) and written as a chunk run. Every superstep then reads the
// chunks back one at a time (one chunk's memory reserved) and sweeps each
// with all workers: the same supersteps, the same results, the edges read
// from disk.
// Messages are not spilled: with a combiner they are vertex-sized; without
// one, a superstep's messages are held in memory.
//
// # Contracts
//
//   - Edges whose endpoints are not both vertices are left out; a key given
//     to several vertices keeps the first value that arrives.
//   - Superstep 1 activates every vertex. Vertex-centric: later the vertices
//     with messages compute; the iteration ends after a superstep that sends
//     nothing. Scatter-gather and gather-sum-apply: the vertices whose value
//     was set in the last superstep scatter; the iteration ends after a
//     superstep that sets no value. Options.AllActive keeps every vertex
//     active; Options.Converged ends the iteration on the greatest value
//     reported with Context.Aggregate; MaxIterations bounds it always.
//   - Messages sent in a superstep are read in the next one (vertex-centric)
//     or in its gather phase (scatter-gather, gather-sum-apply). A combiner
//     (Combine, Sum) must be associative and commutative: the order in which
//     messages meet is not defined.
//   - User functions run concurrently on the workers, one vertex at a time
//     per worker; they may set only their own vertex's value and must keep
//     no shared mutable state. A panic in one fails the job with an error
//     naming the iteration and the superstep.
//   - The result comes out of one subtask. With int64 keys it comes in
//     ascending key order, whatever the order in which the vertices arrived:
//     a program that sorts it by key may declare so (dataset's SortedOn) and
//     the sort passes it through.
//   - Options.Stats receives the run's figures (build time, chunks spilled
//     and whether the edges spilled while they came,
//     memory reserved, per-superstep time, active vertices, messages and
//     updates) when the job has run.
package graph
