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

func TestJavaHashCodes(t *testing.T) {
	// Values of java.lang String/Long/Double/Boolean.hashCode.
	strs := []struct {
		s    string
		want int32
	}{
		{"", 0},
		{"a", 97},
		{"hello", 99162322},
		{"Hello World", -862545276},
		{"polygenelubricants", math.MinInt32},
		{"é", 233},     // one UTF-16 unit U+00E9
		{"€", 8364},    // U+20AC
		{"😀", 1772899}, // surrogates D83D DE00: 0xD83D*31 + 0xDE00
		{"to be or not", -1285043666},
	}
	for _, c := range strs {
		if got := JavaStringHash(c.s); got != c.want {
			t.Errorf("JavaStringHash(%q) = %d, want %d", c.s, got, c.want)
		}
	}
	hs, _ := NewHashFunc[string]()
	hl, _ := NewHashFunc[int64]()
	hi, _ := NewHashFunc[int]()
	hb, _ := NewHashFunc[bool]()
	hd, _ := NewHashFunc[float64]()
	type userID string
	hu, _ := NewHashFunc[userID]()
	for _, c := range []struct {
		name      string
		got, want int32
	}{
		{"string hello", hs("hello"), 99162322},
		{"named string", hu("hello"), 99162322},
		{"Long 5", hl(5), 5},
		{"Long -1", hl(-1), 0},
		{"Long 1<<32", hl(1 << 32), 1},
		{"Long MaxInt64", hl(math.MaxInt64), math.MinInt32},
		{"Integer -7", hi(-7), -7},
		{"true", hb(true), 1231},
		{"false", hb(false), 1237},
		{"Double 1.0", hd(1.0), 1072693248},
		{"Double 0.0", hd(0.0), 0},
		{"Double -0.0", hd(math.Copysign(0, -1)), math.MinInt32},
		{"Double NaN", hd(math.NaN()), 2146959360},
		{"Double other NaN", hd(math.Float64frombits(0x7ff0000000000001)), 2146959360},
	} {
		if c.got != c.want {
			t.Errorf("%s: hash %d, want %d", c.name, c.got, c.want)
		}
	}
	type pair struct{ A, B int32 }
	hp, err := NewHashFunc[pair]()
	if err != nil {
		t.Fatal(err)
	}
	// Arrays.hashCode of the little-endian bytes 01 00 00 00 ff ff ff ff.
	want := int32(1)
	for _, b := range []int8{1, 0, 0, 0, -1, -1, -1, -1} {
		want = 31*want + int32(b)
	}
	if got := hp(pair{1, -1}); got != want {
		t.Errorf("struct hash %d, want %d", got, want)
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
