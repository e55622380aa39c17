package watermark

import "fmt"

// Assigner extracts an event's timestamp (Flink's TimestampAssigner). It is
// given the event and the timestamp the event already carries (Min when it
// has none). The zero Assigner keeps that timestamp (Flink's
// RecordTimestampAssigner, the default of every strategy).
type Assigner[T any] struct {
	fn func(event T, recordTimestamp int64) (int64, error)
}

// AssignerFunc returns the Assigner that calls fn.
func AssignerFunc[T any](fn func(event T, recordTimestamp int64) int64) Assigner[T] {
	return Assigner[T]{fn: func(event T, ts int64) (int64, error) { return fn(event, ts), nil }}
}

// AssignerErrFunc returns the Assigner that calls fn, which may fail: a
// record without a usable timestamp. Extract reports the failure naming the
// record.
func AssignerErrFunc[T any](fn func(event T, recordTimestamp int64) (int64, error)) Assigner[T] {
	return Assigner[T]{fn: fn}
}

// Extract returns event's timestamp. An error of the function is returned
// as a *TimestampError naming the record.
func (a Assigner[T]) Extract(event T, recordTimestamp int64) (int64, error) {
	if a.fn == nil {
		return recordTimestamp, nil
	}
	ts, err := a.fn(event, recordTimestamp)
	if err != nil {
		return 0, &TimestampError{Record: event, Err: err}
	}
	return ts, nil
}

// TimestampError is a failure to extract a record's timestamp.
type TimestampError struct {
	Record any // the record whose timestamp failed
	Err    error
}

func (e *TimestampError) Error() string {
	return fmt.Sprintf("watermark: timestamp of record %+v: %v", e.Record, e.Err)
}

func (e *TimestampError) Unwrap() error { return e.Err }
