package state

import (
	"errors"
	"fmt"
)

// Bounds of the maximum parallelism (the number of key groups), as Flink's
// KeyGroupRangeAssignment: a job that sets none gets DefaultMaxParallelism.
const (
	// DefaultLowerBoundMaxParallelism is the least default maximum parallelism.
	DefaultLowerBoundMaxParallelism = 1 << 7
	// UpperBoundMaxParallelism is the largest parallelism and maximum parallelism.
	UpperBoundMaxParallelism = 1 << 15
)

// ErrParallelism is wrapped by the errors of the key-group functions.
var ErrParallelism = errors.New("state: invalid parallelism")

// KeyGroupRange is the contiguous, inclusive range of key groups
// [Start, End] one operator instance owns. An empty range has End < Start.
type KeyGroupRange struct {
	Start, End int
}

// Len returns the number of key groups in the range.
func (r KeyGroupRange) Len() int {
	if r.End < r.Start {
		return 0
	}
	return r.End - r.Start + 1
}

// Contains reports whether group g is in the range.
func (r KeyGroupRange) Contains(g int) bool { return g >= r.Start && g <= r.End }

// Intersect returns the key groups in both ranges (possibly empty).
func (r KeyGroupRange) Intersect(o KeyGroupRange) KeyGroupRange {
	return KeyGroupRange{Start: max(r.Start, o.Start), End: min(r.End, o.End)}
}

func (r KeyGroupRange) String() string { return fmt.Sprintf("[%d, %d]", r.Start, r.End) }

// MurmurHash is Flink's MathUtils.murmurHash: murmur3's 32-bit mix of one int,
// made non-negative (Integer.MIN_VALUE becomes 0).
func MurmurHash(code int32) int32 {
	c := uint32(code) * 0xcc9e2d51
	c = (c<<15 | c>>17) * 0x1b873593
	c = (c<<13 | c>>19) * 5
	c = (c + 0xe6546b64) ^ 4
	c = (c ^ c>>16) * 0x85ebca6b
	c = (c ^ c>>13) * 0xc2b2ae35
	h := int32(c ^ c>>16)
	m := h >> 31
	// |h|, with Integer.MIN_VALUE (its own negation) cleared to 0
	return ((h ^ m) - m) & 0x7fffffff
}

// KeyGroupForHash is Flink's computeKeyGroupForKeyHash: the key group of a key
// whose hash code is keyHash, murmurHash(keyHash) % maxParallelism.
func KeyGroupForHash(keyHash int32, maxParallelism int) int {
	h := int(MurmurHash(keyHash))
	if maxParallelism&(maxParallelism-1) == 0 {
		return h & (maxParallelism - 1) // h is not negative: the same as %
	}
	return h % maxParallelism
}

// OperatorIndexForKeyGroup is Flink's computeOperatorIndexForKeyGroup: the
// operator instance, of parallelism instances, that owns key group g.
func OperatorIndexForKeyGroup(maxParallelism, parallelism, g int) int {
	return g * parallelism / maxParallelism
}

// RangeForOperatorIndex is Flink's computeKeyGroupRangeForOperatorIndex: the
// key groups operator instance i of parallelism instances owns.
func RangeForOperatorIndex(maxParallelism, parallelism, i int) (KeyGroupRange, error) {
	if err := CheckParallelism(parallelism); err != nil {
		return KeyGroupRange{}, err
	}
	if err := CheckParallelism(maxParallelism); err != nil {
		return KeyGroupRange{}, err
	}
	if maxParallelism < parallelism {
		return KeyGroupRange{}, fmt.Errorf("%w: Maximum parallelism must not be smaller than parallelism.", ErrParallelism)
	}
	if i < 0 || i >= parallelism {
		return KeyGroupRange{}, fmt.Errorf("%w: operator index %d not within 0..%d", ErrParallelism, i, parallelism-1)
	}
	return KeyGroupRange{
		Start: (i*maxParallelism + parallelism - 1) / parallelism,
		End:   ((i+1)*maxParallelism - 1) / parallelism,
	}, nil
}

// DefaultMaxParallelism is Flink's computeDefaultMaxParallelism:
// min(max(roundUpToPowerOfTwo(p + p/2), 128), 32768).
func DefaultMaxParallelism(parallelism int) (int, error) {
	if err := CheckParallelism(parallelism); err != nil {
		return 0, err
	}
	return min(max(roundUpToPowerOfTwo(parallelism+parallelism/2), DefaultLowerBoundMaxParallelism), UpperBoundMaxParallelism), nil
}

// CheckParallelism is Flink's checkParallelismPreconditions: 1..32768.
func CheckParallelism(p int) error {
	if p <= 0 || p > UpperBoundMaxParallelism {
		return fmt.Errorf("%w: Operator parallelism not within bounds: %d", ErrParallelism, p)
	}
	return nil
}

// roundUpToPowerOfTwo is Flink's MathUtils.roundUpToPowerOfTwo for x >= 1.
func roundUpToPowerOfTwo(x int) int {
	p := 1
	for p < x {
		p <<= 1
	}
	return p
}
