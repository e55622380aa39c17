// Package callsite names the line of user code that called an API function,
// so that the APIs (dataset, stream) can report a mistake where it was made.
package callsite

import (
	"fmt"
	"runtime"
)

// At returns "file.go:line" of the caller skip frames above the function
// that calls At: At(1) in an API function names the line that called it.
func At(skip int) string {
	_, file, line, ok := runtime.Caller(skip + 1)
	if !ok {
		return "?"
	}
	for i := len(file) - 1; i >= 0; i-- {
		if file[i] == '/' {
			file = file[i+1:]
			break
		}
	}
	return fmt.Sprintf("%s:%d", file, line)
}
