package memory

import "testing"

func TestFormatBytes(t *testing.T) {
	for _, c := range []struct {
		n    int64
		want string
	}{
		{0, "0 B"}, {1023, "1023 B"}, {1024, "1.0 KiB"}, {16 << 10, "16.0 KiB"},
		{234881024, "224.0 MiB"}, {3 << 29, "1.5 GiB"}, {-2048, "-2.0 KiB"},
		{1 << 62, "4.0 EiB"},
	} {
		if got := FormatBytes(c.n); got != c.want {
			t.Errorf("FormatBytes(%d) = %q, want %q", c.n, got, c.want)
		}
	}
}
