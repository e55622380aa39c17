package typed

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
		check("int64", fi.Append(nil, &v), ki.Append(nil, &v), fi.Hash(&v), ki.Hash(&v, PartitionSeed))
		check("int", fn.Append(nil, &v), kn.Append(nil, &n), fn.Hash(&v), kn.Hash(&n, PartitionSeed))
		check("int32", f32.Append(nil, &v), k32.Append(nil, &i32), f32.Hash(&v), k32.Hash(&i32, PartitionSeed))
		check("uint64", fu.Append(nil, &v), ku.Append(nil, &u), fu.Hash(&v), ku.Hash(&u, PartitionSeed))
		for name, k := range map[string]*Keyer[int64]{"int64": fi, "int": fn, "uint64": fu} {
			if w, enc := k.Word(&v), k.Append(nil, &v); w != binary.BigEndian.Uint64(enc) {
				t.Errorf("%s %d: word %#x, encoding %x", name, v, w, enc)
			}
		}
	}
	for name, k := range map[string]*Keyer[int64]{"int64": fi, "int": fn, "uint64": fu} {
		ws := make([]uint64, len(ints))
		k.Words(ints, ws)
		for i := range ints {
			if enc := k.Append(nil, &ints[i]); ws[i] != binary.BigEndian.Uint64(enc) {
				t.Errorf("%s %d: words gives %#x, encoding %x", name, ints[i], ws[i], enc)
			}
		}
	}
	if f32.Word != nil || fs.Word != nil || f32.Words != nil || fs.Words != nil {
		t.Error("a key of other than 8 bytes has a word")
	}
	for _, s := range []string{"", "a", "a\x00b", "\xff\xff", "weir"} {
		check("string", fs.Append(nil, &s), ks.Append(nil, &s), fs.Hash(&s), ks.Hash(&s, PartitionSeed))
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
		_ = fi.Hash(&v)
		_ = fs.Hash(&s)
		buf = fi.Append(buf[:0], &v)
		buf = fs.Append(buf[:0], &s)
	}); n != 0 {
		t.Fatalf("%v allocations per key", n)
	}
}

type wordCount struct {
	Word  string
	Count int64
}

func TestKeyerAllocatesNothingPerRecord(t *testing.T) {
	k, err := NewKeyer[wordCount, string](func(wc wordCount) string { return wc.Word })
	if err != nil {
		t.Fatal(err)
	}
	v := wordCount{Word: "allocation", Count: 1}
	buf := make([]byte, 0, 64)
	k.Append(buf, &v) // warm the pool
	if n := testing.AllocsPerRun(1000, func() {
		buf = k.Append(buf[:0], &v)
		_ = k.Hash(&v)
	}); n != 0 {
		t.Errorf("%v allocations per key", n)
	}
}
