package dataset

import (
	"bytes"
	"encoding/binary"
	"math"
	"testing"

	"github.com/weirdata/weir/memory"
)

// TestScalarKeyer: the fast keyers of scalar keys encode and hash exactly as
// memory.ValueKey does, so partitioning agrees whichever path a key takes.
func TestScalarKeyer(t *testing.T) {
	check := func(name string, got, want []byte, gh, wh uint64) {
		t.Helper()
		if !bytes.Equal(got, want) || gh != wh {
			t.Fatalf("%s: key %x hash %x, ValueKey gives %x %x", name, got, gh, want, wh)
		}
	}
	ints := []int64{math.MinInt64, -1, 0, 1, 42, math.MaxInt64}
	ki, _ := memory.ValueKey[int64]()
	kn, _ := memory.ValueKey[int]()
	k32, _ := memory.ValueKey[int32]()
	ku, _ := memory.ValueKey[uint64]()
	ks, _ := memory.ValueKey[string]()
	fi := scalarKeyer(func(v int64) int64 { return v })
	fn := scalarKeyer(func(v int64) int { return int(v) })
	f32 := scalarKeyer(func(v int64) int32 { return int32(v) })
	fu := scalarKeyer(func(v int64) uint64 { return uint64(v) })
	fs := scalarKeyer(func(s string) string { return s })
	for _, v := range ints {
		n, i32, u := int(v), int32(v), uint64(v)
		check("int64", fi.append(nil, &v), ki.Append(nil, &v), fi.hash(&v), ki.Hash(&v, partitionSeed))
		check("int", fn.append(nil, &v), kn.Append(nil, &n), fn.hash(&v), kn.Hash(&n, partitionSeed))
		check("int32", f32.append(nil, &v), k32.Append(nil, &i32), f32.hash(&v), k32.Hash(&i32, partitionSeed))
		check("uint64", fu.append(nil, &v), ku.Append(nil, &u), fu.hash(&v), ku.Hash(&u, partitionSeed))
		for name, k := range map[string]*keyer[int64]{"int64": fi, "int": fn, "uint64": fu} {
			if w, enc := k.word(&v), k.append(nil, &v); w != binary.BigEndian.Uint64(enc) {
				t.Errorf("%s %d: word %#x, encoding %x", name, v, w, enc)
			}
		}
	}
	for name, k := range map[string]*keyer[int64]{"int64": fi, "int": fn, "uint64": fu} {
		ws := make([]uint64, len(ints))
		k.words(ints, ws)
		for i := range ints {
			if enc := k.append(nil, &ints[i]); ws[i] != binary.BigEndian.Uint64(enc) {
				t.Errorf("%s %d: words gives %#x, encoding %x", name, ints[i], ws[i], enc)
			}
		}
	}
	if f32.word != nil || fs.word != nil || f32.words != nil || fs.words != nil {
		t.Error("a key of other than 8 bytes has a word")
	}
	for _, s := range []string{"", "a", "a\x00b", "\xff\xff", "weir"} {
		check("string", fs.append(nil, &s), ks.Append(nil, &s), fs.hash(&s), ks.Hash(&s, partitionSeed))
	}
	if scalarKeyer(func(v int64) float64 { return 0 }) != nil {
		t.Fatal("a float64 key took a scalar fast path it has none of")
	}
}

// TestScalarKeyerAllocs: hashing and encoding a scalar key allocates nothing.
func TestScalarKeyerAllocs(t *testing.T) {
	fi := scalarKeyer(func(v int64) int64 { return v })
	fs := scalarKeyer(func(s string) string { return s })
	v, s := int64(7), "seven"
	buf := make([]byte, 0, 64)
	if n := testing.AllocsPerRun(100, func() {
		_ = fi.hash(&v)
		_ = fs.hash(&s)
		buf = fi.append(buf[:0], &v)
		buf = fs.append(buf[:0], &s)
	}); n != 0 {
		t.Fatalf("%v allocations per key", n)
	}
}
