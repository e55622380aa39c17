package streaming

// javaRandom is java.util.Random's linear congruential generator, so that
// the events generator draws what Flink's draws from the same seed.
type javaRandom struct{ seed int64 }

const (
	javaMultiplier = 0x5DEECE66D
	javaMask       = 1<<48 - 1
)

func newJavaRandom(seed int64) *javaRandom {
	return &javaRandom{seed: (seed ^ javaMultiplier) & javaMask}
}

func (r *javaRandom) next(bits uint) int32 {
	r.seed = (r.seed*javaMultiplier + 0xB) & javaMask
	return int32(r.seed >> (48 - bits))
}

// nextInt is Random.nextInt(bound), bound > 0.
func (r *javaRandom) nextInt(bound int32) int32 {
	v := r.next(31)
	m := bound - 1
	if bound&m == 0 {
		return int32((int64(bound) * int64(v)) >> 31)
	}
	for u := v; ; u = r.next(31) {
		v = u % bound
		if u-v+m >= 0 { // Java's overflow test: int32 arithmetic wraps
			return v
		}
	}
}

// nextDouble is Random.nextDouble: 53 random bits in [0, 1).
func (r *javaRandom) nextDouble() float64 {
	return float64(int64(r.next(26))<<27+int64(r.next(27))) * (1.0 / (1 << 53))
}

// nextFloat is Random.nextFloat: 24 random bits in [0, 1).
func (r *javaRandom) nextFloat() float32 {
	return float32(r.next(24)) / (1 << 24)
}
