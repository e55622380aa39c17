package csv

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"
	"unsafe"

	"github.com/weirdata/weir/formats"
)

// decoder parses fields into struct values for one Read. It owns a string slab
// that is replaced, never overwritten, so strings and []byte values stay valid
// after the batch, and per pointer column a block of pointees per batch.
type decoder struct {
	cols   []column
	null   string
	layout string
	rows   int // batch rows: the size of each pointee block
	// zoneNames says the layout parses zone names, which time.Parse keeps.
	zoneNames bool
	slab      []byte
	elems     []elemBlock // per column, for pointer fields
}

type elemBlock struct {
	base unsafe.Pointer
	used int
}

const slabSize = 64 << 10

func newDecoder(cols []column, o *Options) *decoder {
	return &decoder{
		cols: cols, null: o.NullString, layout: o.TimeLayout, rows: o.BatchRows,
		zoneNames: strings.Contains(o.TimeLayout, "MST"),
		elems:     make([]elemBlock, len(cols)),
	}
}

// newBatch makes the next pointer field values come from fresh blocks, so those
// of the previous batch stay valid.
func (d *decoder) newBatch() {
	for i := range d.elems {
		d.elems[i] = elemBlock{}
	}
}

// keep copies b into the slab and returns the copy, which is never overwritten.
func (d *decoder) keep(b []byte) []byte {
	if len(b) > cap(d.slab)-len(d.slab) {
		d.slab = make([]byte, 0, max(slabSize, len(b)))
	}
	n := len(d.slab)
	d.slab = append(d.slab, b...)
	return d.slab[n:len(d.slab):len(d.slab)]
}

// set parses b into column ci of the row at row. quoted fields are never NULL.
func (d *decoder) set(ci int, row unsafe.Pointer, b []byte, quoted bool) error {
	c := &d.cols[ci]
	p := unsafe.Add(row, c.Field.Offset)
	isNull := !quoted && (len(b) == 0 || (d.null != "" && string(b) == d.null))
	if c.Kind == formats.KindBytes {
		if isNull {
			*(*[]byte)(p) = nil
		} else if len(b) == 0 {
			*(*[]byte)(p) = []byte{}
		} else {
			*(*[]byte)(p) = d.keep(b)
		}
		return nil
	}
	if c.Ptr {
		if isNull {
			*(*unsafe.Pointer)(p) = nil
			return nil
		}
		e := &d.elems[ci]
		if e.base == nil || e.used == d.rows {
			*e = elemBlock{base: formats.NewElems(c, d.rows)}
		}
		elem := unsafe.Add(e.base, uintptr(e.used)*c.Size)
		e.used++
		*(*unsafe.Pointer)(p) = elem
		p = elem
	}
	s := unsafe.String(unsafe.SliceData(b), len(b))
	switch c.Kind {
	case formats.KindInt:
		v, err := strconv.ParseInt(s, 10, int(c.Size*8))
		if err != nil {
			return numErr(b, err)
		}
		switch c.Size {
		case 1:
			*(*int8)(p) = int8(v)
		case 2:
			*(*int16)(p) = int16(v)
		case 4:
			*(*int32)(p) = int32(v)
		default:
			*(*int64)(p) = v
		}
	case formats.KindUint:
		v, err := strconv.ParseUint(s, 10, int(c.Size*8))
		if err != nil {
			return numErr(b, err)
		}
		switch c.Size {
		case 1:
			*(*uint8)(p) = uint8(v)
		case 2:
			*(*uint16)(p) = uint16(v)
		case 4:
			*(*uint32)(p) = uint32(v)
		default:
			*(*uint64)(p) = v
		}
	case formats.KindFloat32:
		v, err := strconv.ParseFloat(s, 32)
		if err != nil {
			return numErr(b, err)
		}
		*(*float32)(p) = float32(v)
	case formats.KindFloat64:
		v, err := strconv.ParseFloat(s, 64)
		if err != nil {
			return numErr(b, err)
		}
		*(*float64)(p) = v
	case formats.KindBool:
		v, err := strconv.ParseBool(s)
		if err != nil {
			return numErr(b, err)
		}
		*(*bool)(p) = v
	case formats.KindString:
		if len(b) == 0 {
			*(*string)(p) = ""
			return nil
		}
		k := d.keep(b)
		*(*string)(p) = unsafe.String(unsafe.SliceData(k), len(k))
	case formats.KindTime:
		layout := d.layout
		if layout == "" {
			layout = time.RFC3339
			if len(b) == len(time.DateOnly) {
				layout = time.DateOnly
			}
		}
		if layout == time.DateOnly {
			if t, ok := parseDate(b); ok {
				*(*time.Time)(p) = t
				return nil
			}
		}
		if d.zoneNames {
			s = string(b) // a parsed zone name aliases the input
		}
		t, err := time.Parse(layout, s)
		if err != nil {
			return fmt.Errorf("parsing %q: %s", string(b), err)
		}
		*(*time.Time)(p) = t
	}
	return nil
}

// numErr reports b's parse error without keeping b, which aliases the buffer.
func numErr(b []byte, err error) error {
	var ne *strconv.NumError
	if errors.As(err, &ne) {
		err = ne.Err
	}
	return fmt.Errorf("parsing %q: %w", string(b), err)
}

// parseDate is time.Parse(time.DateOnly, b) for valid dates, without its layout
// interpretation; ok is false for anything else, which time.Parse then reports.
func parseDate(b []byte) (t time.Time, ok bool) {
	if len(b) != 10 || b[4] != '-' || b[7] != '-' {
		return t, false
	}
	num := func(b []byte) int {
		n := 0
		for _, c := range b {
			if c < '0' || c > '9' {
				return -1
			}
			n = n*10 + int(c-'0')
		}
		return n
	}
	y, m, d := num(b[:4]), num(b[5:7]), num(b[8:])
	if y < 0 || m < 1 || m > 12 || d < 1 || d > 31 {
		return t, false
	}
	t = time.Date(y, time.Month(m), d, 0, 0, 0, 0, time.UTC)
	if t.Day() != d { // past the end of the month
		return time.Time{}, false
	}
	return t, true
}
