package memory

import (
	"bytes"
	"encoding/binary"
	"errors"
	"math"
	"testing"
	"time"
	"unsafe"
)

// Native fuzz tests. Their seed corpora (f.Add) run as unit tests under plain
// `go test`; `go test -fuzz=FuzzCodecRoundTrip ./memory/` explores further.

type fuzzInner struct {
	N    int16
	S    string
	Flag bool
}

type fuzzRec struct {
	B      bool
	I8     int8
	I64    int64
	U16    uint16
	F32    float32
	F64    float64
	S      string
	Bs     []byte
	At     time.Time
	Arr    [2]int32
	P      *fuzzInner
	L      []fuzzInner
	Fs     []float64
	hidden uint32
}

// fuzzBytes hands out values drawn from fuzzer input, zeros once it is used up.
type fuzzBytes struct{ b []byte }

func (f *fuzzBytes) byte() byte {
	if len(f.b) == 0 {
		return 0
	}
	c := f.b[0]
	f.b = f.b[1:]
	return c
}

func (f *fuzzBytes) u64() uint64 {
	var buf [8]byte
	for i := range buf {
		buf[i] = f.byte()
	}
	return binary.LittleEndian.Uint64(buf[:])
}

func (f *fuzzBytes) bytes() []byte {
	n := int(f.byte())
	if n == 0 {
		return nil
	}
	n--
	out := make([]byte, 0, n)
	for i := 0; i < n && len(f.b) > 0; i++ {
		out = append(out, f.byte())
	}
	return out
}

func (f *fuzzBytes) time() time.Time {
	t := time.Unix(int64(f.u64()>>2)-1<<60, int64(f.u64()%1e9))
	switch f.byte() % 4 {
	case 0:
		return t.UTC()
	case 1:
		return t
	case 2:
		return t.In(time.FixedZone(string(f.bytes()), int(int16(f.u64()))*60))
	}
	return time.Time{}
}

func (f *fuzzBytes) inner() fuzzInner {
	return fuzzInner{N: int16(f.u64()), S: string(f.bytes()), Flag: f.byte()&1 == 1}
}

func fuzzRecFrom(data []byte) fuzzRec {
	f := &fuzzBytes{b: data}
	r := fuzzRec{
		B: f.byte()&1 == 1, I8: int8(f.byte()), I64: int64(f.u64()), U16: uint16(f.u64()),
		F32: math.Float32frombits(uint32(f.u64())), F64: math.Float64frombits(f.u64()),
		S: string(f.bytes()), Bs: f.bytes(), At: f.time(), Arr: [2]int32{int32(f.u64()), int32(f.u64())},
		hidden: uint32(f.u64()),
	}
	if f.byte()&1 == 1 {
		in := f.inner()
		r.P = &in
	}
	if n := int(f.byte() % 5); n > 0 {
		r.L = make([]fuzzInner, n-1)
		for i := range r.L {
			r.L[i] = f.inner()
		}
	}
	if n := int(f.byte() % 4); n > 0 {
		r.Fs = make([]float64, n-1)
		for i := range r.Fs {
			r.Fs[i] = math.Float64frombits(f.u64())
		}
	}
	return r
}

// fuzzEqual compares two fuzzRecs field by field: floats by bits, slices with
// their nil-ness, times by instant, zone and (for UTC and Local) location.
func fuzzEqual(a, b *fuzzRec) bool {
	sameBytes := func(x, y []byte) bool { return (x == nil) == (y == nil) && bytes.Equal(x, y) }
	if a.B != b.B || a.I8 != b.I8 || a.I64 != b.I64 || a.U16 != b.U16 || a.hidden != b.hidden ||
		math.Float32bits(a.F32) != math.Float32bits(b.F32) || math.Float64bits(a.F64) != math.Float64bits(b.F64) ||
		a.S != b.S || !sameBytes(a.Bs, b.Bs) || a.Arr != b.Arr || !sameTime(a.At, b.At) {
		return false
	}
	if (a.P == nil) != (b.P == nil) || (a.P != nil && *a.P != *b.P) {
		return false
	}
	if (a.L == nil) != (b.L == nil) || len(a.L) != len(b.L) || (a.Fs == nil) != (b.Fs == nil) || len(a.Fs) != len(b.Fs) {
		return false
	}
	for i := range a.L {
		if a.L[i] != b.L[i] {
			return false
		}
	}
	for i := range a.Fs {
		if math.Float64bits(a.Fs[i]) != math.Float64bits(b.Fs[i]) {
			return false
		}
	}
	return true
}

