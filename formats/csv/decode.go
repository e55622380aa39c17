package csv

import (
	"encoding/binary"
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
	nonFinite bool // Options.NonFinite
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
		zoneNames: strings.Contains(o.TimeLayout, "MST"), nonFinite: o.NonFinite,
		elems: make([]elemBlock, len(cols)),
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
		v, ok := atoi(b, int(c.Size*8))
		if !ok {
			var err error
			if v, err = strconv.ParseInt(s, 10, int(c.Size*8)); err != nil {
				return numErr(b, err)
			}
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
		if !isDecimal(b) && !(d.nonFinite && isNonFinite(b)) {
			return d.floatErr(b, 32)
		}
		v, err := strconv.ParseFloat(s, 32)
		if err != nil {
			return numErr(b, err)
		}
		*(*float32)(p) = float32(v)
	case formats.KindFloat64:
		if v, ok := atof(b); ok {
			*(*float64)(p) = v
			return nil
		}
		if !isDecimal(b) && !(d.nonFinite && isNonFinite(b)) {
			return d.floatErr(b, 64)
		}
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

// floatErr is the error of b, which is not a decimal number: strconv's when it
// cannot read b either, else a refusal of what it reads besides decimals.
func (d *decoder) floatErr(b []byte, bits int) error {
	if _, err := strconv.ParseFloat(string(b), bits); err != nil {
		return numErr(b, err)
	}
	if isNonFinite(b) {
		return numErr(b, errors.New("NaN and infinities are refused (csv.Options.NonFinite reads them)"))
	}
	return numErr(b, errors.New("not a decimal number (hexadecimal and digit separators are refused)"))
}

// isNonFinite reports whether b is a NaN or an infinity as strconv.ParseFloat
// reads them: NaN, Inf and Infinity in any case, the infinities signed or not.
func isNonFinite(b []byte) bool {
	s := unsafe.String(unsafe.SliceData(b), len(b))
	if strings.EqualFold(s, "nan") {
		return true
	}
	if len(s) > 0 && (s[0] == '+' || s[0] == '-') {
		s = s[1:]
	}
	return strings.EqualFold(s, "inf") || strings.EqualFold(s, "infinity")
}

// atoi is strconv.ParseInt(b, 10, bits) for up to 18 digits with an
// optional sign, the common case, without its generality; ok is false for
// anything else (longer, not a number, out of range), which the caller hands
// to strconv for its value or its error.
func atoi(b []byte, bits int) (v int64, ok bool) {
	i := 0
	if len(b) > 0 && (b[0] == '-' || b[0] == '+') {
		i = 1
	}
	if len(b) == i || len(b)-i > 18 {
		return 0, false
	}
	var n int64 // below 10^18: no overflow
	for ; len(b)-i >= 8; i += 8 {
		v, ok := eightDigits(b[i : i+8])
		if !ok {
			return 0, false
		}
		n = n*100000000 + int64(v)
	}
	for _, c := range b[i:] {
		d := c - '0'
		if d > 9 {
			return 0, false
		}
		n = n*10 + int64(d)
	}
	if b[0] == '-' {
		n = -n
	}
	if bits < 64 && (n < -1<<(bits-1) || n >= 1<<(bits-1)) {
		return 0, false
	}
	return n, true
}

// eightDigits reads the 8 ASCII digits of b at once (Lemire's SWAR
// parsing: the bytes as one little-endian word, digits paired, then pairs of
// pairs); ok is false when one of them is no digit.
func eightDigits(b []byte) (uint64, bool) {
	v := binary.LittleEndian.Uint64(b)
	if (v&0xF0F0F0F0F0F0F0F0)|((v+0x0606060606060606)&0xF0F0F0F0F0F0F0F0)>>4 != 0x3333333333333333 {
		return 0, false
	}
	v -= 0x3030303030303030
	v = v*10 + v>>8
	const mask, mul1, mul2 = 0x000000FF000000FF, 100 + 1000000<<32, 1 + 10000<<32
	return ((v&mask)*mul1 + (v>>16&mask)*mul2) >> 32, true
}

// pow10 are the powers of ten a float64 holds exactly.
var pow10 = [...]float64{1e0, 1e1, 1e2, 1e3, 1e4, 1e5, 1e6, 1e7, 1e8, 1e9, 1e10, 1e11,
	1e12, 1e13, 1e14, 1e15, 1e16, 1e17, 1e18, 1e19, 1e20, 1e21, 1e22}

// atof is strconv.ParseFloat(b, 64) for the decimal numbers whose digits
// make an integer m of at most 2^53 and whose value is m times or divided by
// a power of ten of at most 10^22, the common case: both are exact in a
// float64, so one multiplication or division rounds correctly (Clinger's
// fast path, which strconv takes too). ok is false for anything else, which
// the caller hands to strconv.
func atof(b []byte) (v float64, ok bool) {
	i := 0
	if len(b) > 0 && (b[0] == '-' || b[0] == '+') {
		i = 1
	}
	var m uint64
	digits, exp := 0, 0
	for ; i < len(b) && b[i]-'0' <= 9; i++ {
		m = m*10 + uint64(b[i]-'0')
		digits++
	}
	if i < len(b) && b[i] == '.' {
		for i++; i < len(b) && b[i]-'0' <= 9; i++ {
			m = m*10 + uint64(b[i]-'0')
			digits++
			exp--
		}
	}
	if digits == 0 || digits > 19 || m > 1<<53 {
		return 0, false
	}
	if i < len(b) {
		if b[i]|0x20 != 'e' {
			return 0, false
		}
		i++
		neg := i < len(b) && b[i] == '-'
		if i < len(b) && (b[i] == '-' || b[i] == '+') {
			i++
		}
		e, ed := 0, 0
		for ; i < len(b) && b[i]-'0' <= 9 && ed < 4; i++ {
			e = e*10 + int(b[i]-'0')
			ed++
		}
		if ed == 0 || i < len(b) {
			return 0, false
		}
		if neg {
			e = -e
		}
		exp += e
	}
	v = float64(m)
	switch {
	case exp == 0:
	case exp > 0 && exp < len(pow10):
		v *= pow10[exp]
	case exp < 0 && -exp < len(pow10):
		v /= pow10[-exp]
	default:
		return 0, false
	}
	if b[0] == '-' {
		v = -v
	}
	return v, true
}

// isDecimal reports whether b is a decimal number: an optional sign, digits
// with an optional point (at least one digit) and an optional exponent. It
// refuses what strconv.ParseFloat reads besides: NaN, Inf, Infinity,
// hexadecimal mantissas (0x1p3) and underscores (1_000).
func isDecimal(b []byte) bool {
	i := 0
	if i < len(b) && (b[i] == '+' || b[i] == '-') {
		i++
	}
	digits := 0
	for i < len(b) && '0' <= b[i] && b[i] <= '9' {
		i++
		digits++
	}
	if i < len(b) && b[i] == '.' {
		i++
		for i < len(b) && '0' <= b[i] && b[i] <= '9' {
			i++
			digits++
		}
	}
	if digits == 0 {
		return false
	}
	if i < len(b) && b[i]|0x20 == 'e' {
		i++
		if i < len(b) && (b[i] == '+' || b[i] == '-') {
			i++
		}
		exp := 0
		for i < len(b) && '0' <= b[i] && b[i] <= '9' {
			i++
			exp++
		}
		if exp == 0 {
			return false
		}
	}
	return i == len(b)
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
