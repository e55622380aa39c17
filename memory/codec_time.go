package memory

import (
	"encoding/binary"
	"sync"
	"sync/atomic"
	"time"
	"unsafe"
)

// Serialized form of a time.Time (and of named types defined on it):
//
//	int64  Unix seconds        8 bytes, host order
//	uint32 nanoseconds         4 bytes, host order, below 1e9
//	byte   zone kind           0: UTC, 1: time.Local, 2: named
//	for kind 2 only:
//	  uvarint len, bytes       the location's name (Location.String)
//	  uvarint len, bytes       the zone's abbreviation at that instant (Time.Zone)
//	  varint                   the zone's offset east of UTC in seconds at that instant
//
// Decoding restores the instant (Equal holds), the zone abbreviation and offset (so
// Zone, Format and the wall clock agree), and the location itself: time.UTC and
// time.Local by identity, any other location by loading its name with
// time.LoadLocation, provided the loaded location reports the same abbreviation and
// offset at that instant; otherwise a time.FixedZone of that abbreviation and
// offset. The monotonic clock reading is dropped (as by Time.Round(0)), so == holds
// after a round trip only for UTC and Local times without one.

const (
	zoneUTC   = 0
	zoneLocal = 1
	zoneNamed = 2

	timeMinLen = 13
	maxOffset  = 1 << 31 // bound on a decoded zone offset, in seconds
	maxZones   = 1024    // bound on the zone cache, which corrupt input could flood
)

// appendTime appends the time.Time at ptr.
func appendTime(dst []byte, ptr unsafe.Pointer) []byte {
	t := (*time.Time)(ptr)
	dst = binary.LittleEndian.AppendUint64(dst, uint64(t.Unix()))
	dst = binary.LittleEndian.AppendUint32(dst, uint32(t.Nanosecond()))
	loc := t.Location()
	switch loc {
	case time.UTC:
		return append(dst, zoneUTC)
	case time.Local:
		return append(dst, zoneLocal)
	}
	abbr, offset := t.Zone()
	name := loc.String()
	dst = append(dst, zoneNamed)
	dst = binary.AppendUvarint(dst, uint64(len(name)))
	dst = append(dst, name...)
	dst = binary.AppendUvarint(dst, uint64(len(abbr)))
	dst = append(dst, abbr...)
	return binary.AppendVarint(dst, int64(offset))
}

// time decodes a time.Time into ptr.
func (d *decoder) time(ptr unsafe.Pointer) error {
	if d.left() < timeMinLen {
		return errTruncated
	}
	s := d.take(timeMinLen)
	sec := int64(binary.LittleEndian.Uint64(s))
	nsec := binary.LittleEndian.Uint32(s[8:])
	if nsec >= 1e9 {
		return errNanos
	}
	t := (*time.Time)(ptr)
	switch s[12] {
	case zoneUTC:
		*t = time.Unix(sec, int64(nsec)).UTC()
		return nil
	case zoneLocal:
		*t = time.Unix(sec, int64(nsec))
		return nil
	case zoneNamed:
	default:
		return errZone
	}
	start := d.pos
	n, err := d.length()
	if err != nil {
		return err
	}
	name := d.take(n)
	if n, err = d.length(); err != nil {
		return err
	}
	abbr := d.take(n)
	offset, k := binary.Varint(d.src[d.pos:])
	if k <= 0 {
		return errVarint
	}
	d.pos += k
	if offset <= -maxOffset || offset >= maxOffset {
		return errZone
	}
	u := time.Unix(sec, int64(nsec))
	loc := zoneFor(d.src[start:d.pos], name, abbr, int(offset), u)
	tt := u.In(loc)
	if a, o := tt.Zone(); o != int(offset) || a != string(abbr) {
		// The cached location disagrees at this instant (a zone whose rules the
		// loaded database does not share): keep what the value recorded.
		tt = u.In(time.FixedZone(string(abbr), int(offset)))
	}
	*t = tt
	return nil
}

// zones caches the locations of named zones by their serialized form, so that
// decoding a time in a named zone allocates nothing after the first. Readers load
// the map without locking; writers copy it.
var zones struct {
	mu sync.Mutex
	m  atomic.Pointer[map[string]*time.Location]
}

func zoneFor(key, name, abbr []byte, offset int, at time.Time) *time.Location {
	if m := zones.m.Load(); m != nil {
		if loc, ok := (*m)[string(key)]; ok {
			return loc
		}
	}
	loc := loadZone(string(name), string(abbr), offset, at)
	zones.mu.Lock()
	defer zones.mu.Unlock()
	old := zones.m.Load()
	if old != nil && len(*old) >= maxZones {
		return loc
	}
	next := make(map[string]*time.Location, 8)
	if old != nil {
		for k, v := range *old {
			next[k] = v
		}
	}
	next[string(key)] = loc
	zones.m.Store(&next)
	return loc
}

// loadZone returns the location called name if this process can load it and it
// reports abbr and offset at instant at, and a fixed zone otherwise.
func loadZone(name, abbr string, offset int, at time.Time) *time.Location {
	if name != "" {
		if loc, err := time.LoadLocation(name); err == nil {
			if a, o := at.In(loc).Zone(); a == abbr && o == offset {
				return loc
			}
		}
	}
	return time.FixedZone(abbr, offset)
}