func sameTime(a, b time.Time) bool {
	an, ao := a.Zone()
	bn, bo := b.Zone()
	if !a.Equal(b) || an != bn || ao != bo {
		return false
	}
	// UTC and Local come back as themselves. (The converse need not hold: a fixed
	// zone named "UTC" of offset 0 may come back as time.UTC.)
	for _, loc := range []*time.Location{time.UTC, time.Local} {
		if a.Location() == loc && b.Location() != loc {
			return false
		}
	}
	return true
}

func fuzzSeeds(f *testing.F) {
	f.Add([]byte{})
	f.Add([]byte{1, 0xff, 1, 2, 3, 4, 5, 6, 7, 8})
	f.Add(bytes.Repeat([]byte{0xff}, 200))
	f.Add(bytes.Repeat([]byte{0x00, 0x7f, 0xf8, 0x01}, 60))
	f.Add([]byte("the quick brown fox jumps over the lazy dog, 日本語, \x00\xff"))
	seq := make([]byte, 256)
	for i := range seq {
		seq[i] = byte(i * 37)
	}
	f.Add(seq)
}

func FuzzCodecRoundTrip(f *testing.F) {
	fuzzSeeds(f)
	c := mustCodec[fuzzRec](f)
	f.Fuzz(func(t *testing.T, data []byte) {
		v := fuzzRecFrom(data)
		enc := c.Append(nil, &v)
		var plain, arena fuzzRec
		n, err := c.Decode(enc, &plain)
		if err != nil || n != len(enc) || !fuzzEqual(&plain, &v) {
			t.Fatalf("Decode: n=%d of %d, err=%v\n got %+v\nwant %+v", n, len(enc), err, plain, v)
		}
		n, err = c.DecodeArena(enc, &arena, NewArena(1024))
		if err != nil || n != len(enc) || !fuzzEqual(&arena, &v) {
			t.Fatalf("DecodeArena: n=%d of %d, err=%v\n got %+v\nwant %+v", n, len(enc), err, arena, v)
		}
	})
}

// flagRow is flat with bools, which decoding must validate.
type flagRow struct {
	A  int64
	On bool
	Fs [3]bool
	N  uint16
}

