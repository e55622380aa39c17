package streaming

import (
	"github.com/weirdata/weir/stream"
	"github.com/weirdata/weir/stream/sink"
)

// emit prints ds in Flink's print format to o.Stdout, or, when output is
// not empty, writes its lines (Flink's toString of each value) to part
// files under the directory output (stream.SinkTo): committed as each
// checkpoint completes when the job checkpoints (Options.Configure), and
// when its input ends.
func emit[T any](ds stream.DataStream[T], o Options, output string) {
	if output == "" {
		stream.PrintTo(ds, o.Stdout, "")
		return
	}
	str := sink.ToString[T]()
	var opts []sink.Option
	if o.Notice != nil {
		opts = append(opts, sink.WithNotices(o.Notice))
	}
	stream.SinkTo(ds, sink.Rows(output, func(dst []byte, v T) []byte { return append(str(dst, v), '\n') }, opts...))
}
