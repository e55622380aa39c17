package cli

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	"github.com/weirdata/weir/stream"
	"github.com/weirdata/weir/stream/checkpoint"
	"github.com/weirdata/weir/stream/sink"
	"github.com/weirdata/weir/stream/state"
)

// newSavepointCommand is `weir savepoint`, the parent of the commands on
// savepoints and retained checkpoints.
func newSavepointCommand() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "savepoint",
		Short: "Work with savepoints and checkpoints of stream jobs",
		Args:  cobra.NoArgs,
	}
	cmd.AddCommand(newSavepointInspectCommand())
	return cmd
}

// newSavepointInspectCommand is `weir savepoint inspect PATH`.
func newSavepointInspectCommand() *cobra.Command {
	var format string
	cmd := &cobra.Command{
		Use:   "inspect PATH",
		Short: "List the operators, subtasks and states of a savepoint or checkpoint",
		Long: "inspect validates the savepoint or checkpoint at PATH (its directory or its _metadata file,\n" +
			"or their s3://bucket/key URL)\n" +
			"and lists its operators, each subtask's state, in-flight records and shared files, and the\n" +
			"states in a subtask's keyed state (per key group) or operator state.",
		Args: cobra.ExactArgs(1),
	}
	cmd.Flags().StringVar(&format, "format", formatText, "output format: text or json")
	cmd.RunE = func(cmd *cobra.Command, args []string) error {
		if format != formatText && format != formatJSON {
			return &usageError{err: fmt.Errorf("--format %q: want text or json", format)}
		}
		return runE(func(cmd *cobra.Command) error {
			info, err := inspectSnapshot(args[0])
			if err != nil {
				return err
			}
			d := describeSnapshot(info)
			if format == formatJSON {
				enc := json.NewEncoder(cmd.OutOrStdout())
				enc.SetIndent("", "  ")
				err = enc.Encode(d)
			} else {
				err = writeSnapshotText(cmd.OutOrStdout(), d)
			}
			if err != nil {
				return err
			}
			return refusedEntries(d)
		})(cmd, args)
	}
	return cmd
}

// snapshotDesc is what inspect shows of a snapshot; its JSON is the
// --format json output.
type snapshotDesc struct {
	Path      string         `json:"path"`
	Kind      string         `json:"kind"`
	ID        int64          `json:"id"`
	Timestamp int64          `json:"timestamp"`
	Time      string         `json:"time"`
	Finished  bool           `json:"finished"`
	Operators []operatorDesc `json:"operators"`
}

type operatorDesc struct {
	ID               string        `json:"id"`
	Name             string        `json:"name"`
	Parallelism      int           `json:"parallelism"`
	MaxParallelism   int           `json:"max_parallelism"`
	CoordinatorBytes *int          `json:"coordinator_bytes,omitempty"`
	Subtasks         []subtaskDesc `json:"subtasks"`
}

type subtaskDesc struct {
	Subtask       int          `json:"subtask"`
	StateFile     string       `json:"state_file,omitempty"`
	StateBytes    int          `json:"state_bytes"`
	InFlightFile  string       `json:"in_flight_file,omitempty"`
	InFlightBytes int          `json:"in_flight_bytes"`
	Shared        []sharedDesc `json:"shared,omitempty"`
	// StateFormat is "keyed", "operator", "none" or "opaque" (bytes that
	// are neither snapshot format; StateError says why).
	StateFormat    string        `json:"state_format"`
	StateError     string        `json:"state_error,omitempty"`
	MaxParallelism int           `json:"max_parallelism,omitempty"`
	Sections       []sectionDesc `json:"sections,omitempty"`
	// Schemas are the schemas the snapshot records of its states' types.
	Schemas []schemaDesc `json:"schemas,omitempty"`
	// Refused are the file sink's committables that do not name a part
	// file and its pending file in one directory: a restore refuses them.
	Refused []string `json:"refused_committables,omitempty"`
}

type schemaDesc struct {
	State     string `json:"state"`
	Kind      string `json:"kind"`
	Key       string `json:"key,omitempty"`
	Namespace string `json:"namespace,omitempty"`
	Value     string `json:"value,omitempty"`
	UserKey   string `json:"user_key,omitempty"`
}

