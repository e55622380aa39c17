package memory

import "fmt"

// FormatBytes writes n bytes in the largest binary unit that keeps a number of
// at least 1, with one decimal: "512 B", "16.0 KiB", "224.0 MiB", "1.5 GiB".
func FormatBytes(n int64) string {
	if n < 0 {
		return "-" + FormatBytes(-n)
	}
	if n < 1<<10 {
		return fmt.Sprintf("%d B", n)
	}
	units := [...]string{"KiB", "MiB", "GiB", "TiB", "PiB", "EiB"}
	v, i := float64(n)/1024, 0
	for v >= 1024 && i < len(units)-1 {
		v /= 1024
		i++
	}
	return fmt.Sprintf("%.1f %s", v, units[i])
}
