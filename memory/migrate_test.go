package memory

import (
	"errors"
	"math/rand/v2"
	"reflect"
	"strings"
	"testing"
	"time"
)

// The old and new versions of a state type: fields reordered, one removed
// (Tags), some added (Added, Inner.Extra), named types changed to their
// underlying kinds, an unexported field kept.
type innerV1 struct {
	Flag bool
	N    int64
}

type accV1 struct {
	Count  int64
	Name   string
	Tags   []string
	Inner  innerV1
	Ptr    *innerV1
	List   []innerV1
	Arr    [2]innerV1
	At     time.Time
	Temp   float64
	hidden int32
	Raw    []byte
}

type celsius float64

type innerV2 struct {
	Extra string
	N     int64
	Flag  bool
}

type accV2 struct {
	Name   string
	Added  float64
	Count  int64
	Inner  innerV2
	Ptr    *innerV2
	List   []innerV2
	Arr    [2]innerV2
	At     time.Time
	Temp   celsius
	hidden int32
	Raw    []byte
}

// upgrade is the oracle: the field-by-name rule written out by hand.
func upgrade(a accV1) accV2 {
	in := func(i innerV1) innerV2 { return innerV2{N: i.N, Flag: i.Flag} }
	b := accV2{Name: a.Name, Count: a.Count, Inner: in(a.Inner), At: a.At, Temp: celsius(a.Temp), hidden: a.hidden, Raw: a.Raw}
	if a.Ptr != nil {
		p := in(*a.Ptr)
		b.Ptr = &p
	}
	if a.List != nil {
		b.List = make([]innerV2, len(a.List))
		for i, x := range a.List {
			b.List[i] = in(x)
		}
	}
	b.Arr = [2]innerV2{in(a.Arr[0]), in(a.Arr[1])}
	return b
}

func randomAcc(r *rand.Rand) accV1 {
	a := accV1{Count: r.Int64(), Name: strings.Repeat("x", r.IntN(5)), Inner: innerV1{Flag: r.IntN(2) == 1, N: r.Int64()},
		Temp: r.NormFloat64(), hidden: r.Int32(), At: time.UnixMilli(r.Int64N(1 << 40)).UTC()}
	if r.IntN(2) == 0 {
		a.Ptr = &innerV1{N: r.Int64()}
	}
	for range r.IntN(3) {
		a.Tags = append(a.Tags, "t")
		a.List = append(a.List, innerV1{Flag: true, N: r.Int64()})
	}
	if r.IntN(2) == 0 {
		a.Raw = []byte{byte(r.IntN(256))}
	}
	a.Arr[1].N = r.Int64()
	return a
}

func TestMigrationByFieldName(t *testing.T) {
	old, err := SchemaOf[accV1]()
	if err != nil {
		t.Fatal(err)
	}
	m, err := NewMigration[accV2](old)
	if err != nil {
		t.Fatal(err)
	}
	if m == nil {
		t.Fatal("a changed schema gave no migration")
	}
	c, err := NewCodec[accV1]()
	if err != nil {
		t.Fatal(err)
	}
	r := rand.New(rand.NewPCG(1, 2))
	var buf []byte
	var vals []accV1
	for range 200 {
		a := randomAcc(r)
		vals = append(vals, a)
		buf = c.Append(buf, &a)
	}
	src := buf
	for i, a := range vals {
		got := accV2{Name: "stale", Added: 9} // Decode overwrites all of it
		n, err := m.Decode(src, &got)
		if err != nil {
			t.Fatalf("value %d: %v", i, err)
		}
		src = src[n:]
		if want := upgrade(a); !reflect.DeepEqual(got, want) {
			t.Fatalf("value %d:\n got %+v\nwant %+v", i, got, want)
		}
	}
	if len(src) != 0 {
		t.Fatalf("%d bytes left", len(src))
	}
	if _, err := m.Decode(buf[:len(buf)/3], new(accV2)); err != nil {
		// the cut may fall on a value boundary; only errors must be ErrCorrupt
		if !errors.Is(err, ErrCorrupt) {
			t.Fatalf("truncated input: %v", err)
		}
	}
}

func TestMigrationSameSchemaIsNil(t *testing.T) {
	type named struct {
		A celsius
		B []time.Time
	}
	type plain struct {
		A float64
		B []time.Time
	}
	s, err := SchemaOf[named]()
	if err != nil {
		t.Fatal(err)
	}
	m, err := NewMigration[plain](s)
	if err != nil || m != nil {
		t.Fatalf("a named type and its underlying type: migration %v, %v; want none", m, err)
	}
	// Recursive types migrate only when unchanged.
	type tree struct {
		V    int
		Kids []tree
	}
	s, _ = SchemaOf[tree]()
	if m, err := NewMigration[tree](s); m != nil || err != nil {
		t.Fatalf("unchanged recursive type: %v, %v", m, err)
	}
	type tree2 struct {
		V    int
		W    int
		Kids []tree2
	}
	if _, err := NewMigration[tree2](s); !errors.Is(err, ErrIncompatible) {
		t.Fatalf("changed recursive type: %v, want ErrIncompatible", err)
	}
}

