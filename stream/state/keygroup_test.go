package state

import (
	"errors"
	"math"
	"strings"
	"testing"
)

// javaMurmur is MathUtils.murmurHash written again, line by line in Java's int
// arithmetic (int32 wraps, >>> as a uint32 shift), as the oracle of MurmurHash.
func javaMurmur(code int32) int32 {
	code *= -862048943 // 0xcc9e2d51
	code = int32(uint32(code)<<15 | uint32(code)>>17)
	code *= 461845907 // 0x1b873593
	code = int32(uint32(code)<<13 | uint32(code)>>19)
	code = code*5 + -430675100 // 0xe6546b64
	code ^= 4
	code ^= int32(uint32(code) >> 16)
	code *= -2048144789 // 0x85ebca6b
	code ^= int32(uint32(code) >> 13)
	code *= -1028477387 // 0xc2b2ae35
	code ^= int32(uint32(code) >> 16)
	switch {
	case code >= 0:
		return code
	case code != math.MinInt32:
		return -code
	}
	return 0
}

func TestMurmurHash(t *testing.T) {
	// MathUtils.murmurHash of these ints, printed by Flink's code run in Java.
	for _, c := range []struct{ in, want int32 }{
		{0, 593689054}, {1, 68075478}, {2, 1085422463}, {-1, 1982413648}, {42, 1134849565},
		{99162322, 1715862179}, {math.MaxInt32, 1653689534}, {math.MinInt32, 1718298732},
	} {
		if got := MurmurHash(c.in); got != c.want {
			t.Errorf("MurmurHash(%d) = %d, want %d", c.in, got, c.want)
		}
	}
	for _, c := range []int32{0, 1, -1, 42, 99162322, math.MaxInt32, math.MinInt32, -123456789} {
		if got, want := MurmurHash(c), javaMurmur(c); got != want || got < 0 {
			t.Errorf("MurmurHash(%d) = %d, want %d", c, got, want)
		}
	}
}

func TestKeyGroupAssignment(t *testing.T) {
	// Flink's assignToKeyGroup(key, 128) for these keys, printed by Java.
	hs, _ := NewHashFunc[string]()
	for _, c := range []struct {
		key  string
		want int
	}{{"hello", 35}, {"Hello World", 26}, {"to be or not", 105}, {"é", 30}, {"😀", 54}, {"polygenelubricants", 108}} {
		if got := KeyGroupForHash(hs(c.key), 128); got != c.want {
			t.Errorf("group of %q = %d, want %d", c.key, got, c.want)
		}
	}
	if got := KeyGroupForHash(javaLongHash(5), 128); got != 126 {
		t.Errorf("group of 5L = %d, want 126", got)
	}
	for _, mp := range []int{1, 7, 128, 1000, 32768} {
		for _, p := range []int{1, 2, 3, 5, 7} {
			if p > mp {
				continue
			}
			// Every group lands in the range of the operator that owns it, and the
			// ranges tile [0, mp).
			next := 0
			for i := 0; i < p; i++ {
				r, err := RangeForOperatorIndex(mp, p, i)
				if err != nil {
					t.Fatal(err)
				}
				if r.Start != next {
					t.Fatalf("mp %d p %d op %d: range %v starts after %d", mp, p, i, r, next)
				}
				next = r.End + 1
				for g := r.Start; g <= r.End; g++ {
					if o := OperatorIndexForKeyGroup(mp, p, g); o != i {
						t.Fatalf("mp %d p %d: group %d goes to %d, in range of %d", mp, p, g, o, i)
					}
				}
			}
			if next != mp {
				t.Fatalf("mp %d p %d: ranges end at %d", mp, p, next)
			}
		}
	}
	// Values of computeKeyGroupRangeForOperatorIndex(128, 3, i).
	for i, want := range []KeyGroupRange{{0, 42}, {43, 85}, {86, 127}} {
		if r, _ := RangeForOperatorIndex(128, 3, i); r != want {
			t.Errorf("range of %d = %v, want %v", i, r, want)
		}
	}
}

func TestDefaultMaxParallelism(t *testing.T) {
	for _, c := range []struct{ p, want int }{
		{1, 128}, {85, 128}, {86, 256}, {100, 256}, {171, 256}, {172, 512},
		{10000, 16384}, {21846, 32768}, {32768, 32768},
	} {
		if got, err := DefaultMaxParallelism(c.p); err != nil || got != c.want {
			t.Errorf("DefaultMaxParallelism(%d) = %d, %v; want %d", c.p, got, err, c.want)
		}
	}
	for _, p := range []int{0, -1, 32769} {
		_, err := DefaultMaxParallelism(p)
		if !errors.Is(err, ErrParallelism) || !strings.Contains(err.Error(), "Operator parallelism not within bounds") {
			t.Errorf("DefaultMaxParallelism(%d): error %v", p, err)
		}
	}
	if _, err := RangeForOperatorIndex(4, 8, 0); err == nil || !strings.Contains(err.Error(), "Maximum parallelism must not be smaller than parallelism.") {
		t.Errorf("max parallelism below parallelism: error %v", err)
	}
}

// TestKeyGroupForHashModulo: the key group is the Java murmur hash modulo the
// maximum parallelism, at powers of two (taken by a mask) and at others.
func TestKeyGroupForHashModulo(t *testing.T) {
	for _, maxP := range []int{1, 2, 3, 100, 128, 1000, 4096, 32767, 32768} {
		for i := range int32(20_000) {
			h := i*-1640531535 + 7 // spread over the whole int32 range
			if got, want := KeyGroupForHash(h, maxP), int(javaMurmur(h))%maxP; got != want {
				t.Fatalf("KeyGroupForHash(%d, %d) = %d, want %d", h, maxP, got, want)
			}
		}
	}
}