type sharedDesc struct {
	Name  string `json:"name"`
	Bytes int64  `json:"bytes"`
}

type sectionDesc struct {
	State    string `json:"state"`
	Kind     string `json:"kind"`
	KeyGroup *int   `json:"key_group,omitempty"`
	Entries  int    `json:"entries"`
	Bytes    int    `json:"bytes"`
}

// describeSnapshot describes a loaded snapshot; a subtask's state that is
// not a state snapshot is shown as opaque bytes, not an error.
func describeSnapshot(info *checkpoint.Info) *snapshotDesc {
	s := info.Snapshot
	d := &snapshotDesc{Path: info.Dir, Kind: s.Kind.String(), ID: s.ID, Timestamp: s.Timestamp,
		Time: time.UnixMilli(s.Timestamp).UTC().Format("2006-01-02T15:04:05.000Z"), Finished: s.Finished,
		Operators: []operatorDesc{}}
	for i, op := range s.Operators {
		od := operatorDesc{ID: op.ID, Name: op.Name, Parallelism: op.Parallelism, MaxParallelism: op.MaxParallelism,
			Subtasks: []subtaskDesc{}}
		if op.Coordinator != nil {
			n := len(op.Coordinator)
			od.CoordinatorBytes = &n
		}
		for j, st := range op.Subtasks {
			files := info.Files[i][j]
			sd := subtaskDesc{Subtask: j, StateFile: files.State, StateBytes: len(st.State),
				InFlightFile: files.InFlight, InFlightBytes: len(st.InFlight)}
			for _, f := range files.Shared {
				sd.Shared = append(sd.Shared, sharedDesc{Name: f.Name, Bytes: f.Size})
			}
			describeState(&sd, st.State)
			sd.Refused = refusedCommittables(op.Name, &sd, st.State)
			od.Subtasks = append(od.Subtasks, sd)
		}
		d.Operators = append(d.Operators, od)
	}
	return d
}

func describeState(sd *subtaskDesc, b []byte) {
	if len(b) == 0 {
		sd.StateFormat = "none"
		return
	}
	si, err := state.DescribeSnapshot(b)
	if err != nil {
		sd.StateFormat, sd.StateError = "opaque", err.Error()
		return
	}
	sd.StateFormat = "keyed"
	if si.Operator {
		sd.StateFormat = "operator"
	}
	sd.MaxParallelism = si.MaxParallelism
	for _, sec := range si.Sections {
		sc := sectionDesc{State: sec.Name, Kind: sec.Kind, Entries: sec.Entries, Bytes: sec.Bytes}
		if sec.KeyGroup >= 0 {
			g := sec.KeyGroup
			sc.KeyGroup = &g
		}
		sd.Sections = append(sd.Sections, sc)
	}
	for _, s := range si.Schemas {
		sd.Schemas = append(sd.Schemas, schemaDesc{State: s.Name, Kind: s.Kind, Key: s.Key, Namespace: s.Namespace, Value: s.Value, UserKey: s.UserKey})
	}
}