func TestMigrationIncompatible(t *testing.T) {
	type v1 struct {
		A struct{ Count int64 }
		L [3]int
	}
	type kind struct {
		A struct{ Count string }
		L [3]int
	}
	type length struct {
		A struct{ Count int64 }
		L [4]int
	}
	type toTime struct {
		A struct{ Count time.Time }
		L [3]int
	}
	s, _ := SchemaOf[v1]()
	for _, tc := range []struct {
		name string
		new  func() error
		want string
	}{
		{"kind", func() error { _, err := NewMigration[kind](s); return err }, "field A.Count: int64 in the snapshot, string now"},
		{"array length", func() error { _, err := NewMigration[length](s); return err }, "field L: [3]int in the snapshot, [4]int now"},
		{"time", func() error { _, err := NewMigration[toTime](s); return err }, "field A.Count: int64 in the snapshot, time.Time now"},
		{"top level", func() error { _, err := NewMigration[int64](s); return err }, "the value: struct {"},
	} {
		err := tc.new()
		if !errors.Is(err, ErrIncompatible) || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: %v, want ErrIncompatible saying %q", tc.name, err, tc.want)
		}
	}
}

// TestMigrationLayout covers padding: bools before wider fields and a
// trailing zero-size field, whose layout the rebuilt type must repeat.
func TestMigrationLayout(t *testing.T) {
	type v1 struct {
		B   bool
		N   int64
		S   string
		B2  bool
		End struct{}
	}
	type v2 struct {
		N   int64
		B2  bool
		New int8
	}
	s, _ := SchemaOf[v1]()
	m, err := NewMigration[v2](s)
	if err != nil {
		t.Fatal(err)
	}
	c, _ := NewCodec[v1]()
	in := v1{B: true, N: -7, S: "s", B2: true}
	var out v2
	if _, err := m.Decode(c.Append(nil, &in), &out); err != nil {
		t.Fatal(err)
	}
	if want := (v2{N: -7, B2: true}); out != want {
		t.Fatalf("got %+v, want %+v", out, want)
	}
}

func TestParseSchemaText(t *testing.T) {
	s, err := SchemaOf[accV1]()
	if err != nil {
		t.Fatal(err)
	}
	got, err := ParseSchema(s)
	if err != nil {
		t.Fatal(err)
	}
	want := "struct { Count int64; Name string; Tags []string; Inner struct { Flag bool; N int64 }; Ptr *struct { Flag bool; N int64 }; " +
		"List []struct { Flag bool; N int64 }; Arr [2]struct { Flag bool; N int64 }; At time.Time; Temp float64; hidden int32; Raw []uint8 }"
	if got != want {
		t.Fatalf("got  %s\nwant %s", got, want)
	}
	for cut := 0; cut < len(s); cut++ {
		if _, err := ParseSchema(s[:cut]); !errors.Is(err, ErrSchema) {
			t.Fatalf("schema cut at %d: %v, want ErrSchema", cut, err)
		}
	}
}

// TestParseSchemaNameBeyondInput: a field name's length that its own
// varint puts past the end is ErrSchema, not a panic.
func TestParseSchemaNameBeyondInput(t *testing.T) {
	if _, err := ParseSchema([]byte{byte(reflect.Struct), 1, 2, 'A'}); !errors.Is(err, ErrSchema) {
		t.Fatalf("%v, want ErrSchema", err)
	}
}

func FuzzParseSchema(f *testing.F) {
	for _, s := range [][]byte{mustSchema[accV1](), mustSchema[accV2](), mustSchema[[]map0](), {byte(reflect.Struct), 1, 1, 'A', schemaRef, 0}} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		text, err := ParseSchema(b)
		if err != nil {
			if !errors.Is(err, ErrSchema) {
				t.Fatalf("error not ErrSchema: %v", err)
			}
			return
		}
		if text == "" {
			t.Fatal("a parsed schema has no text")
		}
		// A schema that parses either migrates to accV2 or says why not.
		m, err := NewMigration[accV2](b)
		if err != nil {
			return
		}
		if m != nil {
			var v accV2
			m.Decode(b, &v) // any bytes: an error, never a panic
		}
	})
}

type map0 struct {
	K string
	V [0]int
}

func mustSchema[T any]() []byte {
	s, err := SchemaOf[T]()
	if err != nil {
		panic(err)
	}
	return s
}

func TestMigrationRefusesHugeTypes(t *testing.T) {
	// [2^31][2^31]int64, written by hand: no real type is that large.
	b := []byte{byte(reflect.Array), 0x80, 0x80, 0x80, 0x80, 0x08, byte(reflect.Array), 0x80, 0x80, 0x80, 0x80, 0x08, byte(reflect.Int64)}
	if _, err := ParseSchema(b); err != nil {
		t.Fatal(err)
	}
	if _, err := NewMigration[accV2](b); !errors.Is(err, ErrSchema) {
		t.Fatalf("got %v, want ErrSchema", err)
	}
}
