package sink

import (
	"bytes"
	"os"
	"testing"
)

// The prefixes of Flink's PrintSinkOutputWriter.open.
func TestPrintPrefix(t *testing.T) {
	for _, c := range []struct {
		id   string
		i, n int
		want string
	}{
		{"", 0, 1, "(to,1)\n(be,2)\n"},
		{"", 1, 2, "2> (to,1)\n2> (be,2)\n"},
		{"wc", 0, 1, "wc> (to,1)\nwc> (be,2)\n"},
		{"wc", 2, 4, "wc:3> (to,1)\nwc:3> (be,2)\n"},
	} {
		var buf bytes.Buffer
		w, err := NewPrintTo[wordCount](&buf, c.id).Writer(c.i, c.n)
		if err != nil {
			t.Fatal(err)
		}
		if err := w.Write([]wordCount{{"to", 1}, {"be", 2}}); err != nil {
			t.Fatal(err)
		}
		if buf.String() != c.want {
			t.Errorf("id %q subtask %d of %d: got %q, want %q", c.id, c.i, c.n, buf.String(), c.want)
		}
	}
	if _, err := NewPrintTo[int](&bytes.Buffer{}, "").Writer(2, 2); err == nil {
		t.Error("subtask 2 of 2: no error")
	}
}

// NewPrintErr prints to standard error as NewPrint does to standard output
// (Flink's printToErr).
func TestPrintErr(t *testing.T) {
	f, err := os.CreateTemp(t.TempDir(), "stderr")
	check(t, err)
	defer f.Close()
	saved := os.Stderr
	os.Stderr = f
	p := NewPrintErr[wordCount]("err")
	os.Stderr = saved
	w, err := p.Writer(0, 3)
	check(t, err)
	check(t, w.Write([]wordCount{{"or", 1}}))
	b, err := os.ReadFile(f.Name())
	check(t, err)
	if string(b) != "err:1> (or,1)\n" {
		t.Errorf("stderr got %q", b)
	}
}
