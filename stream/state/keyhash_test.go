package state

import (
	"math"
	"testing"
)

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
