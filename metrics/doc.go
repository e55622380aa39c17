// Package metrics is weir's user metrics, Flink's metric API
// (org.apache.flink.metrics): a Group of named metrics and sub-groups, and
// the four kinds of metric a user function registers in it.
//
//	Counter     a count that goes up and down (Flink's SimpleCounter)
//	Gauge       a function read when the metrics are read (Flink's Gauge)
//	Histogram   the statistics of the last values of a bounded reservoir
//	            (Flink's DescriptiveStatisticsHistogram): min, max, mean,
//	            standard deviation and quantiles
//	Meter       events and their rate per second over a span of time
//	            (Flink's MeterView)
//
// # Scopes
//
// A Group has a scope: the names of its ancestors and its own. The runtime
// of a DataStream program makes one root group per operator and subtask,
// scoped <operator>.<subtask> (Flink's scope order for operator metrics),
// and hands it to the user's functions (stream.RuntimeContext.MetricGroup,
// sink.InitContext.MetricGroup); AddGroup adds <group> below it. A metric's
// identifier is its group's scope and its name joined by dots:
// <operator>.<subtask>.<group>.<name> (Sample.Identifier).
//
// A name is registered once per group. Asking again for a metric of the
// same kind and name returns the registered one; a metric of another kind
// under a registered name works but is not registered, so it appears in no
// reading of the group (Flink's name collision: the first metric is
// reported).
//
// # Updating, publishing and reading
//
// A metric is updated by one goroutine, the one its function runs on (a
// subtask's), with plain arithmetic: Counter.Inc and Meter.MarkEvent add
// to a field, Histogram.Update writes one slot of its ring; none
// allocates or synchronizes (Flink's SimpleCounter is not thread-safe
// either). Group.Publish, called on that goroutine, makes the values
// visible to readers; the stream runtime publishes a subtask's metrics
// after each batch, event and timer, so readers see them as of the last
// one, never torn. Counter.Count, Histogram.Count and
// Histogram.Statistics read the updater's own values, on its goroutine.
//
// Group.Samples, on any goroutine, returns every metric of a group and
// its sub-groups as Samples, in the order they were registered, the
// group's own before its sub-groups': what Job.Metrics of package stream
// and a reporter read. A Sample names its metric by scope and name and
// holds its kind and values, so that a reporter (Prometheus: counters,
// gauges, summaries) needs nothing else. A Gauge's function is called by
// Samples, on the reader's goroutine: it must be safe for concurrent use
// (read an atomic), must not block, and must not read the metrics itself.
//
// # Time
//
// A Meter reads the group's clock (a clock.Clock: the job's processing
// time, a clock.Manual in tests) only when its rate is read, never when an
// event is marked. Metrics are not part of any snapshot of state: a job
// that restarts or restores starts its metrics at zero, as Flink does.
//
// The package is a leaf: it imports the standard library and clock only.
package metrics
