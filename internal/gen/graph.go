package gen

import (
	"fmt"
	"iter"
	"math"
	"math/bits"
)

// The R-MAT probabilities of Graph500's Kronecker generator: an edge falls in
// the top-left, top-right and bottom-left quadrant of the adjacency matrix
// with these probabilities at every level, and in the bottom-right one with
// 1-A-B-C = 0.05.
const (
	DefaultA = 0.57
	DefaultB = 0.19
	DefaultC = 0.19
)

// Graph returns the edges of an R-MAT graph as Graph500's Kronecker generator
// makes them: vertices must be a power of two, 2^scale; each of the edges
// picks its source and destination one bit at a time, from the most
// significant down, choosing the quadrant (0,0), (0,1), (1,0), (1,1) with
// probabilities a, b, c and 1-a-b-c. Vertex ids are then renamed by a
// permutation of [0, vertices) derived from seed, so that degrees are not
// sorted by id.
//
// Like Graph500's generator, Graph keeps self loops and duplicate edges:
// exactly edges pairs come out, and a consumer that needs a simple graph
// drops them itself. The edges come out in generation order, which is
// already random (Graph500 shuffles its edge list; its edges are independent
// and identically distributed, so the order carries no information either).
//
// The sequence is the same for the same arguments on every machine and on
// every range over it. The permutation is a keyed bijection computed per id
// (multiply, add and xor-shift rounds modulo 2^scale), so the generator holds
// no memory proportional to the graph.
func Graph(vertices, edges int64, seed uint64, a, b, c float64) (iter.Seq2[int64, int64], error) {
	return graph(vertices, edges, seed, a, b, c, true)
}

// graph is Graph; without permute, vertex ids are the R-MAT matrix indices.
func graph(vertices, edges int64, seed uint64, a, b, c float64, permute bool) (iter.Seq2[int64, int64], error) {
	if vertices < 1 || vertices&(vertices-1) != 0 {
		return nil, fmt.Errorf("gen: graph: vertices must be a power of two, got %d", vertices)
	}
	if edges < 0 {
		return nil, fmt.Errorf("gen: graph: edges must not be negative, got %d", edges)
	}
	d := 1 - a - b - c
	for _, p := range []float64{a, b, c} {
		if !(p >= 0 && p <= 1) {
			return nil, fmt.Errorf("gen: graph: R-MAT probabilities must be in [0, 1], got a=%g b=%g c=%g", a, b, c)
		}
	}
	if d < -1e-9 {
		return nil, fmt.Errorf("gen: graph: R-MAT probabilities a+b+c must not exceed 1, got %g", a+b+c)
	}
	d = max(d, 0)
	scale := bits.TrailingZeros64(uint64(vertices))
	// Graph500: the source bit is 1 with probability c+d; the destination bit
	// is 1 with probability b/(a+b) after a 0 and d/(c+d) after a 1.
	tSrc := threshold(a + b)
	// the destination bit stays 0 below tDst[0] after a source 0, below tDst[1] after a 1
	tDst := [2]uint64{threshold(ratio(a, a+b)), threshold(ratio(c, c+d))}
	perm := newPermutation(scale, seed)
	if !permute {
		perm = permutation{mask: perm.mask, shift: 64, mul: [3]uint64{1, 1, 1}}
	}
	return func(yield func(int64, int64) bool) {
		r := newRNG(seed)
		for range edges {
			var src, dst uint64
			for bit := scale - 1; bit >= 0; bit-- {
				x := r.next()
				u, v := x>>32, x&0xffffffff
				// branch-free: the bits are coin flips a predictor cannot learn.
				// s = u >= tSrc and t = v >= tDst[s]; all values are below 2^33,
				// so the wrapped difference's top bit is the comparison.
				s := (tSrc - u - 1) >> 63
				t := (tDst[s] - v - 1) >> 63
				src |= s << bit
				dst |= t << bit
			}
			if !yield(int64(perm.apply(src)), int64(perm.apply(dst))) {
				return
			}
		}
	}, nil
}

// threshold returns p scaled to a 32-bit uniform: u < threshold(p) with
// probability p for u uniform in [0, 2^32).
func threshold(p float64) uint64 {
	return uint64(math.Round(min(max(p, 0), 1) * (1 << 32)))
}

func ratio(x, y float64) float64 {
	if y <= 0 {
		return 0
	}
	return x / y
}

// rng is wyrand: a 64-bit state advanced by a constant and mixed by one
// 64×64→128-bit multiplication. It is fast, passes BigCrush and is the same on
// every platform.
type rng struct{ s uint64 }

func newRNG(seed uint64) rng { return rng{s: splitmix(seed ^ 0x9e3779b97f4a7c15)} }

func (r *rng) next() uint64 {
	r.s += 0xa0761d6478bd642f
	hi, lo := bits.Mul64(r.s, r.s^0xe7037ed1a0b428db)
	return hi ^ lo
}

// splitmix is SplitMix64's finalizer, used to derive independent keys from a seed.
func splitmix(x uint64) uint64 {
	x += 0x9e3779b97f4a7c15
	x = (x ^ x>>30) * 0xbf58476d1ce4e5b9
	x = (x ^ x>>27) * 0x94d049bb133111eb
	return x ^ x>>31
}

// permutation is a keyed bijection of [0, 2^scale): rounds of x*m+k (m odd)
// and x ^= x>>shift, each a bijection modulo 2^scale.
type permutation struct {
	mask  uint64
	shift uint
	mul   [3]uint64
	add   [3]uint64
}

func newPermutation(scale int, seed uint64) permutation {
	p := permutation{mask: 1<<scale - 1, shift: uint(max(1, (scale+1)/2))}
	key := splitmix(seed ^ 0x7065726d75746531) // "permute1"
	for i := range p.mul {
		key = splitmix(key)
		p.mul[i] = key | 1
		key = splitmix(key)
		p.add[i] = key
	}
	return p
}

func (p *permutation) apply(x uint64) uint64 {
	for i := range p.mul {
		x = (x*p.mul[i] + p.add[i]) & p.mask
		x ^= x >> p.shift
	}
	return x
}

// Grid returns the edges of a w×h grid graph: vertex (x, y) has id y*w+x, and
// each undirected edge is listed once, from the smaller id to the larger: for
// every vertex in id order, first the edge to its right neighbour, then the
// edge to the one below. It has (w-1)*h + w*(h-1) edges; w or h below 1 gives
// none.
func Grid(w, h int64) iter.Seq2[int64, int64] {
	return func(yield func(int64, int64) bool) {
		if w < 1 || h < 1 {
			return
		}
		for y := range h {
			for x := range w {
				v := y*w + x
				if x+1 < w && !yield(v, v+1) {
					return
				}
				if y+1 < h && !yield(v, v+w) {
					return
				}
			}
		}
	}
}

// Vertices returns the ids 0, 1, ..., n-1.
func Vertices(n int64) iter.Seq[int64] {
	return func(yield func(int64) bool) {
		for v := range n {
			if !yield(v) {
				return
			}
		}
	}
}
