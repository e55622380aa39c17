package memory

import (
	"bytes"
	"errors"
	"math"
	"reflect"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"
	"unsafe"
)

type scalars struct {
	B    bool
	I    int
	I8   int8
	I16  int16
	I32  int32
	I64  int64
	U    uint
	U8   uint8
	U16  uint16
	U32  uint32
	U64  uint64
	F32  float32
	F64  float64
	C64  complex64
	C128 complex128
}

type (
	myInt    int32
	myString string
	myBytes  []byte
	myTime   time.Time
	myBool   bool
	myInts   []myInt
)

type inner struct {
	Name string
	Tags []string
	At   time.Time
}

// everything has a field of every supported kind, nil and empty variants, and
// unexported fields.
type everything struct {
	S          scalars
	Str        string
	Bytes      []byte
	NilBytes   []byte
	EmptyBytes []byte
	At         time.Time
	Arr        [3]int16
	StrArr     [2]string
	BoolArr    [3]bool
	Inner      inner
	PInner     *inner
	PNil       *inner
	PInt       *int64
	PP         **int
	Ints       []int64
	NilInts    []int64
	EmptyInts  []int64
	Inners     []inner
	Nested     [][]string
	Flats      []scalars
	MI         myInt
	MS         myString
	MB         myBytes
	MT         myTime
	MBool      myBool
	MInts      myInts
	Empty      struct{}
	Zero       [0]int
	Empties    []struct{}
	hidden     string
	hiddenN    int32
	hiddenP    *inner
}

func fullScalars(seed int) scalars {
	return scalars{
		B: seed%2 == 0, I: -1 << 40 * seed, I8: math.MinInt8, I16: math.MaxInt16, I32: -7 * int32(seed),
		I64: math.MinInt64 + int64(seed), U: 1 << 63, U8: 255, U16: 65535, U32: 1 << 31, U64: math.MaxUint64 - uint64(seed),
		F32: -1.5, F64: math.Pi * float64(seed), C64: complex(1, -2), C128: complex(math.Inf(1), -0.5),
	}
}

func fullEverything() everything {
	at := time.Date(2024, 2, 29, 23, 59, 59, 999999999, time.UTC)
	n := int64(-42)
	i := 7
	pi := &i
	return everything{
		S:          fullScalars(3),
		Str:        "héllo, 世界 \x00\xff",
		Bytes:      []byte{0, 1, 2, 0xff},
		EmptyBytes: []byte{},
		At:         at,
		Arr:        [3]int16{-1, 0, 1},
		StrArr:     [2]string{"", "x"},
		BoolArr:    [3]bool{true, false, true},
		Inner:      inner{Name: "in", Tags: []string{"a", "", "c"}, At: at.Add(time.Hour)},
		PInner:     &inner{Name: "p", Tags: nil, At: time.Time{}},
		PInt:       &n,
		PP:         &pi,
		Ints:       []int64{math.MinInt64, 0, math.MaxInt64},
		EmptyInts:  []int64{},
		Inners:     []inner{{Name: "x"}, {Tags: []string{}}, {At: at}},
		Nested:     [][]string{nil, {}, {"a", "b"}},
		Flats:      []scalars{fullScalars(1), fullScalars(2)},
		MI:         -5,
		MS:         "named",
		MB:         myBytes("bytes"),
		MT:         myTime(at),
		MBool:      true,
		MInts:      myInts{1, -2},
		Empties:    make([]struct{}, 5),
		hidden:     "secret",
		hiddenN:    -9,
		hiddenP:    &inner{Name: "hp"},
	}
}

