package metrics

import (
	"math"
	"slices"
	"sync"
)

// DefaultReservoir is the number of values a Histogram keeps when it is
// given none.
const DefaultReservoir = 1024

// Histogram is Flink's DescriptiveStatisticsHistogram: it keeps the last
// values it was updated with in a ring of a fixed size (the reservoir),
// and computes statistics over them when they are read. Update writes one
// slot of the ring on the updating goroutine (the subtask's) and
// allocates nothing; Group.Publish copies the slots written since the
// last publish into the readers' copy.
type Histogram struct {
	// the updater's
	values []int64
	next   int   // the slot the next value goes to
	n      int64 // values updated
	pubN   int64 // n at the last publish

	// the readers'
	mu     sync.Mutex
	pub    []int64 // the ring as of the last publish
	pubCnt int64
}

// NewHistogram returns a histogram over the last size values (size <= 0:
// DefaultReservoir).
func NewHistogram(size int) *Histogram {
	if size <= 0 {
		size = DefaultReservoir
	}
	return &Histogram{values: make([]int64, size), pub: make([]int64, size)}
}

// Update adds v; it replaces the oldest value once the reservoir is full.
func (h *Histogram) Update(v int64) {
	h.values[h.next] = v
	h.next++
	if h.next == len(h.values) {
		h.next = 0
	}
	h.n++
}

// Count returns the number of values updated, all of them (Flink's
// getCount), on the updating goroutine.
func (h *Histogram) Count() int64 { return h.n }

// Statistics returns the statistics of the values in the reservoir, on the
// updating goroutine.
func (h *Histogram) Statistics() HistogramStatistics {
	return newStatistics(slices.Clone(h.values[:min(h.n, int64(len(h.values)))]))
}

// publish copies the slots written since the last publish for readers.
func (h *Histogram) publish() {
	d := h.n - h.pubN
	if d == 0 {
		return
	}
	h.mu.Lock()
	size := len(h.values)
	if d >= int64(size) {
		copy(h.pub, h.values)
	} else if start := h.next - int(d); start >= 0 {
		copy(h.pub[start:h.next], h.values[start:h.next])
	} else {
		copy(h.pub[size+start:], h.values[size+start:])
		copy(h.pub[:h.next], h.values[:h.next])
	}
	h.pubCnt = h.n
	h.mu.Unlock()
	h.pubN = h.n
}

// published returns the count and a copy of the reservoir as of the last
// publish, on any goroutine.
func (h *Histogram) published() (int64, []int64) {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.pubCnt, slices.Clone(h.pub[:min(h.pubCnt, int64(len(h.pub)))])
}

// HistogramStatistics are the statistics of a histogram's reservoir at
// one instant (Flink's HistogramStatistics): its size, minimum, maximum,
// mean and standard deviation, and its quantiles. All are zero for an
// empty reservoir.
type HistogramStatistics struct {
	Size int     `json:"size"`
	Min  int64   `json:"min"`
	Max  int64   `json:"max"`
	Mean float64 `json:"mean"`
	// StdDev is the sample standard deviation (divided by Size-1, as
	// Flink's, zero for one value).
	StdDev float64 `json:"stdDev"`
	// Quantiles are the quantiles of Quantiles (the ones Flink's
	// Prometheus reporter exports), in that order.
	Quantiles []float64 `json:"quantiles"`
	sorted    []int64
}

// Quantiles are the quantiles a HistogramStatistics lists: those Flink's
// Prometheus reporter exports as a summary.
var Quantiles = []float64{0.5, 0.75, 0.95, 0.98, 0.99, 0.999}

// newStatistics sorts vs (which it keeps) and computes its statistics.
func newStatistics(vs []int64) HistogramStatistics {
	s := HistogramStatistics{Size: len(vs), sorted: vs}
	if len(vs) == 0 {
		s.Quantiles = make([]float64, len(Quantiles))
		return s
	}
	slices.Sort(vs)
	s.Min, s.Max = vs[0], vs[len(vs)-1]
	var sum float64
	for _, v := range vs {
		sum += float64(v)
	}
	s.Mean = sum / float64(len(vs))
	if len(vs) > 1 {
		var sq float64
		for _, v := range vs {
			d := float64(v) - s.Mean
			sq += d * d
		}
		s.StdDev = math.Sqrt(sq / float64(len(vs)-1))
	}
	s.Quantiles = make([]float64, len(Quantiles))
	for i, q := range Quantiles {
		s.Quantiles[i] = s.Quantile(q)
	}
	return s
}

// Quantile returns the q-quantile (q in [0, 1], clamped) of the reservoir's
// values as Flink computes it (Apache Commons Math's Percentile, legacy
// estimation): with the n values sorted and p = q*(n+1), the value at rank
// p, interpolated linearly between the ranks around it; the minimum for p
// < 1, the maximum for p >= n. Zero for an empty reservoir.
func (s *HistogramStatistics) Quantile(q float64) float64 {
	n := len(s.sorted)
	if n == 0 {
		return 0
	}
	q = min(max(q, 0), 1)
	pos := q * float64(n+1)
	if q == 1 {
		pos = float64(n)
	}
	if pos < 1 {
		return float64(s.sorted[0])
	}
	if pos >= float64(n) {
		return float64(s.sorted[n-1])
	}
	f := math.Floor(pos)
	lo, hi := float64(s.sorted[int(f)-1]), float64(s.sorted[int(f)])
	return lo + (pos-f)*(hi-lo)
}

// Values returns the reservoir's values, sorted (Flink's getValues).
func (s *HistogramStatistics) Values() []int64 { return slices.Clone(s.sorted) }
