package memory

import (
	"testing"
	"time"
	_ "time/tzdata" // named zones load the same on every machine
)

func decodeTime(t *testing.T, v time.Time) (plain, arena time.Time) {
	t.Helper()
	c := mustCodec[time.Time](t)
	return roundTrip(t, c, &v)
}

func TestCodecTimeUTCAndLocal(t *testing.T) {
	cases := []time.Time{
		{},
		time.Date(2024, 2, 29, 12, 0, 0, 1, time.UTC),
		time.Unix(-1, 5).UTC(), // before 1970, with nanoseconds
		time.Unix(0, 0).UTC(),
		time.Date(-4000, 1, 1, 0, 0, 0, 0, time.UTC),
		time.Date(9999, 12, 31, 23, 59, 59, 999999999, time.UTC),
		time.Date(2001, 9, 9, 1, 46, 40, 0, time.Local),
		time.Unix(-62135596801, 0), // one second before year 1, Local
	}
	for _, v := range cases {
		plain, arena := decodeTime(t, v)
		for _, got := range []time.Time{plain, arena} {
			if got != v || got.Location() != v.Location() {
				t.Errorf("%v: got %v (%v), want == with location %v", v, got, got.Location(), v.Location())
			}
		}
	}
}

func TestCodecTimeMonotonicDropped(t *testing.T) {
	now := time.Now()
	got, _ := decodeTime(t, now)
	if !got.Equal(now) || got != now.Round(0) {
		t.Errorf("time.Now round trip: got %v, want Equal and == now.Round(0) %v", got, now.Round(0))
	}
}

func TestCodecTimeNamedZones(t *testing.T) {
	ny, err := time.LoadLocation("America/New_York")
	if err != nil {
		t.Fatal(err)
	}
	mars := time.FixedZone("Mars/Olympus", 5*3600+1800)
	wrongEST := time.FixedZone("EST", 3600) // loadable name, different offset
	cases := []struct {
		v        time.Time
		locName  string // the decoded location's name
		sameRule bool   // the decoded location has the original's rules (DST)
	}{
		{time.Date(2024, 7, 4, 12, 0, 0, 0, ny), "America/New_York", true},
		{time.Date(2024, 1, 4, 12, 0, 0, 7, ny), "America/New_York", true},
		{time.Date(2024, 3, 10, 7, 0, 0, 0, time.UTC).In(ny), "America/New_York", true}, // DST switch instant
		{time.Date(1850, 1, 1, 0, 0, 0, 0, ny), "America/New_York", true},               // local mean time
		{time.Date(2024, 7, 4, 12, 0, 0, 0, mars), "Mars/Olympus", false},
		{time.Date(2024, 7, 4, 12, 0, 0, 0, wrongEST), "EST", false},
		{time.Date(2024, 7, 4, 12, 0, 0, 0, time.FixedZone("", -3600)), "", false},
	}
	for _, tc := range cases {
		plain, arena := decodeTime(t, tc.v)
		for _, got := range []time.Time{plain, arena} {
			wantAbbr, wantOff := tc.v.Zone()
			abbr, off := got.Zone()
			if !got.Equal(tc.v) || abbr != wantAbbr || off != wantOff {
				t.Errorf("%v: got %v (zone %s %d)", tc.v, got, abbr, off)
			}
			if got.Format(time.RFC3339Nano) != tc.v.Format(time.RFC3339Nano) {
				t.Errorf("%v: formats as %s", tc.v, got.Format(time.RFC3339Nano))
			}
			if got.Location().String() != tc.locName && tc.sameRule {
				t.Errorf("%v: location %q, want %q", tc.v, got.Location(), tc.locName)
			}
			if tc.sameRule {
				later := tc.v.AddDate(0, 6, 0)
				_, wantLater := later.Zone()
				if _, gotLater := got.AddDate(0, 6, 0).Zone(); gotLater != wantLater {
					t.Errorf("%v: six months later the offset is %d, want %d", tc.v, gotLater, wantLater)
				}
			}
		}
	}
}

// TestCodecTimeNamedZoneAllocs checks that decoding times in a named zone reuses
// the cached location: no allocation per record after the first.
func TestCodecTimeNamedZoneAllocs(t *testing.T) {
	ny, err := time.LoadLocation("America/New_York")
	if err != nil {
		t.Fatal(err)
	}
	type stamped struct {
		ID int64
		At time.Time
	}
	c := mustCodec[stamped](t)
	v := stamped{ID: 1, At: time.Date(2024, 7, 4, 12, 0, 0, 0, ny)}
	enc := c.Append(nil, &v)
	var got stamped
	a := NewArena(0)
	allocs := testing.AllocsPerRun(100, func() {
		if _, err := c.DecodeArena(enc, &got, a); err != nil {
			t.Fatal(err)
		}
	})
	if allocs != 0 || !got.At.Equal(v.At) {
		t.Errorf("DecodeArena of a New York time: %v allocs, got %v", allocs, got.At)
	}
}
