package memory

import (
	"bytes"
	"errors"
	"reflect"
	"testing"
	"unsafe"
)

// TestCodecRaw: the codec with its type erased writes the bytes the typed
// codec writes, decodes them into a value deeply equal to the original (with
// and without an arena), reports the same flatness and the type's size, and
// fails on a cut encoding with ErrCorrupt; the zero Raw is not valid.
func TestCodecRaw(t *testing.T) {
	if (Raw{}).Valid() {
		t.Fatal("the zero Raw reports valid")
	}
	c := mustCodec[everything](t)
	r := c.Raw()
	if !r.Valid() || r.Flat() != c.Flat() || r.Size() != unsafe.Sizeof(everything{}) {
		t.Fatalf("Raw: valid %v, flat %v (codec %v), size %d", r.Valid(), r.Flat(), c.Flat(), r.Size())
	}
	v := fullEverything()
	want := c.Append(nil, &v)
	got := r.Append([]byte("p"), unsafe.Pointer(&v))
	if !bytes.Equal(got[1:], want) || got[0] != 'p' {
		t.Fatal("Raw.Append differs from Codec.Append")
	}
	for _, a := range []*Arena{nil, NewArena(1024)} {
		var back everything
		n, err := r.Decode(want, unsafe.Pointer(&back), a)
		if err != nil || n != len(want) {
			t.Fatalf("Raw.Decode = %d, %v; want %d, nil", n, err, len(want))
		}
		if !reflect.DeepEqual(back, v) {
			t.Fatalf("Raw.Decode (arena %v): got %+v, want %+v", a != nil, back, v)
		}
	}
	var cut everything
	if _, err := r.Decode(want[:len(want)/2], unsafe.Pointer(&cut), nil); !errors.Is(err, ErrCorrupt) {
		t.Fatalf("a cut encoding: err %v, want ErrCorrupt", err)
	}

	f := mustCodec[scalars](t).Raw()
	if !f.Flat() || f.Size() != unsafe.Sizeof(scalars{}) {
		t.Fatalf("scalars: flat %v, size %d", f.Flat(), f.Size())
	}
}