func mustCodec[T any](t testing.TB) *Codec[T] {
	t.Helper()
	c, err := NewCodec[T]()
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// roundTrip appends v after a prefix, decodes it with and without an arena, checks
// the bytes consumed, and returns both decoded values.
func roundTrip[T any](t *testing.T, c *Codec[T], v *T) (plain, arena T) {
	t.Helper()
	prefix := []byte("prefix")
	enc := c.Append(append([]byte(nil), prefix...), v)
	if !bytes.Equal(enc[:len(prefix)], prefix) {
		t.Fatalf("Append overwrote dst")
	}
	enc = enc[len(prefix):]
	if len(enc) < c.MinSize() {
		t.Fatalf("encoded %d bytes, below MinSize %d", len(enc), c.MinSize())
	}
	withTail := append(append([]byte(nil), enc...), 0xEE, 0xEE)
	n, err := c.Decode(withTail, &plain)
	if err != nil || n != len(enc) {
		t.Fatalf("Decode = %d, %v; want %d, nil", n, err, len(enc))
	}
	n, err = c.DecodeArena(withTail, &arena, NewArena(1024))
	if err != nil || n != len(enc) {
		t.Fatalf("DecodeArena = %d, %v; want %d, nil", n, err, len(enc))
	}
	for i := range withTail {
		withTail[i] = 0xAA // decoded values must not alias the input
	}
	return plain, arena
}

func TestCodecRoundTripEverything(t *testing.T) {
	c := mustCodec[everything](t)
	if c.Flat() {
		t.Fatal("everything reported flat")
	}
	for name, v := range map[string]everything{"zero": {}, "full": fullEverything()} {
		t.Run(name, func(t *testing.T) {
			plain, arena := roundTrip(t, c, &v)
			if !reflect.DeepEqual(plain, v) {
				t.Errorf("Decode:\n got %+v\nwant %+v", plain, v)
			}
			if !reflect.DeepEqual(arena, v) {
				t.Errorf("DecodeArena:\n got %+v\nwant %+v", arena, v)
			}
		})
	}
}

func TestCodecNilVersusEmpty(t *testing.T) {
	c := mustCodec[everything](t)
	v := fullEverything()
	got, arena := roundTrip(t, c, &v)
	for _, g := range []everything{got, arena} {
		if g.NilBytes != nil || g.EmptyBytes == nil || g.NilInts != nil || g.EmptyInts == nil || g.PNil != nil {
			t.Errorf("nil/empty not kept: NilBytes=%v EmptyBytes=%v NilInts=%v EmptyInts=%v PNil=%v",
				g.NilBytes == nil, g.EmptyBytes == nil, g.NilInts == nil, g.EmptyInts == nil, g.PNil == nil)
		}
		if g.Nested[0] != nil || g.Nested[1] == nil || g.Inners[1].Tags == nil || g.Inners[0].Tags != nil {
			t.Errorf("nil/empty not kept in nested slices: %#v %#v", g.Nested, g.Inners)
		}
	}
}

func TestCodecScalarsTable(t *testing.T) {
	c := mustCodec[scalars](t)
	if !c.Flat() || c.MinSize() != int(unsafe.Sizeof(scalars{})) {
		t.Fatalf("scalars: Flat %v MinSize %d, want true %d", c.Flat(), c.MinSize(), unsafe.Sizeof(scalars{}))
	}
	cases := []scalars{
		{},
		fullScalars(0),
		{I: math.MaxInt, I8: math.MaxInt8, I16: math.MinInt16, I32: math.MinInt32, I64: math.MaxInt64},
		{U: math.MaxUint, U8: 1, U16: 1, U32: math.MaxUint32, U64: 1},
		{F32: float32(math.Inf(-1)), F64: math.Inf(1), C64: complex(float32(math.NaN()), 0)},
		{F32: math.SmallestNonzeroFloat32, F64: -math.SmallestNonzeroFloat64},
	}
	for i, v := range cases {
		enc := c.Append(nil, &v)
		if len(enc) != int(unsafe.Sizeof(v)) {
			t.Fatalf("case %d: %d bytes, want %d", i, len(enc), unsafe.Sizeof(v))
		}
		var got scalars
		if _, err := c.Decode(enc, &got); err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(c.Append(nil, &got), enc) || got.I64 != v.I64 || got.U64 != v.U64 || got.B != v.B ||
			math.Float64bits(got.F64) != math.Float64bits(v.F64) {
			t.Errorf("case %d: got %+v, want %+v", i, got, v)
		}
	}
}

type floats struct {
	F64  float64
	F32  float32
	S    string // makes the struct non-flat
	Fs   []float64
	F32s []float32
	P    *float64
	Arr  [2]float32
}

func TestCodecFloatsBitExact(t *testing.T) {
	specials64 := []float64{
		0, math.Copysign(0, -1), math.Inf(1), math.Inf(-1), math.NaN(),
		math.Float64frombits(0x7ff0000000000001), // signalling NaN payload
		math.Float64frombits(0xfff8000000000abc), // negative NaN with payload
		math.MaxFloat64, -math.SmallestNonzeroFloat64,
	}
	specials32 := []float32{
		0, float32(math.Copysign(0, -1)), float32(math.Inf(1)), float32(math.Inf(-1)),
		math.Float32frombits(0x7fc00001), math.Float32frombits(0xff800001), math.MaxFloat32,
	}
	c := mustCodec[floats](t)
	for i, f := range specials64 {
		f32 := specials32[i%len(specials32)]
		v := floats{F64: f, F32: f32, Fs: specials64, F32s: specials32, P: &specials64[i], Arr: [2]float32{f32, -f32}}
		for _, got := range func() []floats { a, b := roundTrip(t, c, &v); return []floats{a, b} }() {
			same := math.Float64bits(got.F64) == math.Float64bits(f) &&
				math.Float32bits(got.F32) == math.Float32bits(f32) &&
				math.Float64bits(*got.P) == math.Float64bits(f) &&
				math.Float32bits(got.Arr[1]) == math.Float32bits(-f32)
			for j := range specials64 {
				same = same && math.Float64bits(got.Fs[j]) == math.Float64bits(specials64[j])
			}
			for j := range specials32 {
				same = same && math.Float32bits(got.F32s[j]) == math.Float32bits(specials32[j])
			}
			if !same {
				t.Errorf("case %d (%v): bits changed: %+v", i, f, got)
			}
		}
	}
}

func TestCodecStrings(t *testing.T) {
	type strs struct {
		S  string
		B  []byte
		SS []string
	}
	c := mustCodec[strs](t)
	for _, s := range []string{"", "a", "\x00", "\xff\xfe", "日本語のテキスト", "emoji 🙂", "a\x00b\x00", strings.Repeat("x", 300)} {
		v := strs{S: s, B: []byte(s), SS: []string{s, s + s, ""}}
		plain, arena := roundTrip(t, c, &v)
		for _, g := range []strs{plain, arena} {
			if g.S != s || string(g.B) != s || !reflect.DeepEqual(g.SS, v.SS) {
				t.Errorf("%q: got %+v", s, g)
			}
		}
	}
}

// node is a recursive type, through a pointer and a slice.
type node struct {
	Val  int
	Name string
	Next *node
	Kids []node
}

func chain(n int) *node {
	var head *node
	for i := n; i > 0; i-- {
		head = &node{Val: i, Next: head}
	}
	return head
}

func TestCodecRecursive(t *testing.T) {
	c := mustCodec[node](t)
	tree := node{Val: 1, Name: "root", Next: chain(3), Kids: []node{
		{Val: 2, Kids: []node{{Val: 4, Name: "leaf"}}},
		{Val: 3, Next: &node{Val: 5}, Kids: []node{}},
	}}
	deep := *chain(5000)
	for name, v := range map[string]node{"tree": tree, "deep": deep, "zero": {}} {
		plain, arena := roundTrip(t, c, &v)
		if !reflect.DeepEqual(plain, v) || !reflect.DeepEqual(arena, v) {
			t.Errorf("%s: round trip differs", name)
		}
	}
	tooDeep := chain(maxDepth + 10)
	enc := c.Append(nil, tooDeep)
	var got node
	if _, err := c.Decode(enc, &got); !errors.Is(err, ErrCorrupt) || !strings.Contains(err.Error(), "nesting") {
		t.Errorf("decoding a chain deeper than maxDepth: err = %v", err)
	}
}

func TestCodecDeepNesting(t *testing.T) {
	type l5 struct {
		S []string
		N int8
	}
	type l4 struct{ A [2]l5 }
	type l3 struct{ P *l4 }
	type l2 struct{ L []l3 }
	type l1 struct {
		X  l2
		PP *[]*l2
	}
	c := mustCodec[l1](t)
	mk := func() l2 {
		return l2{L: []l3{{P: &l4{A: [2]l5{{S: []string{"a"}, N: 1}, {N: -1}}}}, {}}}
	}
	inner := mk()
	ps := []*l2{&inner, nil}
	v := l1{X: mk(), PP: &ps}
	plain, arena := roundTrip(t, c, &v)
	if !reflect.DeepEqual(plain, v) || !reflect.DeepEqual(arena, v) {
		t.Errorf("deep nesting: got %+v", plain)
	}
}

type item struct {
	SKU  string
	Tags map[string]int
}

type order struct {
	ID    int
	Items []item
}

func TestCodecUnsupported(t *testing.T) {
	type tags map[string]int
	type withNamed struct{ T tags }
	type withChan struct{ C chan int }
	type withFunc struct{ F [2]func() }
	type withIface struct {
		A int
		X any
	}
	type withUnsafe struct{ P unsafe.Pointer }
	type withUintptr struct{ U uintptr }
	type withPtrMap struct{ P *map[int]int }
	type withZeroArr struct{ Z [0]chan int }
	type deep struct{ L [][]struct{ E error } }
	cases := []struct {
		err string
		new func() error
	}{
		{"memory: codec for memory.order: field Items[].Tags: map[string]int is not supported",
			func() error { _, err := NewCodec[order](); return err }},
		{"memory: codec for memory.withNamed: field T: memory.tags (kind map) is not supported",
			func() error { _, err := NewCodec[withNamed](); return err }},
		{"memory: codec for memory.withChan: field C: chan int is not supported",
			func() error { _, err := NewCodec[withChan](); return err }},
		{"memory: codec for memory.withFunc: field F[]: func() is not supported",
			func() error { _, err := NewCodec[withFunc](); return err }},
		{"memory: codec for memory.withIface: field X: interface {} is not supported",
			func() error { _, err := NewCodec[withIface](); return err }},
		{"memory: codec for memory.withUnsafe: field P: unsafe.Pointer is not supported",
			func() error { _, err := NewCodec[withUnsafe](); return err }},
		{"memory: codec for memory.withUintptr: field U: uintptr is not supported",
			func() error { _, err := NewCodec[withUintptr](); return err }},
		{"memory: codec for memory.withPtrMap: field P: map[int]int is not supported",
			func() error { _, err := NewCodec[withPtrMap](); return err }},
		{"memory: codec for memory.withZeroArr: field Z[]: chan int is not supported",
			func() error { _, err := NewCodec[withZeroArr](); return err }},
		{"memory: codec for memory.deep: field L[][].E: error is not supported",
			func() error { _, err := NewCodec[deep](); return err }},
		{"memory: codec for map[string]int: map[string]int is not supported",
			func() error { _, err := NewCodec[map[string]int](); return err }},
	}
	for _, tc := range cases {
		err := tc.new()
		if err == nil || err.Error() != tc.err {
			t.Errorf("got error %v\nwant       %s", err, tc.err)
		}
	}
}

func TestCodecTopLevelKinds(t *testing.T) {
	s := "top"
	checkRoundTrip(t, &s)
	b := []byte("raw")
	checkRoundTrip(t, &b)
	xs := []inner{{Name: "a"}, {}}
	checkRoundTrip(t, &xs)
	arr := [4]uint16{1, 2, 3, 4}
	checkRoundTrip(t, &arr)
	p := &arr
	checkRoundTrip(t, &p)
	i := int64(-3)
	checkRoundTrip(t, &i)
	e := struct{}{}
	checkRoundTrip(t, &e)
}

func checkRoundTrip[T any](t *testing.T, v *T) {
	t.Helper()
	c := mustCodec[T](t)
	plain, arena := roundTrip(t, c, v)
	if !reflect.DeepEqual(plain, *v) || !reflect.DeepEqual(arena, *v) {
		t.Errorf("%T: got %v and %v, want %v", *v, plain, arena, *v)
	}
}

func TestCodecFlatBoolsChecked(t *testing.T) {
	type flagged struct {
		N  int32
		On bool
		Ar [2]bool
	}
	type outer struct {
		S string
		F flagged
	}
	c := mustCodec[flagged](t)
	if !c.Flat() {
		t.Fatal("flagged should be flat")
	}
	co := mustCodec[outer](t)
	for _, off := range []uintptr{unsafe.Offsetof(flagged{}.On), unsafe.Offsetof(flagged{}.Ar) + 1} {
		v := flagged{N: 1, On: true}
		enc := c.Append(nil, &v)
		enc[off] = 2
		var got flagged
		if _, err := c.Decode(enc, &got); !errors.Is(err, ErrCorrupt) {
			t.Errorf("flat bool byte 2 at %d: err = %v", off, err)
		}
		o := outer{S: "s", F: v}
		enc = co.Append(nil, &o)
		enc[2+off] = 7 // after the string "s": uvarint 1, 's'
		var ogot outer
		if _, err := co.Decode(enc, &ogot); !errors.Is(err, ErrCorrupt) {
			t.Errorf("nested bool byte 7 at %d: err = %v", off, err)
		}
	}
}

func TestCodecCorrupt(t *testing.T) {
	c := mustCodec[everything](t)
	v := fullEverything()
	enc := c.Append(nil, &v)
	var got everything
	for n := 0; n < len(enc); n++ {
		if _, err := c.Decode(enc[:n], &got); !errors.Is(err, ErrCorrupt) {
			t.Fatalf("prefix of %d of %d bytes: err = %v", n, len(enc), err)
		}
		if _, err := c.DecodeArena(enc[:n], &got, &Arena{}); !errors.Is(err, ErrCorrupt) {
			t.Fatalf("arena, prefix of %d of %d bytes: err = %v", n, len(enc), err)
		}
	}
	type ptrs struct{ P *int32 }
	cp := mustCodec[ptrs](t)
	var pg ptrs
	if _, err := cp.Decode([]byte{2, 0, 0, 0, 0}, &pg); !errors.Is(err, ErrCorrupt) {
		t.Errorf("pointer flag 2: err = %v", err)
	}
	ct := mustCodec[time.Time](t)
	var tg time.Time
	bad := ct.Append(nil, &tg)
	bad[8], bad[9], bad[10], bad[11] = 0xff, 0xff, 0xff, 0xff // nanoseconds >= 1e9
	if _, err := ct.Decode(bad, &tg); !errors.Is(err, ErrCorrupt) {
		t.Errorf("nanoseconds out of range: err = %v", err)
	}
	bad = ct.Append(nil, &tg)
	bad[12] = 9
	if _, err := ct.Decode(bad, &tg); !errors.Is(err, ErrCorrupt) {
		t.Errorf("zone kind 9: err = %v", err)
	}
	overlong := []byte{0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x01}
	cs := mustCodec[string](t)
	var sg string
	if _, err := cs.Decode(overlong, &sg); !errors.Is(err, ErrCorrupt) {
		t.Errorf("overflowing varint: err = %v", err)
	}
	if _, err := cs.Decode([]byte{5, 'a'}, &sg); !errors.Is(err, ErrCorrupt) || !strings.Contains(err.Error(), "memory: decode string at byte 1 of 2") {
		t.Errorf("short string: err = %v", err)
	}
}

// TestCodecNoAbsurdAllocation decodes lengths far beyond the input and checks
// that the decoder refuses them instead of allocating them.
func TestCodecNoAbsurdAllocation(t *testing.T) {
	huge := []byte{0xfe, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x7f} // ~2^55
	cases := map[string]func() error{
		"[]int64":  func() error { var v []int64; _, err := mustCodec[[]int64](t).Decode(huge, &v); return err },
		"[]*int":   func() error { var v []*int; _, err := mustCodec[[]*int](t).Decode(huge, &v); return err },
		"[]string": func() error { var v []string; _, err := mustCodec[[]string](t).Decode(huge, &v); return err },
		"[]byte":   func() error { var v []byte; _, err := mustCodec[[]byte](t).Decode(huge, &v); return err },
		"string":   func() error { var v string; _, err := mustCodec[string](t).Decode(huge, &v); return err },
		"[]node":   func() error { var v []node; _, err := mustCodec[[]node](t).Decode(huge, &v); return err },
		"[][64]int": func() error {
			var v [][64]int
			_, err := mustCodec[[][64]int](t).Decode(append([]byte{65}, make([]byte, 64*8)...), &v)
			return err
		},
	}
	for name, decode := range cases {
		var before, after runtime.MemStats
		runtime.ReadMemStats(&before)
		err := decode()
		runtime.ReadMemStats(&after)
		if !errors.Is(err, ErrCorrupt) {
			t.Errorf("%s: err = %v, want ErrCorrupt", name, err)
		}
		if d := after.TotalAlloc - before.TotalAlloc; d > 1<<20 {
			t.Errorf("%s: allocated %d bytes for a %d-byte input", name, d, len(huge))
		}
	}
	// Zero-size elements cost no input, so their count is bounded separately.
	var empties []struct{}
	enc := mustCodec[[]struct{}](t).Append(nil, &[]struct{}{{}, {}, {}})
	if _, err := mustCodec[[]struct{}](t).Decode(enc, &empties); err != nil || len(empties) != 3 {
		t.Errorf("[]struct{}: %d, %v", len(empties), err)
	}
	if _, err := mustCodec[[]struct{}](t).Decode(huge, &empties); !errors.Is(err, ErrCorrupt) {
		t.Errorf("[]struct{} of 2^55: err = %v", err)
	}
}

func TestCodecConcurrent(t *testing.T) {
	var wg sync.WaitGroup
	errs := make(chan error, 8)
	for g := 0; g < 8; g++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			c, err := NewCodec[everything]() // concurrent first use of the program cache
			if err != nil {
				errs <- err
				return
			}
			a := NewArena(0)
			v := fullEverything()
			v.S.I = g
			var buf []byte
			for i := 0; i < 200; i++ {
				buf = c.Append(buf[:0], &v)
				var got everything
				if _, err := c.DecodeArena(buf, &got, a); err != nil || !reflect.DeepEqual(got, v) {
					errs <- errors.New("concurrent round trip differs")
					return
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
}

// TestCodecThroughRecordBuffer stores values larger than a segment in a
// RecordBuffer under several budgets and reads them back.
func TestCodecThroughRecordBuffer(t *testing.T) {
	type big struct {
		ID   int64
		Body string
		Blob []byte
		At   time.Time
	}
	c := mustCodec[big](t)
	vals := []big{
		{ID: 1, Body: "small"},
		{ID: 2, Body: strings.Repeat("€uro", 25<<10), Blob: bytes.Repeat([]byte{0, 0xff}, 20<<10), At: time.Unix(1e9, 1).UTC()},
		{ID: 3, Body: strings.Repeat("z", 100<<10)},
		{ID: 4},
	}
	for _, opts := range []Options{{}, {SegmentSize: 32 << 10, Budget: 10 * 32 << 10}, {SegmentSize: 4096, Budget: 4 * 4096}} {
		m := MustNewManager(opts)
		res := m.NewReservation("codec-test")
		buf := NewRecordBuffer(res)
		var offs []uint64
		var enc []byte
		for i := range vals {
			enc = c.Append(enc[:0], &vals[i])
			off, err := buf.Append(AppendInt64(nil, vals[i].ID), enc)
			if errors.Is(err, ErrBudgetExceeded) {
				off = buf.AppendForce(AppendInt64(nil, vals[i].ID), enc)
			} else if err != nil {
				t.Fatal(err)
			}
			offs = append(offs, off)
		}
		var scratch []byte
		a := NewArena(0)
		for i, off := range offs {
			var key, val []byte
			key, val, scratch = buf.Get(off, scratch)
			var got big
			n, err := c.DecodeArena(val, &got, a)
			if err != nil || n != len(val) || !reflect.DeepEqual(got, vals[i]) || !bytes.Equal(key, AppendInt64(nil, vals[i].ID)) {
				t.Fatalf("budget %d: record %d: n=%d err=%v, equal=%v", opts.Budget, i, n, err, reflect.DeepEqual(got, vals[i]))
			}
		}
		buf.Free()
		if err := res.Release(); err != nil {
			t.Fatal(err)
		}
		if err := m.Close(); err != nil {
			t.Fatal(err)
		}
	}
}

func TestArena(t *testing.T) {
	a := NewArena(1024)
	if a.String(nil) != "" || a.Bytes(nil) != nil || a.Bytes([]byte{}) == nil || a.Slabs() != 0 {
		t.Fatal("empty inputs took memory or lost nil-ness")
	}
	src := []byte("abcdefghij")
	var strs []string
	for i := 0; i < 300; i++ { // 3000 bytes: three 1 KiB slabs
		strs = append(strs, a.String(src))
	}
	b := a.Bytes(src)
	src[0] = 'X'
	if a.Slabs() != 3 || cap(b) != len(b) || string(b) != "abcdefghij" {
		t.Fatalf("slabs %d, cap %d len %d, %q", a.Slabs(), cap(b), len(b), b)
	}
	big := a.Bytes(make([]byte, 600)) // over a quarter slab: its own block
	if a.Slabs() != 4 || len(big) != 600 {
		t.Fatalf("large request: slabs %d", a.Slabs())
	}
	runtime.GC() // the slabs live as long as their strings
	for i, s := range strs {
		if s != "abcdefghij" {
			t.Fatalf("string %d changed to %q", i, s)
		}
	}
	// Pointer-free elements carved after odd-sized strings are aligned.
	type rec struct {
		S  string
		Is []int64
		P  *float64
	}
	c := mustCodec[rec](t)
	f := 2.5
	v := rec{S: "odd", Is: []int64{1, -2, 3}, P: &f}
	enc := c.Append(nil, &v)
	for i := 0; i < 50; i++ {
		var got rec
		if _, err := c.DecodeArena(enc, &got, a); err != nil || !reflect.DeepEqual(got, v) {
			t.Fatalf("decode %d: %v %+v", i, err, got)
		}
		if uintptr(unsafe.Pointer(&got.Is[0]))%8 != 0 || uintptr(unsafe.Pointer(got.P))%8 != 0 {
			t.Fatalf("misaligned element from the arena")
		}
		if i%10 == 0 {
			runtime.GC()
		}
	}
}

// TestCodecZeroSize: a type that takes no memory encodes to no bytes and
// decodes from none, whatever follows, without allocating.
func TestCodecZeroSize(t *testing.T) {
	c, err := NewCodec[struct{}]()
	if err != nil {
		t.Fatal(err)
	}
	var v struct{}
	if b := c.Append(nil, &v); len(b) != 0 {
		t.Fatalf("struct{} encoded to %d bytes, want 0", len(b))
	}
	src := []byte{1, 2, 3}
	if n, err := c.Decode(src, &v); n != 0 || err != nil {
		t.Fatalf("Decode = %d, %v; want 0, nil", n, err)
	}
	if n, err := c.Decode(nil, &v); n != 0 || err != nil {
		t.Fatalf("Decode of nothing = %d, %v; want 0, nil", n, err)
	}
	if a := testing.AllocsPerRun(100, func() { _, _ = c.Decode(src, &v) }); a != 0 {
		t.Fatalf("%.0f allocations per Decode, want 0", a)
	}
	arr, err := NewCodec[[0]int64]()
	if err != nil {
		t.Fatal(err)
	}
	var z [0]int64
	if b := arr.Append(nil, &z); len(b) != 0 {
		t.Fatalf("[0]int64 encoded to %d bytes, want 0", len(b))
	}
	if n, err := arr.Decode(src, &z); n != 0 || err != nil {
		t.Fatalf("[0]int64 Decode = %d, %v; want 0, nil", n, err)
	}
}
