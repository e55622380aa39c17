package memory

import (
	"testing"
	"time"
	"unsafe"
)

type ownRec struct {
	Name  string
	N     int64
	Blob  []byte
	Empty []byte
	When  time.Time
	Tag   string
}

func TestCodecShallow(t *testing.T) {
	for _, tc := range []struct {
		name string
		got  bool
		want bool
	}{
		{"flat", mustCodec[struct{ A, B int64 }](t).Shallow(), true},
		{"strings bytes time", mustCodec[ownRec](t).Shallow(), true},
		{"slice of ints", mustCodec[struct{ A []int64 }](t).Shallow(), false},
		{"pointer", mustCodec[struct{ P *int }](t).Shallow(), false},
		{"nested struct of strings", mustCodec[struct{ In struct{ S string } }](t).Shallow(), true},
	} {
		if tc.got != tc.want {
			t.Errorf("%s: Shallow() = %v, want %v", tc.name, tc.got, tc.want)
		}
	}
}

func TestCodecOwn(t *testing.T) {
	c := mustCodec[ownRec](t)
	batch := []byte("alicebobblobxy")
	src := ownRec{
		Name:  unsafe.String(&batch[0], 5),
		Blob:  batch[8:12],
		Empty: batch[12:12],
		N:     7,
		When:  time.Date(2026, 12, 1, 0, 0, 0, 0, time.UTC),
		Tag:   unsafe.String(&batch[5], 3),
	}
	a := NewArena(0)
	v := src
	if n := c.Own(&v, nil, a); n != 5+3+4 {
		t.Fatalf("Own copied %d bytes, want 12", n)
	}
	if v.Name != "alice" || v.Tag != "bob" || string(v.Blob) != "blob" || v.N != 7 || !v.When.Equal(src.When) {
		t.Fatalf("Own changed the value: %+v", v)
	}
	if v.Empty == nil || len(v.Empty) != 0 {
		t.Fatalf("empty slice became %v", v.Empty)
	}
	inBatch := func(p *byte) bool {
		u := uintptr(unsafe.Pointer(p))
		lo := uintptr(unsafe.Pointer(&batch[0]))
		return u >= lo && u < lo+uintptr(len(batch))
	}
	if inBatch(unsafe.StringData(v.Name)) || inBatch(unsafe.StringData(v.Tag)) || inBatch(&v.Blob[0]) {
		t.Fatal("Own left a field pointing into the batch")
	}
	// Overwrite the batch: the owned copy must not change.
	copy(batch, "XXXXXXXXXXXXXX")
	if v.Name != "alice" || v.Tag != "bob" || string(v.Blob) != "blob" {
		t.Fatalf("owned value changed with the batch: %+v", v)
	}

	// A value that keeps prev's fields copies nothing; a changed field is copied.
	next := v
	next.N = 8
	if n := c.Own(&next, &v, a); n != 0 {
		t.Fatalf("Own of unchanged fields copied %d bytes", n)
	}
	other := []byte("carol")
	next.Name = unsafe.String(&other[0], len(other))
	if n := c.Own(&next, &v, a); n != 5 {
		t.Fatalf("Own of one changed field copied %d bytes, want 5", n)
	}
	if unsafe.StringData(next.Name) == &other[0] || next.Name != "carol" || unsafe.StringData(next.Tag) != unsafe.StringData(v.Tag) {
		t.Fatalf("Own: %+v", next)
	}
}
