package dbgen

import (
	"fmt"
	"math"
	"unsafe"
)

const (
	suppPerPart = 4
	maxLines    = 7
	// maxScale is the largest scale factor generated: from 30000 on dbgen
	// switches o_custkey and l_partkey to a 64-bit generator that cannot
	// skip rows, which this package does not implement.
	maxScale = 30000
)

// Scale is a validated scale factor and the quantities dbgen derives from it.
//
// As dbgen does, a scale factor below 1 keeps the key arithmetic of scale 1
// but multiplies every table's base row count by int(1000·sf)/1000; a scale
// factor of 1 or more is truncated to an integer.
type Scale struct {
	sf     float64
	scale  int64 // dbgen's integer scale
	part   int64 // base row counts (× scale = rows)
	supp   int64
	cust   int64
	orders int64
}

// NewScale validates sf (positive, below 30000).
func NewScale(sf float64) (Scale, error) {
	if math.IsNaN(sf) || sf <= 0 || sf >= maxScale {
		return Scale{}, fmt.Errorf("tpch/dbgen: scale factor %v: want 0 < sf < %d", sf, maxScale)
	}
	s := Scale{sf: sf, part: 200000, supp: 10000, cust: 150000, orders: 1500000}
	if sf < 1 {
		s.scale = 1
		k := int64(1000 * sf)
		for _, b := range []*int64{&s.part, &s.supp, &s.cust, &s.orders} {
			*b = k * *b / 1000
			if *b < 1 {
				*b = 1
			}
		}
	} else {
		s.scale = int64(sf)
	}
	return s, nil
}

// SF returns the scale factor.
func (s Scale) SF() float64 { return s.sf }

// Rows returns the number of rows of a table ("lineitem" is not known in
// advance and gives -1; "partsupp" is four per part).
func (s Scale) Rows(table string) int64 {
	switch table {
	case "part":
		return s.part * s.scale
	case "partsupp":
		return s.part * s.scale * suppPerPart
	case "supplier":
		return s.supp * s.scale
	case "customer":
		return s.cust * s.scale
	case "orders":
		return s.orders * s.scale
	case "nation":
		return int64(len(nations))
	case "region":
		return int64(len(distRegions.text))
	}
	return -1
}

// arena holds the bytes of the strings a generator builds, so that a row's
// strings cost no allocation of their own. A string stays valid as long as
// it is referenced: arena blocks are never reused.
type arena struct {
	buf   []byte
	start int
}

const arenaBlock = 64 << 10

// begin starts a string of at most n bytes.
func (a *arena) begin(n int) []byte {
	if cap(a.buf)-len(a.buf) < n {
		a.buf = make([]byte, 0, max(arenaBlock, n))
	}
	a.start = len(a.buf)
	return a.buf
}

// end finishes the string begun by begin; b is what was appended to its
// result.
func (a *arena) end(b []byte) string {
	a.buf = b
	s := b[a.start:]
	return unsafe.String(unsafe.SliceData(s), len(s))
}

// appendInt appends v zero-padded to width digits.
func appendInt(b []byte, v int64, width int) []byte {
	var d [20]byte
	i := len(d)
	for v > 0 || i > len(d)-width {
		i--
		d[i] = byte('0' + v%10)
		v /= 10
	}
	return append(b, d[i:]...)
}
