package memory

import (
	"bytes"
	"cmp"
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
	"time"
)

type keyShip struct {
	Date time.Time
	Mode string
}

type keyRegion struct{ Region string }

type keyRec struct {
	B    bool
	I8   int8
	I16  int16
	I32  int32
	I64  int64
	I    int
	U8   uint8
	U16  uint16
	U32  uint32
	U64  uint64
	U    uint
	F32  float32
	F64  float64
	S    string
	Bs   []byte
	Ship keyShip
	Arr  [2]int16
	SArr [2]string
	MI   myInt
	MT   myTime
	name string // unexported
	keyRegion
}

// The oracle: comparisons written from the documented semantics, independent of
// key.go and keyenc.go.

func sign(c int) int {
	switch {
	case c < 0:
		return -1
	case c > 0:
		return 1
	}
	return 0
}

func oracleInt(a, b int64) int {
	if a < b {
		return -1
	}
	if a > b {
		return 1
	}
	return 0
}

func oracleUint(a, b uint64) int {
	if a < b {
		return -1
	}
	if a > b {
		return 1
	}
	return 0
}

// oracleFloat: NaN is greater than everything else and equal to NaN; -0.0 == 0.0.
func oracleFloat(a, b float64) int {
	an, bn := math.IsNaN(a), math.IsNaN(b)
	switch {
	case an && bn:
		return 0
	case an:
		return 1
	case bn:
		return -1
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

// oracleBytes compares bytewise, byte by byte.
func oracleBytes(a, b []byte) int {
	for i := 0; i < len(a) && i < len(b); i++ {
		if a[i] != b[i] {
			return oracleUint(uint64(a[i]), uint64(b[i]))
		}
	}
	return oracleInt(int64(len(a)), int64(len(b)))
}

func oracleBool(a, b bool) int {
	switch {
	case a == b:
		return 0
	case !a:
		return -1
	}
	return 1
}

func oracleTime(a, b time.Time) int {
	switch {
	case a.Before(b):
		return -1
	case a.After(b):
		return 1
	}
	return 0
}

// oracleField compares one field of keyRec by path.
func oracleField(path string, a, b *keyRec) int {
	switch path {
	case "B":
		return oracleBool(a.B, b.B)
	case "I8":
		return oracleInt(int64(a.I8), int64(b.I8))
	case "I16":
		return oracleInt(int64(a.I16), int64(b.I16))
	case "I32":
		return oracleInt(int64(a.I32), int64(b.I32))
	case "I64":
		return oracleInt(a.I64, b.I64)
	case "I":
		return oracleInt(int64(a.I), int64(b.I))
	case "U8":
		return oracleUint(uint64(a.U8), uint64(b.U8))
	case "U16":
		return oracleUint(uint64(a.U16), uint64(b.U16))
	case "U32":
		return oracleUint(uint64(a.U32), uint64(b.U32))
	case "U64":
		return oracleUint(a.U64, b.U64)
	case "U":
		return oracleUint(uint64(a.U), uint64(b.U))
	case "F32":
		return oracleFloat(float64(a.F32), float64(b.F32))
	case "F64":
		return oracleFloat(a.F64, b.F64)
	case "S":
		return oracleBytes([]byte(a.S), []byte(b.S))
	case "Bs":
		return oracleBytes(a.Bs, b.Bs)
	case "Ship.Date":
		return oracleTime(a.Ship.Date, b.Ship.Date)
	case "Ship.Mode":
		return oracleBytes([]byte(a.Ship.Mode), []byte(b.Ship.Mode))
	case "Arr":
		if c := oracleInt(int64(a.Arr[0]), int64(b.Arr[0])); c != 0 {
			return c
		}
		return oracleInt(int64(a.Arr[1]), int64(b.Arr[1]))
	case "SArr":
		if c := oracleBytes([]byte(a.SArr[0]), []byte(b.SArr[0])); c != 0 {
			return c
		}
		return oracleBytes([]byte(a.SArr[1]), []byte(b.SArr[1]))
	case "MI":
		return oracleInt(int64(a.MI), int64(b.MI))
	case "MT":
		return oracleTime(time.Time(a.MT), time.Time(b.MT))
	case "name":
		return oracleBytes([]byte(a.name), []byte(b.name))
	case "Region":
		return oracleBytes([]byte(a.Region), []byte(b.Region))
	}
	panic("no oracle for " + path)
}

type oraclePart struct {
	path string
	o    Order
}

func oracleKey(parts []oraclePart, a, b *keyRec) int {
	for _, p := range parts {
		c := oracleField(p.path, a, b)
		if p.o == Descending {
			c = -c
		}
		if c != 0 {
			return c
		}
	}
	return 0
}

var keyPaths = []string{"B", "I8", "I16", "I32", "I64", "I", "U8", "U16", "U32", "U64", "U", "F32", "F64",
	"S", "Bs", "Ship.Date", "Ship.Mode", "Arr", "SArr", "MI", "MT", "name", "Region"}

var (
	keyStrings = []string{"", "\x00", "\x00\x00", "\x00\x01", "\x01", "\xff", "\xff\x00", "a", "a\x00", "a\x00b", "a\xff",
		"ab", "b", "é", "日本", "日本語", "\U0001F642", "zz\x00\xff", strings.Repeat("k", 9)}
	keyFloats = []float64{math.NaN(), math.Float64frombits(0xfff8000000000001), math.Inf(1), math.Inf(-1), 0,
		math.Copysign(0, -1), 1, -1, 0.5, -0.5, math.MaxFloat64, -math.MaxFloat64, math.SmallestNonzeroFloat64,
		-math.SmallestNonzeroFloat64, 1e-300, 3.14159}
	keyInts = []int64{0, 1, -1, 2, -2, 127, -128, 128, -129, 1 << 15, -1 << 15, 1<<31 - 1, -1 << 31, math.MaxInt64, math.MinInt64}
)

// keyGen draws keyRecs from small domains with special values, so that pairs tie
// often (which exercises later key parts), some skewed by a Zipf distribution.
type keyGen struct {
	r    *rand.Rand
	zipf *rand.Zipf
}

func newKeyGen(seed uint64) *keyGen {
	r := rand.New(rand.NewPCG(seed, 99))
	return &keyGen{r: r, zipf: rand.NewZipf(r, 1.2, 1, uint64(len(keyStrings)-1))}
}

func (g *keyGen) int() int64 {
	if g.r.IntN(3) == 0 {
		return g.r.Int64() >> g.r.IntN(64)
	}
	return keyInts[g.r.IntN(len(keyInts))]
}

func (g *keyGen) float() float64 {
	if g.r.IntN(4) == 0 {
		return g.r.NormFloat64() * 1e3
	}
	return keyFloats[g.r.IntN(len(keyFloats))]
}

func (g *keyGen) str() string {
	switch g.r.IntN(4) {
	case 0:
		return keyStrings[g.zipf.Uint64()]
	case 1:
		return keyStrings[g.r.IntN(len(keyStrings))] + keyStrings[g.r.IntN(len(keyStrings))]
	}
	return keyStrings[g.r.IntN(len(keyStrings))]
}

func (g *keyGen) time() time.Time {
	secs := []int64{-62135596800, -1, 0, 1, 1e9, 1 << 40}
	locs := []*time.Location{time.UTC, time.Local, time.FixedZone("X", -7200)}
	return time.Unix(secs[g.r.IntN(len(secs))], int64(g.r.IntN(3))*499999999).In(locs[g.r.IntN(len(locs))])
}

func (g *keyGen) rec() keyRec {
	var bs []byte
	if g.r.IntN(5) > 0 {
		bs = []byte(g.str())
	}
	return keyRec{
		B: g.r.IntN(2) == 0, I8: int8(g.int()), I16: int16(g.int()), I32: int32(g.int()), I64: g.int(), I: int(g.int()),
		U8: uint8(g.int()), U16: uint16(g.int()), U32: uint32(g.int()), U64: uint64(g.int()), U: uint(g.int()),
		F32: float32(g.float()), F64: g.float(), S: g.str(), Bs: bs,
		Ship: keyShip{Date: g.time(), Mode: g.str()}, Arr: [2]int16{int16(g.int() % 3), int16(g.int())},
		SArr: [2]string{g.str(), g.str()}, MI: myInt(g.int()), MT: myTime(g.time()), name: g.str(),
		keyRegion: keyRegion{Region: g.str()},
	}
}

func mustKey(t testing.TB, parts ...KeyPart[keyRec]) *Key[keyRec] {
	t.Helper()
	k, err := NewKey(parts...)
	if err != nil {
		t.Fatal(err)
	}
	return k
}

// checkKeyOrder compares, for n random pairs, the encoded order with the oracle,
// Key.Compare with the oracle, Prefix order where prefixes differ, and Hash.
func checkKeyOrder(t *testing.T, k *Key[keyRec], parts []oraclePart, g *keyGen, n int) {
	t.Helper()
	var ea, eb []byte
	for i := 0; i < n; i++ {
		a, b := g.rec(), g.rec()
		if i%5 == 0 {
			b = a // equal keys too
		}
		ea, eb = k.Append(ea[:0], &a), k.Append(eb[:0], &b)
		want := oracleKey(parts, &a, &b)
		if got := sign(bytes.Compare(ea, eb)); got != want {
			t.Fatalf("key %s: bytes.Compare = %d, oracle %d\na=%+v\nb=%+v\nea=%x\neb=%x", k, got, want, a, b, ea, eb)
		}
		if got := sign(k.Compare(&a, &b)); got != want {
			t.Fatalf("key %s: Key.Compare = %d, oracle %d\na=%+v\nb=%+v", k, got, want, a, b)
		}
		if pa, pb := Prefix(ea), Prefix(eb); pa != pb && sign(oracleUint(pa, pb)) != want {
			t.Fatalf("key %s: prefixes %x %x disagree with oracle %d", k, pa, pb, want)
		}
		if h := k.Hash(&a, uint64(i)); h != Hash(ea, uint64(i)) {
			t.Fatalf("key %s: Hash %x != Hash(Append) %x", k, h, Hash(ea, uint64(i)))
		}
	}
}

func TestKeySingleFields(t *testing.T) {
	g := newKeyGen(1)
	for _, path := range keyPaths {
		for _, o := range []Order{Ascending, Descending} {
			k := mustKey(t, Field[keyRec](path, o))
			checkKeyOrder(t, k, []oraclePart{{path, o}}, g, 600)
		}
	}
}

func TestKeyComposite(t *testing.T) {
	g := newKeyGen(2)
	combos := [][]oraclePart{
		{{"B", Ascending}, {"S", Ascending}, {"I64", Ascending}},
		{{"Arr", Descending}, {"F64", Ascending}, {"Ship.Mode", Descending}},
		{{"SArr", Ascending}, {"Bs", Descending}, {"I8", Descending}},
		{{"Ship.Date", Descending}, {"Region", Ascending}, {"U16", Ascending}},
		{{"name", Descending}, {"F32", Descending}, {"MI", Ascending}, {"U64", Descending}},
		{{"S", Descending}, {"SArr", Descending}, {"Bs", Ascending}, {"Ship.Mode", Ascending}},
	}
	for _, combo := range combos {
		parts := make([]KeyPart[keyRec], len(combo))
		for i, p := range combo {
			parts[i] = Field[keyRec](p.path, p.o)
		}
		checkKeyOrder(t, mustKey(t, parts...), combo, g, 3000)
	}
}

// TestKeySortAgreesWithOracle sorts records by their encoded keys and checks the
// result is sorted by the oracle, with equal keys exactly where the oracle ties.
func TestKeySortAgreesWithOracle(t *testing.T) {
	g := newKeyGen(3)
	combo := []oraclePart{{"Ship.Mode", Ascending}, {"F64", Descending}, {"I16", Ascending}}
	k := mustKey(t, Field[keyRec]("Ship.Mode", Ascending), Field[keyRec]("F64", Descending), Field[keyRec]("I16", Ascending))
	type entry struct {
		key []byte
		rec keyRec
	}
	entries := make([]entry, 2000)
	for i := range entries {
		entries[i].rec = g.rec()
		entries[i].key = k.Append(nil, &entries[i].rec)
	}
	slices.SortFunc(entries, func(a, b entry) int { return bytes.Compare(a.key, b.key) })
	for i := 1; i < len(entries); i++ {
		a, b := &entries[i-1], &entries[i]
		o := oracleKey(combo, &a.rec, &b.rec)
		if o > 0 || (o == 0) != bytes.Equal(a.key, b.key) {
			t.Fatalf("entries %d and %d: oracle %d, keys %x %x", i-1, i, o, a.key, b.key)
		}
	}
}

func TestKeyFunc(t *testing.T) {
	g := newKeyGen(4)
	type named float32
	k := mustKey(t,
		Func(func(r *keyRec) string { return r.Ship.Mode }, Descending),
		Func(func(r *keyRec) named { return named(r.F32) }, Ascending),
		Func(func(r *keyRec) int8 { return r.I8 }, Descending),
		Func(func(r *keyRec) uint32 { return r.U32 }, Ascending),
		Func(func(r *keyRec) uintptr { return uintptr(r.U16) }, Ascending),
		Func(func(r *keyRec) float64 { return r.F64 }, Ascending),
	)
	checkKeyOrder(t, k, []oraclePart{{"Ship.Mode", Descending}, {"F32", Ascending}, {"I8", Descending},
		{"U32", Ascending}, {"U16", Ascending}, {"F64", Ascending}}, g, 3000)
	// A Func part encodes exactly like the Field part of the same value.
	kf := mustKey(t, Field[keyRec]("Ship.Mode", Descending), Field[keyRec]("F32", Ascending), Field[keyRec]("I8", Descending),
		Field[keyRec]("U32", Ascending), Field[keyRec]("U16", Ascending))
	kfn := mustKey(t, Func(func(r *keyRec) string { return r.Ship.Mode }, Descending),
		Func(func(r *keyRec) float32 { return r.F32 }, Ascending), Func(func(r *keyRec) int8 { return r.I8 }, Descending),
		Func(func(r *keyRec) uint32 { return r.U32 }, Ascending), Func(func(r *keyRec) uint16 { return r.U16 }, Ascending))
	for i := 0; i < 500; i++ {
		r := g.rec()
		if a, b := kf.Append(nil, &r), kfn.Append(nil, &r); !bytes.Equal(a, b) {
			t.Fatalf("Field %x != Func %x for %+v", a, b, r)
		}
	}
}

func TestKeyEncodingsMatchKeyenc(t *testing.T) {
	r := keyRec{I32: -5, F64: math.Copysign(0, -1), S: "a\x00", Arr: [2]int16{1, -1}, Ship: keyShip{Date: time.Unix(5, 6)}}
	k := mustKey(t, Field[keyRec]("I32", Ascending), Field[keyRec]("F64", Descending), Field[keyRec]("S", Ascending),
		Field[keyRec]("Arr", Ascending), Field[keyRec]("Ship.Date", Ascending))
	want := AppendInt32(nil, -5)
	desc := AppendFloat64(nil, 0)
	Invert(desc)
	want = append(want, desc...)
	want = AppendString(want, "a\x00")
	want = AppendInt16(AppendInt16(want, 1), -1)
	want = AppendTime(want, time.Unix(5, 6))
	if got := k.Append([]byte("p"), &r); !bytes.Equal(got[1:], want) || got[0] != 'p' {
		t.Errorf("Append = %x, want p+%x", got, want)
	}
	if got := k.String(); got != "I32 asc, F64 desc, S asc, Arr asc, Ship.Date asc" {
		t.Errorf("String = %q", got)
	}
	empty := mustKey(t)
	if got := empty.Append(nil, &r); len(got) != 0 || empty.Compare(&r, &keyRec{}) != 0 {
		t.Errorf("empty key: %x", got)
	}
}

func TestKeyErrors(t *testing.T) {
	type withPtr struct {
		P *keyShip
		*keyRegion
		M  map[int]int
		C  complex128
		Is []int
		Ar [2]any
	}
	cases := []struct {
		err string
		new func() error
	}{
		{`memory: key for memory.keyRec: field "Nope": memory.keyRec has no field Nope`,
			func() error { _, err := NewKey(Field[keyRec]("Nope", Ascending)); return err }},
		{`memory: key for memory.keyRec: field "Ship.Nope": memory.keyShip has no field Nope`,
			func() error { _, err := NewKey(Field[keyRec]("Ship.Nope", Ascending)); return err }},
		{`memory: key for memory.keyRec: field "Ship.Date.Year": time.Time has no fields`,
			func() error { _, err := NewKey(Field[keyRec]("Ship.Date.Year", Ascending)); return err }},
		{`memory: key for memory.keyRec: field "": memory.keyRec has no field `,
			func() error { _, err := NewKey(Field[keyRec]("", Ascending)); return err }},
		{`memory: key for memory.withPtr: field "P.Mode": *memory.keyShip has no fields`,
			func() error { _, err := NewKey(Field[withPtr]("P.Mode", Ascending)); return err }},
		{`memory: key for memory.withPtr: field "Region": Region is promoted through the pointer *memory.keyRegion`,
			func() error { _, err := NewKey(Field[withPtr]("Region", Ascending)); return err }},
		{`memory: key for memory.withPtr: field "M": map[int]int cannot be a key`,
			func() error { _, err := NewKey(Field[withPtr]("M", Ascending)); return err }},
		{`memory: key for memory.withPtr: field "C": complex128 cannot be a key`,
			func() error { _, err := NewKey(Field[withPtr]("C", Ascending)); return err }},
		{`memory: key for memory.withPtr: field "Is": []int cannot be a key`,
			func() error { _, err := NewKey(Field[withPtr]("Is", Ascending)); return err }},
		{`memory: key for memory.withPtr: field "Ar": interface {} cannot be a key`,
			func() error { _, err := NewKey(Field[withPtr]("Ar", Ascending)); return err }},
		{`memory: key for memory.keyRec: part 1: invalid order 7`,
			func() error { _, err := NewKey(Field[keyRec]("S", Ascending), Field[keyRec]("S", 7)); return err }},
		{`memory: key for memory.keyRec: part 0: nil key function`,
			func() error { _, err := NewKey(Func[keyRec, int](nil, Ascending)); return err }},
		{`memory: key for int: field "X": int has no fields`,
			func() error { _, err := NewKey(Field[int]("X", Ascending)); return err }},
	}
	for _, tc := range cases {
		if err := tc.new(); err == nil || err.Error() != tc.err {
			t.Errorf("got error %v\nwant       %s", err, tc.err)
		}
	}
}

func TestKeyAllocs(t *testing.T) {
	g := newKeyGen(5)
	recs := make([]keyRec, 64)
	for i := range recs {
		recs[i] = g.rec()
	}
	k := mustKey(t, Field[keyRec]("S", Ascending), Field[keyRec]("Ship.Date", Descending), Field[keyRec]("Arr", Ascending),
		Field[keyRec]("F64", Descending), Field[keyRec]("Bs", Ascending),
		Func(func(r *keyRec) int64 { return r.I64 }, Descending))
	buf := make([]byte, 0, 1<<14)
	if a := testing.AllocsPerRun(100, func() {
		buf = buf[:0]
		for i := range recs {
			buf = k.Append(buf, &recs[i])
		}
	}); a != 0 {
		t.Errorf("Key.Append: %v allocs per 64 records, want 0", a)
	}
	var sink uint64
	if a := testing.AllocsPerRun(100, func() {
		for i := range recs {
			sink += k.Hash(&recs[i], 1)
		}
	}); a != 0 {
		t.Errorf("Key.Hash: %v allocs per 64 records, want 0", a)
	}
	if a := testing.AllocsPerRun(100, func() {
		for i := 1; i < len(recs); i++ {
			sink += uint64(k.Compare(&recs[i-1], &recs[i]))
		}
	}); a != 0 {
		t.Errorf("Key.Compare: %v allocs per 64 records, want 0", a)
	}
	_ = sink
}

func BenchmarkKeyAppend(b *testing.B) {
	g := newKeyGen(6)
	recs := make([]keyRec, 1024)
	for i := range recs {
		recs[i] = g.rec()
	}
	k := mustKey(b, Field[keyRec]("Ship.Mode", Ascending), Field[keyRec]("I64", Descending), Field[keyRec]("Ship.Date", Ascending))
	buf := make([]byte, 0, 256)
	b.ReportAllocs()
	for i := 0; b.Loop(); i++ {
		buf = k.Append(buf[:0], &recs[i%len(recs)])
	}
}

func TestValueKey(t *testing.T) {
	type inner struct {
		B string
		C float64
	}
	type composite struct {
		A  int32
		In inner
		D  bool
	}
	kc, err := ValueKey[composite]()
	if err != nil {
		t.Fatal(err)
	}
	oracle := func(x, y composite) int {
		if c := cmp.Compare(x.A, y.A); c != 0 {
			return c
		}
		if c := strings.Compare(x.In.B, y.In.B); c != 0 {
			return c
		}
		if c := cmp.Compare(x.In.C, y.In.C); c != 0 {
			return c
		}
		if x.D == y.D {
			return 0
		}
		if !x.D {
			return -1
		}
		return 1
	}
	vals := []composite{
		{1, inner{"a", 1}, false}, {1, inner{"a", 1}, true}, {1, inner{"", 2}, false}, {-5, inner{"zz", -1}, true},
		{1, inner{"a\x00", 0}, false}, {1, inner{"a", -0.5}, true}, {2, inner{"", 0}, false},
	}
	for _, x := range vals {
		for _, y := range vals {
			got := bytes.Compare(kc.Append(nil, &x), kc.Append(nil, &y))
			if want := oracle(x, y); got != want {
				t.Errorf("%+v vs %+v: encoded order %d, want %d", x, y, got, want)
			}
		}
	}
	ks, err := ValueKey[string]()
	if err != nil {
		t.Fatal(err)
	}
	a, b := "abc", "abd"
	if bytes.Compare(ks.Append(nil, &a), ks.Append(nil, &b)) >= 0 {
		t.Error("string value key out of order")
	}
	ki, err := ValueKey[int64]()
	if err != nil {
		t.Fatal(err)
	}
	x, y := int64(-3), int64(2)
	if bytes.Compare(ki.Append(nil, &x), ki.Append(nil, &y)) >= 0 {
		t.Error("int64 value key out of order")
	}
	if _, err := ValueKey[map[string]int](); err == nil {
		t.Error("map value key: no error")
	}
	if _, err := ValueKey[struct{}](); err == nil {
		t.Error("empty struct value key: no error")
	}
}
