package flow

import (
	"slices"
	"strings"
	"testing"
	"unsafe"

	"github.com/weirdata/weir/memory"
)

// TestRawBatchOps: a batch of records that point to data goes through the
// untyped transport's operations (wrap, encode and decode at the records'
// addresses, zero) and comes back equal, record by record, to the batch
// built directly; a frame cut short fails naming the record it stopped at,
// and a frame of more records than the batch holds fails.
func TestRawBatchOps(t *testing.T) {
	c, err := memory.NewCodec[rec]()
	if err != nil {
		t.Fatal(err)
	}
	o := codec{raw: c.Raw(), size: unsafe.Sizeof(rec{})}
	var typed ops[rec]
	if o.flat() {
		t.Fatal("a record with a string reports a flat codec")
	}
	if got := unwrap[rec](rawBatch{}); got != nil {
		t.Fatalf("the zero rawBatch unwraps to %v, want nil", got)
	}
	want := make([]rec, 0, 8)
	for i := range 5 {
		want = append(want, rec{Key: int64(i), Prod: int32(i % 2), Seq: int64(10 * i), Payload: strings.Repeat("x", i)})
	}
	b := wrap(want)
	if b.n != 5 || b.c != 8 {
		t.Fatalf("wrap: n=%d c=%d, want 5 and 8", b.n, b.c)
	}
	frame := o.encode(nil, b)
	if first := o.first(nil, b); string(first) != string(frame[:len(first)]) {
		t.Fatal("first does not encode the batch's first record")
	}
	got, err := o.decode(typed.alloc(8), frame)
	if err != nil {
		t.Fatal(err)
	}
	if g, w := unwrap[rec](got), want; !slices.Equal(g, w) {
		t.Fatalf("decoded: %+v, want %+v", g, w)
	}

	// A second frame appends to what the batch holds.
	got, err = o.decode(got, o.encode(nil, wrap(want[:2])))
	if err != nil {
		t.Fatal(err)
	}
	if g, w := unwrap[rec](got), append(append([]rec(nil), want...), want[:2]...); !slices.Equal(g, w) {
		t.Fatalf("appended: %+v, want %+v", g, w)
	}

	// Cut inside the fourth record: three decode, the error names record 3.
	cut := len(o.encode(nil, wrap(want[:3]))) + 3
	part, err := o.decode(typed.alloc(8), frame[:cut])
	if err == nil || !strings.Contains(err.Error(), "record 3") {
		t.Fatalf("a cut frame: err %v, want one naming record 3", err)
	}
	if part.n != 4 { // three whole and the one partly written, cleared when recycled
		t.Fatalf("a cut frame left %d records in the batch, want 4", part.n)
	}
	if g, w := unwrap[rec](part)[:3], want[:3]; !slices.Equal(g, w) {
		t.Fatalf("before the cut: %+v, want %+v", g, w)
	}

	if _, err := o.decode(typed.alloc(4), frame); err == nil || !strings.Contains(err.Error(), "more records than a batch") {
		t.Fatalf("five records into a batch of four: err %v", err)
	}

	typed.zero(got)
	for i, r := range unwrap[rec](got) {
		if r != (rec{}) {
			t.Fatalf("zero left record %d as %+v", i, r)
		}
	}
}
