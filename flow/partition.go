package flow

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"slices"
	"sync"

	"github.com/weirdata/weir/memory"
)

// target returns the consumer a record goes to (not called for Broadcast), or -1
// after recording an error in w.err (a Custom partitioner out of range).
func (w *Writer[T]) target(v *T) int {
	switch w.strategy {
	case Forward:
		return w.src
	case Hash:
		h := w.part.Hash(v)
		return int((h >> 32) * uint64(w.n) >> 32)
	case Range:
		if w.part.View != nil {
			return w.bounds.index(w.part.View(v))
		}
		w.key = w.part.Key(w.key[:0], v)
		return w.bounds.index(w.key)
	case Rebalance:
		p := w.rr
		w.rr++
		if w.rr == w.n {
			w.rr = 0
		}
		return p
	case Custom:
		p := w.part.Custom(v, w.n)
		if p < 0 || p >= w.n {
			w.err = fmt.Errorf("flow: edge %s: custom partitioner returned %d for %d consumers", w.x.e.name, p, w.n)
			return -1
		}
		return p
	}
	return 0
}

// rangeBounds are a Range edge's bounds with the 8-byte normalized prefix of
// each (memory.Prefix), so that routing a key compares integers and looks at
// the bytes only when a prefix ties.
type rangeBounds struct {
	keys     [][]byte
	prefixes []uint64
}

func newRangeBounds(keys [][]byte) rangeBounds {
	b := rangeBounds{keys: keys, prefixes: make([]uint64, len(keys))}
	for i, k := range keys {
		b.prefixes[i] = memory.Prefix(k)
	}
	return b
}

// index returns the first i with key <= keys[i], or len(keys): the consumer
// of key.
func (b *rangeBounds) index(key []byte) int {
	p := memory.Prefix(key)
	lo, hi := 0, len(b.keys)
	for lo < hi {
		m := int(uint(lo+hi) >> 1)
		// Prefixes order as their keys do, except that equal prefixes say nothing.
		if bp := b.prefixes[m]; bp < p || bp == p && bytes.Compare(b.keys[m], key) < 0 {
			lo = m + 1
		} else {
			hi = m
		}
	}
	return lo
}

// reservoir keeps a uniform sample of the keys offered to it (algorithm R).
type reservoir struct {
	keys [][]byte
	k    int
	seen int64
	rng  *rand.Rand
}

func newReservoir(k int, seed uint64) *reservoir {
	return &reservoir{k: k, rng: rand.New(rand.NewPCG(seed, 0x9e3779b97f4a7c15))}
}

// offer considers one key; it copies the key when it keeps it.
func (r *reservoir) offer(key []byte) {
	r.seen++
	if len(r.keys) < r.k {
		r.keys = append(r.keys, bytes.Clone(key))
		return
	}
	if j := r.rng.Int64N(r.seen); j < int64(r.k) {
		r.keys[j] = append(r.keys[j][:0], key...)
	}
}

// sampleSize is the number of keys each producer subtask samples per consumer.
const sampleSize = 128

// rangeSampler gathers the producers' samples of a Range edge without bounds and
// computes the bounds once every producer published its sample. The samples are
// weighted by how many records each producer saw, so that a producer with few
// records does not pull the bounds toward its keys.
type rangeSampler struct {
	mu      sync.Mutex
	samples [][][]byte
	seen    []int64
	got     []bool
	left    int
	nCons   int
	ready   chan struct{} // closed once bounds is set
	bounds  [][]byte
}

func newRangeSampler(nProd, nCons int) *rangeSampler {
	return &rangeSampler{samples: make([][][]byte, nProd), seen: make([]int64, nProd), got: make([]bool, nProd), left: nProd, nCons: nCons, ready: make(chan struct{})}
}

// publish records producer p's sample; the last producer computes the bounds.
func (s *rangeSampler) publish(p int, r *reservoir) { s.publishRemote(p, r.keys, r.seen) }

// publishRemote records producer p's sample, keys of seen records, unless
// it has it already (a producer elsewhere sends it to every producer of
// this process).
func (s *rangeSampler) publishRemote(p int, keys [][]byte, seen int64) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.got[p] {
		return
	}
	s.got[p] = true
	s.samples[p] = keys
	s.seen[p] = seen
	s.left--
	if s.left == 0 {
		s.bounds = boundsFromSamples(s.samples, s.seen, s.nCons)
		close(s.ready)
	}
}

// boundsFromSamples returns n-1 ascending bounds that split the weighted samples
// into n parts of about equal weight. With no keys at all it returns n-1 empty
// keys (everything goes to consumer 0, and there is nothing).
func boundsFromSamples(samples [][][]byte, seen []int64, n int) [][]byte {
	type weighted struct {
		key []byte
		w   float64
	}
	var all []weighted
	total := 0.0
	for p, keys := range samples {
		if len(keys) == 0 {
			continue
		}
		w := float64(seen[p]) / float64(len(keys))
		for _, k := range keys {
			all = append(all, weighted{k, w})
		}
		total += float64(seen[p])
	}
	bounds := make([][]byte, n-1)
	if len(all) == 0 {
		for i := range bounds {
			bounds[i] = []byte{}
		}
		return bounds
	}
	// stable: equal keys keep the producers' order, so every process of a
	// job spread over several computes the same bounds
	slices.SortStableFunc(all, func(a, b weighted) int { return bytes.Compare(a.key, b.key) })
	acc, j := 0.0, 0
	for i := range bounds {
		goal := total * float64(i+1) / float64(n)
		for j < len(all)-1 && acc+all[j].w < goal {
			acc += all[j].w
			j++
		}
		bounds[i] = all[j].key
	}
	return bounds
}
