package graph

import "time"

// Options configure an iteration.
type Options struct {
	// MaxIterations is the greatest number of supersteps (at least 1).
	MaxIterations int
	// Direction is the edges messages travel along (Out by default).
	Direction Direction
	// AllActive makes every vertex compute (vertex-centric), scatter and
	// gather (scatter-gather) or apply (gather-sum-apply) in every superstep,
	// with no messages if none came, as Pregel's vertices that never vote to
	// halt; the iteration then ends only by MaxIterations or Converged.
	AllActive bool
	// Converged, when set, is called after every superstep with its number
	// (from 1) and the greatest value that vertices passed to
	// Context.Aggregate in it (0 if none did); true ends the iteration after
	// that superstep, as a convergence criterion over Gelly's aggregators.
	Converged func(superstep int, max float64) bool
	// Stats, when set, receives the run's figures when the job has run.
	Stats *Stats
}

// Stats are the figures of one iteration's run.
type Stats struct {
	Vertices, Edges int64 // the vertices, and the adjacency entries (2E for All)
	// Build is the time the iteration's task spent building its input,
	// waiting for it excluded: the vertices' dense ids, each batch of edges
	// translated and counted as it came, the counting sort after the last,
	// and the spilling of the edges when they do not fit.
	Build time.Duration
	// Spilled is the number of adjacency chunks kept in spill files (0: the
	// adjacency is in memory).
	Spilled int
	// EdgesSpilled says the edges went to a spill run while they came; with
	// Spilled 0 they were placed back in memory once all had come.
	EdgesSpilled bool
	// Reserved is the most memory the iteration held at once.
	Reserved   int64
	Supersteps []Superstep
}

// Superstep are one superstep's figures.
type Superstep struct {
	Time     time.Duration
	Active   int64 // vertices that computed, scattered or applied
	Messages int64 // messages sent (before combining)
	Updated  int64 // vertices whose value was set
}
