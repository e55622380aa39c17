package cli

import "testing"

func TestParseSize(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want Size
		bad  bool
	}{
		{in: "0", want: 0},
		{in: "1000", want: 1000},
		{in: "100B", want: 100},
		{in: "64k", want: 64 << 10},
		{in: "64KiB", want: 64 << 10},
		{in: "64KB", want: 64000},
		{in: "256MiB", want: 256 << 20},
		{in: "256M", want: 256 << 20},
		{in: "256mb", want: 256e6},
		{in: "1.5GiB", want: 3 << 29},
		{in: " 2 GiB ", want: 2 << 30},
		{in: "2GB", want: 2e9},
		{in: "1TiB", want: 1 << 40},
		{in: "", bad: true},
		{in: "MiB", bad: true},
		{in: "12XB", bad: true},
		{in: "1.2.3M", bad: true},
		{in: "-5M", bad: true},
		{in: "99999999999TiB", bad: true},
	} {
		got, err := ParseSize(tc.in)
		if tc.bad {
			if err == nil {
				t.Errorf("ParseSize(%q) = %d, want an error", tc.in, got)
			}
			continue
		}
		if err != nil || got != tc.want {
			t.Errorf("ParseSize(%q) = %d, %v; want %d", tc.in, got, err, tc.want)
		}
	}
}

func TestSizeString(t *testing.T) {
	for _, tc := range []struct {
		in   Size
		want string
	}{{256 << 20, "256MiB"}, {3 << 30, "3GiB"}, {1000, "1000B"}, {0, "0B"}, {64 << 10, "64KiB"}} {
		if got := tc.in.String(); got != tc.want {
			t.Errorf("Size(%d).String() = %q, want %q", int64(tc.in), got, tc.want)
		}
		if back, err := ParseSize(tc.in.String()); err != nil || back != tc.in {
			t.Errorf("ParseSize(%q) = %d, %v; want %d", tc.in.String(), back, err, int64(tc.in))
		}
	}
}
