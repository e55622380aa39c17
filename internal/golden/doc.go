// Package golden compares test output with files checked in under testdata,
// and rewrites those files on request. It uses only the standard library.
//
// Check compares a whole file with what a test produced. RunFile reads a file
// of cases in the cockroachdb/datadriven format and compares each case's
// expected output with what a function returns for it:
//
//	# Comment lines start with '#'; blank lines separate cases.
//	plan name=q3 cols=(a, b) verbose
//	optional input lines
//	----
//	expected output, up to the next blank line
//
// An expected output that holds blank lines is written between doubled
// separators ("----" twice before it and twice after it).
//
// Regenerate the files of a package with the -rewrite flag, which this
// package declares for every test binary that imports it, then review the
// change with git diff:
//
//	go test ./optimizer/ -run TestExplainGolden -args -rewrite
//	go test ./optimizer/ -rewrite   (the same: go test passes the flag on)
//
// A mismatch names the file, shows the first differing lines as a unified
// diff and prints the command that rewrites the file.
package golden