func FuzzCodecDecode(f *testing.F) {
	fuzzSeeds(f)
	c := mustCodec[fuzzRec](f)
	for _, data := range [][]byte{{}, {1, 2, 3}, []byte("seed"), make([]byte, 90)} {
		v := fuzzRecFrom(data)
		f.Add(c.Append(nil, &v)) // valid encodings, for the fuzzer to mutate
	}
	cn := mustCodec[node](f)
	cf := mustCodec[flagRow](f)
	cl := mustCodec[[]lineitem](f)
	f.Fuzz(func(t *testing.T, data []byte) {
		var v fuzzRec
		n, err := c.Decode(data, &v)
		if err != nil {
			if !errors.Is(err, ErrCorrupt) {
				t.Fatalf("error does not wrap ErrCorrupt: %v", err)
			}
		} else {
			// A decoded value round-trips to an equal value, and from the
			// second encoding on the bytes are a fixed point. (The first may
			// differ: a zone named "UTC" of offset 0 becomes time.UTC.)
			if n > len(data) {
				t.Fatalf("consumed %d of %d bytes", n, len(data))
			}
			var w, x fuzzRec
			if _, err := c.DecodeArena(c.Append(nil, &v), &w, &Arena{}); err != nil || !fuzzEqual(&v, &w) {
				t.Fatalf("re-decoding a decoded value: %v\n got %+v\nwant %+v", err, w, v)
			}
			e2 := c.Append(nil, &w)
			if _, err := c.Decode(e2, &x); err != nil {
				t.Fatal(err)
			}
			if e3 := c.Append(nil, &x); !bytes.Equal(e2, e3) {
				t.Fatalf("encoding is not a fixed point:\n%x\n%x", e2, e3)
			}
		}
		var nd node
		if _, err := cn.Decode(data, &nd); err != nil && !errors.Is(err, ErrCorrupt) {
			t.Fatal(err)
		}
		var fr flagRow
		if _, err := cf.Decode(data, &fr); err == nil {
			for _, b := range []bool{fr.On, fr.Fs[0], fr.Fs[1], fr.Fs[2]} {
				if x := *(*uint8)(unsafe.Pointer(&b)); x > 1 {
					t.Fatalf("decoded a bool holding %d", x)
				}
			}
		}
		var ls []lineitem
		if _, err := cl.DecodeArena(data, &ls, &Arena{}); err != nil && !errors.Is(err, ErrCorrupt) {
			t.Fatal(err)
		}
	})
}

// FuzzKeyOrder builds two records from fuzzer input and checks that the order of
// their encoded composite key, with mixed directions, is the oracle's.
func FuzzKeyOrder(f *testing.F) {
	f.Add([]byte{}, []byte{})
	f.Add([]byte{1, 2, 3}, []byte{1, 2, 4})
	f.Add([]byte("a\x00b"), []byte("a\x00"))
	f.Add(bytes.Repeat([]byte{0xff}, 80), bytes.Repeat([]byte{0x7f, 0xf8}, 40))
	f.Add([]byte{0, 0, 0, 0, 0, 0, 0, 0x80, 0, 0, 0, 0, 0, 0, 0, 0}, []byte{0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0x80})
	combo := []oraclePart{{"S", Ascending}, {"F64", Descending}, {"Bs", Descending}, {"I16", Ascending},
		{"F32", Ascending}, {"Ship.Date", Descending}, {"SArr", Ascending}, {"U64", Descending}}
	parts := make([]KeyPart[keyRec], len(combo))
	for i, p := range combo {
		parts[i] = Field[keyRec](p.path, p.o)
	}
	k := mustKey(f, parts...)
	f.Fuzz(func(t *testing.T, da, db []byte) {
		a, b := keyRecFrom(da), keyRecFrom(db)
		ea, eb := k.Append(nil, &a), k.Append(nil, &b)
		want := oracleKey(combo, &a, &b)
		if got := sign(bytes.Compare(ea, eb)); got != want {
			t.Fatalf("bytes.Compare = %d, oracle %d\na=%+v\nb=%+v", got, want, a, b)
		}
		if got := sign(k.Compare(&a, &b)); got != want {
			t.Fatalf("Key.Compare = %d, oracle %d", got, want)
		}
		if pa, pb := Prefix(ea), Prefix(eb); pa != pb && sign(oracleUint(pa, pb)) != want {
			t.Fatalf("prefix order disagrees with oracle %d", want)
		}
	})
}

// keyRecFrom fills the fields FuzzKeyOrder's key reads. Short inputs give short
// strings and small numbers, so two inputs often tie on early parts.
func keyRecFrom(data []byte) keyRec {
	f := &fuzzBytes{b: data}
	return keyRec{
		S:    string(f.bytes()),
		F64:  math.Float64frombits(f.u64()),
		Bs:   f.bytes(),
		I16:  int16(f.u64()),
		F32:  math.Float32frombits(uint32(f.u64())),
		Ship: keyShip{Date: time.Unix(int64(int16(f.u64())), int64(f.u64()%1e9))},
		SArr: [2]string{string(f.bytes()), string(f.bytes())},
		U64:  f.u64(),
	}
}
