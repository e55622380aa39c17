package memory

import (
	"fmt"
	"math/rand/v2"
	"testing"
	"time"
)

// lineitem is shaped like TPC-H's lineitem: integers, decimals as floats, flags,
// a date and three short strings.
type lineitem struct {
	OrderKey      int64
	PartKey       int64
	SuppKey       int64
	LineNumber    int32
	Quantity      float64
	ExtendedPrice float64
	Discount      float64
	Tax           float64
	ReturnFlag    byte
	LineStatus    byte
	ShipDate      time.Time
	ShipInstruct  string
	ShipMode      string
	Comment       string
}

// flatRow has only fixed-size fields: the codec copies it as one block.
type flatRow struct {
	A, B, C int64
	D, E    float64
	F       int32
	G       uint16
	H       bool
}

var (
	shipModes    = []string{"AIR", "FOB", "MAIL", "RAIL", "REG AIR", "SHIP", "TRUCK"}
	shipInstruct = []string{"COLLECT COD", "DELIVER IN PERSON", "NONE", "TAKE BACK RETURN"}
)

func lineitems(n int) []lineitem {
	r := rand.New(rand.NewPCG(1, 2))
	out := make([]lineitem, n)
	for i := range out {
		out[i] = lineitem{
			OrderKey: int64(i / 4), PartKey: r.Int64N(200000), SuppKey: r.Int64N(10000), LineNumber: int32(i%4 + 1),
			Quantity: float64(r.IntN(50) + 1), ExtendedPrice: r.Float64() * 1e5, Discount: float64(r.IntN(11)) / 100, Tax: float64(r.IntN(9)) / 100,
			ReturnFlag: "ARN"[r.IntN(3)], LineStatus: "OF"[r.IntN(2)],
			ShipDate:     time.Date(1992+r.IntN(7), time.Month(1+r.IntN(12)), 1+r.IntN(28), 0, 0, 0, 0, time.UTC),
			ShipInstruct: shipInstruct[r.IntN(len(shipInstruct))],
			ShipMode:     shipModes[r.IntN(len(shipModes))],
			Comment:      fmt.Sprintf("carefully final deposits %d", r.IntN(1e6)),
		}
	}
	return out
}

func flatRows(n int) []flatRow {
	out := make([]flatRow, n)
	for i := range out {
		out[i] = flatRow{A: int64(i), B: -int64(i), C: int64(i) * 3, D: float64(i) / 7, E: -1, F: int32(i), G: uint16(i), H: i%2 == 0}
	}
	return out
}

// TestCodecAppendAllocs checks that Append into a buffer with room allocates
// nothing.
func TestCodecAppendAllocs(t *testing.T) {
	li := lineitems(64)
	cl := mustCodec[lineitem](t)
	buf := make([]byte, 0, 1<<16)
	if a := testing.AllocsPerRun(100, func() {
		buf = buf[:0]
		for i := range li {
			buf = cl.Append(buf, &li[i])
		}
	}); a != 0 {
		t.Errorf("lineitem Append: %v allocs per 64 records, want 0", a)
	}
	fr := flatRows(64)
	cf := mustCodec[flatRow](t)
	if !cf.Flat() {
		t.Fatal("flatRow is not flat")
	}
	if a := testing.AllocsPerRun(100, func() {
		buf = buf[:0]
		for i := range fr {
			buf = cf.Append(buf, &fr[i])
		}
	}); a != 0 {
		t.Errorf("flatRow Append: %v allocs per 64 records, want 0", a)
	}
}

// TestCodecDecodeArenaAllocs checks that DecodeArena allocates only a slab now
// and then (O(1) per batch), while Decode allocates each string.
func TestCodecDecodeArenaAllocs(t *testing.T) {
	const n = 1000
	li := lineitems(n)
	c := mustCodec[lineitem](t)
	var enc []byte
	strBytes := 0
	for i := range li {
		enc = c.Append(enc, &li[i])
		strBytes += len(li[i].ShipInstruct) + len(li[i].ShipMode) + len(li[i].Comment)
	}
	out := make([]lineitem, n)
	decodeAll := func(a *Arena) {
		src := enc
		for i := range out {
			k, err := c.DecodeArena(src, &out[i], a)
			if err != nil {
				t.Fatal(err)
			}
			src = src[k:]
		}
	}
	a := NewArena(0)
	allocs := testing.AllocsPerRun(20, func() { decodeAll(a) })
	// A slab holds DefaultSlabSize bytes, so a run starts at most this many.
	maxSlabs := float64(strBytes/DefaultSlabSize + 1)
	if allocs > maxSlabs {
		t.Errorf("DecodeArena: %v allocs per %d records, want at most %v (one per slab)", allocs, n, maxSlabs)
	}
	for i := range out {
		if out[i] != li[i] {
			t.Fatalf("record %d: got %+v, want %+v", i, out[i], li[i])
		}
	}
	plain := testing.AllocsPerRun(5, func() { decodeAll(nil) })
	if plain != 3*n {
		t.Errorf("Decode: %v allocs per %d records, want %d (one per string)", plain, n, 3*n)
	}
}

func BenchmarkCodec(b *testing.B) {
	b.Run("lineitem", func(b *testing.B) { benchCodec(b, lineitems(1024)) })
	b.Run("flat", func(b *testing.B) { benchCodec(b, flatRows(1024)) })
}

func benchCodec[T any](b *testing.B, vals []T) {
	c := mustCodec[T](b)
	var enc []byte
	offs := make([]int, len(vals)+1)
	for i := range vals {
		enc = c.Append(enc, &vals[i])
		offs[i+1] = len(enc)
	}
	b.Run("Append", func(b *testing.B) {
		buf := make([]byte, 0, len(enc))
		b.SetBytes(int64(len(enc) / len(vals)))
		b.ReportAllocs()
		for i := 0; b.Loop(); i++ {
			if i%len(vals) == 0 {
				buf = buf[:0]
			}
			buf = c.Append(buf, &vals[i%len(vals)])
		}
	})
	for _, arena := range []bool{false, true} {
		name := "Decode"
		if arena {
			name = "DecodeArena"
		}
		b.Run(name, func(b *testing.B) {
			var a *Arena
			if arena {
				a = NewArena(0)
			}
			var v T
			b.SetBytes(int64(len(enc) / len(vals)))
			b.ReportAllocs()
			for i := 0; b.Loop(); i++ {
				j := i % len(vals)
				if _, err := c.DecodeArena(enc[offs[j]:offs[j+1]], &v, a); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