// writeSnapshotText writes d as inspect's text output.
func writeSnapshotText(w io.Writer, d *snapshotDesc) error {
	var b strings.Builder
	fmt.Fprintf(&b, "%s %d\n", d.Kind, d.ID)
	fmt.Fprintf(&b, "  path      %s\n", d.Path)
	fmt.Fprintf(&b, "  time      %s (%d)\n", d.Time, d.Timestamp)
	fmt.Fprintf(&b, "  finished  %t\n", d.Finished)
	fmt.Fprintf(&b, "  operators %d\n", len(d.Operators))
	for _, op := range d.Operators {
		fmt.Fprintf(&b, "\noperator %s %q: parallelism %d, max parallelism %d", op.ID, op.Name, op.Parallelism, op.MaxParallelism)
		if op.CoordinatorBytes != nil {
			fmt.Fprintf(&b, ", coordinator state %d B", *op.CoordinatorBytes)
		}
		b.WriteString("\n")
		for _, st := range op.Subtasks {
			fmt.Fprintf(&b, "  subtask %d: state %d B", st.Subtask, st.StateBytes)
			switch st.StateFormat {
			case "keyed":
				fmt.Fprintf(&b, " (keyed, max parallelism %d)", st.MaxParallelism)
			case "operator":
				b.WriteString(" (operator state)")
			case "opaque":
				fmt.Fprintf(&b, " (not a state snapshot: %s)", st.StateError)
			}
			fmt.Fprintf(&b, ", in flight %d B\n", st.InFlightBytes)
			for _, r := range st.Refused {
				fmt.Fprintf(&b, "    REFUSED %s\n", r)
			}
			for _, f := range st.Shared {
				fmt.Fprintf(&b, "    shared %s %d B\n", f.Name, f.Bytes)
			}
			if len(st.Sections) == 0 {
				continue
			}
			tw := tabwriter.NewWriter(&b, 0, 0, 2, ' ', tabwriter.AlignRight)
			if st.StateFormat == "keyed" {
				fmt.Fprintf(tw, "    \tkey group\tstate\tkind\tentries\tbytes\t\n")
			} else {
				fmt.Fprintf(tw, "    \tstate\tkind\tentries\tbytes\t\n")
			}
			for _, sec := range st.Sections {
				if sec.KeyGroup != nil {
					fmt.Fprintf(tw, "    \t%d\t%s\t%s\t%d\t%d\t\n", *sec.KeyGroup, sec.State, sec.Kind, sec.Entries, sec.Bytes)
				} else {
					fmt.Fprintf(tw, "    \t%s\t%s\t%d\t%d\t\n", sec.State, sec.Kind, sec.Entries, sec.Bytes)
				}
			}
			if err := tw.Flush(); err != nil {
				return err
			}
			for _, s := range st.Schemas {
				fmt.Fprintf(&b, "    schema %s (%s):", s.State, s.Kind)
				sep := " "
				for _, f := range [][2]string{{"key", s.Key}, {"namespace", s.Namespace}, {"value", s.Value}, {"user key", s.UserKey}} {
					if f[1] != "" {
						fmt.Fprintf(&b, "%s%s %s", sep, f[0], f[1])
						sep = "; "
					}
				}
				b.WriteString("\n")
			}
		}
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// refusedCommittables returns what is wrong with the file sink committables
// an operator state of operator name holds, one line per entry a restore
// refuses (sink.CheckCommittable).
func refusedCommittables(name string, sd *subtaskDesc, b []byte) []string {
	if sd.StateFormat != "operator" {
		return nil
	}
	has := false
	for _, sec := range sd.Sections {
		has = has || sec.State == stream.FileSinkCommittables
	}
	if !has {
		return nil
	}
	store := state.NewOperatorStore(state.OperatorOptions{Name: name})
	defer store.Dispose()
	if err := store.Restore(bytes.NewReader(b)); err != nil {
		return []string{fmt.Sprintf("%s: %v", stream.FileSinkCommittables, err)}
	}
	list, err := state.GetOperatorListState(store, state.ListDescriptor[[]byte]{Name: stream.FileSinkCommittables})
	if err != nil {
		return []string{fmt.Sprintf("%s: %v", stream.FileSinkCommittables, err)}
	}
	var out []string
	for i, e := range list.Get() {
		var c sink.Committable
		err := c.UnmarshalBinary(e)
		if err == nil {
			err = sink.CheckCommittable(c)
		}
		if err != nil {
			out = append(out, fmt.Sprintf("%s entry %d (pending %q, final %q): %v", stream.FileSinkCommittables, i, c.Pending, c.Final, err))
		}
	}
	return out
}

// refusedEntries is the error of a snapshot that holds committables a
// restore refuses, once inspect listed them.
func refusedEntries(d *snapshotDesc) error {
	n := 0
	for _, op := range d.Operators {
		for _, st := range op.Subtasks {
			n += len(st.Refused)
		}
	}
	if n == 0 {
		return nil
	}
	return fmt.Errorf("%s holds %d file sink committable(s) naming files outside a sink's own parts (REFUSED above): a restore refuses them", d.Path, n)
}
