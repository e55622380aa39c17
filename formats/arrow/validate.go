package arrow

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"os"

	flatbuffers "github.com/google/flatbuffers/go"
)

// arrow-go decodes the schema in a file's footer without checking the lengths
// of its flatbuffer vectors, so a damaged length makes it allocate whatever the
// bytes say (a fatal out-of-memory, not a panic). checkFooter walks the parts of
// the footer that the schema decoding allocates from and rejects a vector that
// does not fit in the footer, before arrow-go sees the file. The table layouts
// are those of Arrow's File.fbs and Schema.fbs.

// errCorrupt is what checkFooter reports.
var errCorrupt = errors.New("corrupt footer")

const (
	maxNesting   = 64    // deepest field nesting checkFooter accepts
	unionType    = 14    // Type.Union in Schema.fbs
	footerTail   = 4 + 6 // footer length and "ARROW1"
	maxFooterLen = 64 << 20
)

// slot is the vtable offset of field i of a table.
func slot(i int) flatbuffers.VOffsetT { return flatbuffers.VOffsetT(4 + 2*i) }

// checkFooter reads the footer of fd and checks it. Files too
// short or without the magic are left to arrow-go, which reports them.
func checkFooter(fd *os.File) (err error) {
	st, err := fd.Stat()
	if err != nil {
		return err
	}
	size := st.Size()
	if size < footerTail+8 {
		return nil
	}
	var tail [footerTail]byte
	if _, err := fd.ReadAt(tail[:], size-footerTail); err != nil {
		return err
	}
	if string(tail[4:]) != "ARROW1" {
		return nil
	}
	n := int64(binary.LittleEndian.Uint32(tail[:4]))
	if n <= 0 || n > maxFooterLen || n > size-footerTail {
		return nil
	}
	buf := make([]byte, n)
	if _, err := fd.ReadAt(buf, size-footerTail-n); err != nil && err != io.EOF {
		return err
	}
	defer func() {
		if p := recover(); p != nil {
			err = fmt.Errorf("%w: %v", errCorrupt, p)
		}
	}()
	v := validator{buf: buf}
	footer := v.root()
	v.vector(footer, 2, 24) // dictionaries: Block structs
	v.vector(footer, 3, 24) // recordBatches: Block structs
	if schema, ok := v.table(footer, 1); ok {
		v.fields(schema, 1, 0)
		v.keyValues(schema, 2)
	}
	return v.err
}

type validator struct {
	buf []byte
	err error
}

func (v *validator) fail(format string, args ...any) {
	if v.err == nil {
		v.err = fmt.Errorf("%w: "+format, append([]any{errCorrupt}, args...)...)
	}
}

func (v *validator) root() flatbuffers.Table {
	return flatbuffers.Table{Bytes: v.buf, Pos: flatbuffers.GetUOffsetT(v.buf)}
}

// vector returns the start and length of the vector in field i of t, checking
// that its elements of elem bytes fit.
func (v *validator) vector(t flatbuffers.Table, i int, elem int) (start flatbuffers.UOffsetT, n int, ok bool) {
	o := flatbuffers.UOffsetT(t.Offset(slot(i)))
	if o == 0 {
		return 0, 0, false
	}
	n = t.VectorLen(o)
	start = t.Vector(o)
	if n < 0 || int64(start)+int64(n)*int64(elem) > int64(len(v.buf)) {
		v.fail("vector of %d elements at %d past the end of %d bytes", n, start, len(v.buf))
		return 0, 0, false
	}
	return start, n, true
}

// table returns the table in field i of t.
func (v *validator) table(t flatbuffers.Table, i int) (flatbuffers.Table, bool) {
	o := flatbuffers.UOffsetT(t.Offset(slot(i)))
	if o == 0 {
		return flatbuffers.Table{}, false
	}
	return flatbuffers.Table{Bytes: v.buf, Pos: t.Indirect(o + t.Pos)}, true
}

// str checks the string in field i of t.
func (v *validator) str(t flatbuffers.Table, i int) {
	v.vector(t, i, 1)
}

// fields checks the vector of Field tables in field i of t (Schema.fields or
// Field.children) and what each field's decoding allocates from.
func (v *validator) fields(t flatbuffers.Table, i, depth int) {
	if depth > maxNesting {
		v.fail("fields nested deeper than %d", maxNesting)
		return
	}
	start, n, ok := v.vector(t, i, 4)
	for j := 0; ok && j < n && v.err == nil; j++ {
		f := flatbuffers.Table{Bytes: v.buf, Pos: t.Indirect(start + flatbuffers.UOffsetT(j)*4)}
		v.str(f, 0) // name
		if f.GetByteSlot(slot(2), 0) == unionType {
			if u, ok := v.table(f, 3); ok {
				v.vector(u, 1, 4) // Union.typeIds
			}
		}
		v.fields(f, 5, depth+1) // children
		v.keyValues(f, 6)
	}
}

// keyValues checks the custom_metadata vector in field i of t.
func (v *validator) keyValues(t flatbuffers.Table, i int) {
	start, n, ok := v.vector(t, i, 4)
	for j := 0; ok && j < n && v.err == nil; j++ {
		kv := flatbuffers.Table{Bytes: v.buf, Pos: t.Indirect(start + flatbuffers.UOffsetT(j)*4)}
		v.str(kv, 0)
		v.str(kv, 1)
	}
}
