package source

import "context"

// Format reads the records of one file from a position: Text, CSV or
// Parquet. File sources (Files, MonitorDirectory) take one.
type Format[T any] interface {
	// open opens the file s.ID at s's position.
	open(ctx context.Context, s Split, c config) (splitReader[T], error)
	// ext is the name ending of the format's files in a directory ("" for any).
	ext() string
}
