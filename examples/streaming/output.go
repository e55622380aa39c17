package streaming

import (
	"errors"
	"io/fs"
	"os"

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

// newDirs returns the output directories among paths that do not exist yet
// ("" skipped): a run that fails removes those it left empty.
func newDirs(paths ...string) dirs {
	var d dirs
	for _, p := range paths {
		if _, err := os.Stat(p); p != "" && errors.Is(err, fs.ErrNotExist) {
			d = append(d, p)
		}
	}
	return d
}

type dirs []string

// removeEmpty removes the directories that are empty (os.Remove refuses the
// others).
func (d dirs) removeEmpty() {
	for _, p := range d {
		os.Remove(p)
	}
}
