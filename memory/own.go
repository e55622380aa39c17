package memory

import "unsafe"

// Shallow reports whether T's only references are strings, byte slices and
// time.Time values (no pointers, slices of other types, or arrays of these),
// so that Own can make a copy of a value independent of the memory it shares.
// Flat types are shallow.
func (c *Codec[T]) Shallow() bool {
	for _, o := range c.prog.ops {
		switch o.kind {
		case opRaw, opString, opBytes, opTime:
		default:
			return false
		}
	}
	return true
}

// Own makes the strings and byte slices of *v independent of memory other
// values share: each is copied into a, unless it is the very same memory as
// the field at the same place in *prev (which is already owned). A nil prev
// copies them all. It returns the number of bytes copied, so a caller can
// bound what a holds. It is for Shallow codecs: it ignores other references.
//
// A combiner keeps its groups with Own: the records it reduces may point into
// batches that would otherwise stay alive as long as the group does.
func (c *Codec[T]) Own(v, prev *T, a *Arena) int {
	n := 0
	for i := range c.prog.ops {
		o := &c.prog.ops[i]
		switch o.kind {
		case opString:
			s := (*string)(unsafe.Add(unsafe.Pointer(v), o.off))
			if len(*s) == 0 {
				continue
			}
			if prev != nil {
				p := (*string)(unsafe.Add(unsafe.Pointer(prev), o.off))
				if unsafe.StringData(*p) == unsafe.StringData(*s) && len(*p) == len(*s) {
					continue
				}
			}
			*s = a.String(unsafe.Slice(unsafe.StringData(*s), len(*s)))
			n += len(*s)
		case opBytes:
			b := (*[]byte)(unsafe.Add(unsafe.Pointer(v), o.off))
			if len(*b) == 0 {
				if *b != nil {
					*b = []byte{} // not a view of a neighbour's memory
				}
				continue
			}
			if prev != nil {
				p := (*[]byte)(unsafe.Add(unsafe.Pointer(prev), o.off))
				if unsafe.SliceData(*p) == unsafe.SliceData(*b) && len(*p) == len(*b) {
					continue
				}
			}
			*b = a.Bytes(*b)
			n += len(*b)
		}
	}
	return n
}
