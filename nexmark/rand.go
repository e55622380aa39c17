package nexmark

// javaRand is java.util.Random: a 48-bit linear congruential generator,
// with Java's constants and its ways of drawing ints, longs and doubles.
type javaRand struct{ seed uint64 }

const (
	lcgMultiplier = 0x5DEECE66D
	lcgAddend     = 0xB
	lcgMask       = 1<<48 - 1
)

// newJavaRand is new Random(seed): the seed scrambled as Java's setSeed.
func newJavaRand(seed uint64) javaRand {
	return javaRand{seed: (seed ^ lcgMultiplier) & lcgMask}
}

// next returns the next bits (at most 32) random bits, as Java's next.
func (r *javaRand) next(bits uint) int32 {
	r.seed = (r.seed*lcgMultiplier + lcgAddend) & lcgMask
	return int32(int64(r.seed) >> (48 - bits))
}

// Int is nextInt(): 32 random bits.
func (r *javaRand) Int() int32 { return r.next(32) }

// Intn is nextInt(bound), uniform in [0, bound), bound > 0.
func (r *javaRand) Intn(bound int32) int32 {
	if bound&(bound-1) == 0 {
		return int32(int64(bound) * int64(r.next(31)) >> 31)
	}
	for {
		bits := r.next(31)
		val := bits % bound
		if bits-val+(bound-1) >= 0 { // no int32 overflow: not in the last partial range
			return val
		}
	}
}

// Long is nextLong().
func (r *javaRand) Long() int64 {
	hi := int64(r.next(32))
	return hi<<32 + int64(r.next(32))
}

// Float is nextDouble(), uniform in [0, 1).
func (r *javaRand) Float() float64 {
	return float64(int64(r.next(26))<<27+int64(r.next(27))) * (1.0 / (1 << 53))
}

// Longn is the suite's LongGenerator.nextLong(random, n): uniform in
// [0, n) for n > 0, through nextInt when n fits an int.
func (r *javaRand) Longn(n int64) int64 {
	if n < 1<<31-1 {
		return int64(r.Intn(int32(n)))
	}
	v := r.Long() % n
	if v < 0 {
		v = -v
	}
	return v
}

// splitmix64 is the finalizer of SplitMix64: a bijection of 64-bit words
// that scatters nearby inputs.
func splitmix64(x uint64) uint64 {
	x += 0x9E3779B97F4A7C15
	x = (x ^ x>>30) * 0xBF58476D1CE4E5B9
	x = (x ^ x>>27) * 0x94D049BB133111EB
	return x ^ x>>31
}
