package callsite

import (
	"runtime"
	"strconv"
	"testing"
)

// api stands for an API function: it names the line that called it.
func api() string { return At(1) }

func TestAt(t *testing.T) {
	_, _, line, _ := runtime.Caller(0)
	got := api() // the line after the one runtime.Caller reported
	if want := "callsite_test.go:" + strconv.Itoa(line+1); got != want {
		t.Fatalf("At(1) = %q, want %q", got, want)
	}
	if got := At(1000); got != "?" {
		t.Fatalf("At(1000) = %q, want ?", got)
	}
}
