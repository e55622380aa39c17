package stream

import (
	"encoding/json"
	"fmt"
	"strings"

	"github.com/weirdata/weir/stream/checkpoint"
	"github.com/weirdata/weir/stream/internal/graph"
)

// Plan is a program's stream graph as it runs (Flink's job graph): its
// tasks, each a chain of operators run by one subtask per parallel
// instance, and the edges between operators, chained inside a task or
// partitioned between tasks. Env.Plan returns it; Options.Planned receives
// it before a job starts.
type Plan struct {
	// Mode is STREAMING or BATCH: the mode the job runs in (Automatic
	// resolved).
	Mode  string     `json:"mode"`
	Tasks []PlanTask `json:"tasks"`
	Edges []PlanEdge `json:"edges"`
	// Checkpointing is how the job checkpoints, nil when it does not.
	Checkpointing *PlanCheckpointing `json:"checkpointing,omitempty"`
}

// PlanCheckpointing is a job's checkpoint configuration (Flink's
// CheckpointConfig, with its defaults filled in) and where its state lives.
type PlanCheckpointing struct {
	Interval  string `json:"interval"`
	Mode      string `json:"mode"` // EXACTLY_ONCE or AT_LEAST_ONCE
	Unaligned bool   `json:"unaligned,omitempty"`
	// AlignedTimeout, with Unaligned, is the alignment a checkpoint starts
	// with before its barriers overtake records ("0s": unaligned at once).
	AlignedTimeout string `json:"alignedTimeout,omitempty"`
	Timeout        string `json:"timeout"`
	MinPause       string `json:"minPause"`
	MaxConcurrent  int    `json:"maxConcurrent"`
	// StateBackend is heap or disk; Incremental says a disk backend's
	// checkpoints store only the files new since the last one.
	StateBackend string `json:"stateBackend"`
	Incremental  bool   `json:"incremental,omitempty"`
	// Storage is the checkpoint directory, or "memory".
	Storage string `json:"storage"`
}

// PlanTask is one task: the vertex that runs a chain.
type PlanTask struct {
	ID          int            `json:"id"`
	Name        string         `json:"name"` // its head operator's name
	Parallelism int            `json:"parallelism"`
	Operators   []PlanOperator `json:"operators"` // head first, in the order they are built
}

// PlanOperator is one operator (a source, a transformation or a sink).
type PlanOperator struct {
	ID   int    `json:"id"` // the node's id: its position in the program
	Name string `json:"name"`
	// Source says the operator reads a source; Bounded that the source ends.
	Source  bool `json:"source,omitempty"`
	Bounded bool `json:"bounded,omitempty"`
	// MaxParallelism is the key groups of a keyed operator, 0 for others.
	MaxParallelism int `json:"maxParallelism,omitempty"`
}

// PlanEdge is one edge between operators: From's output (Output: "" the
// main one, else a side output's tag) into input Input of To. A chained
// edge stays in its task; the others are partitioned between tasks.
type PlanEdge struct {
	From    int    `json:"from"`
	To      int    `json:"to"`
	Input   int    `json:"input"`
	Output  string `json:"output,omitempty"`
	Chained bool   `json:"chained"`
	// Partitioning is Flink's name of how records go to the consumer's
	// subtasks: FORWARD, REBALANCE, BROADCAST, SHUFFLE or HASH (keyBy);
	// FEEDBACK for an iteration's tail into its head (subtask i to subtask
	// i, through the in-process feedback queue), the head's last input.
	Partitioning string `json:"partitioning"`
}

// Plan returns the program's stream graph: parallelisms and partitionings
// resolved and operators chained as Execute would run them. It starts
// nothing and opens no input.
func (e *Env) Plan() (*Plan, error) {
	if err := e.check(); err != nil {
		return nil, err
	}
	r, err := graph.Resolve(e.p, e.graphOptions())
	if err != nil {
		return nil, err
	}
	p := &Plan{Mode: "STREAMING"}
	if r.Batch {
		p.Mode = "BATCH"
	} else if c := e.checkpointConfig(); c != nil {
		p.Checkpointing = planCheckpointing(c, e.opts)
	}
	task := map[*graph.Node]int{}
	for _, n := range e.p.Nodes {
		op := PlanOperator{ID: n.ID, Name: n.Name, Source: n.Source, Bounded: n.Bounded, MaxParallelism: r.MaxP[n]}
		if len(n.Inputs) == 1 && r.Chained(n.Inputs[0]) {
			ti := task[n.Inputs[0].From]
			task[n] = ti
			p.Tasks[ti].Operators = append(p.Tasks[ti].Operators, op)
			continue
		}
		task[n] = len(p.Tasks)
		p.Tasks = append(p.Tasks, PlanTask{ID: len(p.Tasks), Name: n.Name, Parallelism: r.Par[n], Operators: []PlanOperator{op}})
	}
	for _, n := range e.p.Nodes {
		for i, in := range n.Inputs {
			p.Edges = append(p.Edges, PlanEdge{From: in.From.ID, To: n.ID, Input: i, Output: in.Port,
				Chained: r.Chained(in), Partitioning: r.Part[in].String()})
		}
		if it := n.Iter; it != nil && it.Tail != nil {
			p.Edges = append(p.Edges, PlanEdge{From: it.Tail.ID, To: n.ID, Input: len(n.Inputs), Partitioning: "FEEDBACK"})
		}
	}
	return p, nil
}

func planCheckpointing(c *CheckpointConfig, o Options) *PlanCheckpointing {
	pc := &PlanCheckpointing{Interval: c.Interval.String(), Mode: c.Mode.String(), Unaligned: c.Unaligned,
		Timeout: c.Timeout.String(), MinPause: c.MinPauseBetweenCheckpoints.String(),
		MaxConcurrent: c.MaxConcurrentCheckpoints, StateBackend: o.StateBackend.String(), Storage: "memory"}
	if c.Unaligned {
		pc.AlignedTimeout = c.AlignedCheckpointTimeout.String()
	}
	if d, ok := c.Storage.(*checkpoint.Dir); ok {
		pc.Storage = d.Path()
		pc.Incremental = o.Incremental && o.StateBackend == DiskBackend
	}
	return pc
}

// String returns the configuration on one line:
//
//	checkpoints every 1s EXACTLY_ONCE, timeout 10m0s, min pause 0s, max concurrent 1; state disk incremental; storage chk
func (c *PlanCheckpointing) String() string {
	var b strings.Builder
	fmt.Fprintf(&b, "checkpoints every %s %s", c.Interval, c.Mode)
	if c.Unaligned {
		fmt.Fprintf(&b, " unaligned (after %s aligned)", c.AlignedTimeout)
	}
	fmt.Fprintf(&b, ", timeout %s, min pause %s, max concurrent %d; state %s", c.Timeout, c.MinPause, c.MaxConcurrent, c.StateBackend)
	if c.Incremental {
		b.WriteString(" incremental")
	}
	fmt.Fprintf(&b, "; storage %s", c.Storage)
	return b.String()
}

// taskOf returns the task that runs operator id.
func (p *Plan) taskOf(id int) int {
	for _, t := range p.Tasks {
		for _, o := range t.Operators {
			if o.ID == id {
				return t.ID
			}
		}
	}
	return -1
}

// Text returns the plan one line per task and per operator, the sources
// first: a task with its parallelism, then each of its operators with the
// edges into it.
//
//	STREAMING, 2 tasks
//	task 0 "FromSlice" p=1
//	  #0 FromSlice source bounded
//	  #1 FlatMap <- #0 FORWARD chained
//	task 1 "Sum" p=2
//	  #2 Sum keyed maxp=128 <- #1 HASH from task 0
func (p *Plan) Text() string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s, %d tasks\n", p.Mode, len(p.Tasks))
	if c := p.Checkpointing; c != nil {
		b.WriteString(c.String() + "\n")
	}
	for _, t := range p.Tasks {
		fmt.Fprintf(&b, "task %d %q p=%d\n", t.ID, t.Name, t.Parallelism)
		for _, o := range t.Operators {
			fmt.Fprintf(&b, "  #%d %s", o.ID, o.Name)
			if o.Source {
				b.WriteString(" source")
				if o.Bounded {
					b.WriteString(" bounded")
				}
			}
			if o.MaxParallelism > 0 {
				fmt.Fprintf(&b, " keyed maxp=%d", o.MaxParallelism)
			}
			for _, e := range p.Edges {
				if e.To != o.ID {
					continue
				}
				fmt.Fprintf(&b, " <- #%d", e.From)
				if e.Output != "" {
					fmt.Fprintf(&b, "[%s]", e.Output)
				}
				b.WriteString(" " + e.Partitioning)
				if e.Chained {
					b.WriteString(" chained")
				} else {
					fmt.Fprintf(&b, " from task %d", p.taskOf(e.From))
				}
			}
			b.WriteByte('\n')
		}
	}
	return b.String()
}

// JSON returns the plan as indented JSON, the fields of Plan.
func (p *Plan) JSON() ([]byte, error) {
	b, err := json.MarshalIndent(p, "", "  ")
	if err != nil {
		return nil, fmt.Errorf("stream: plan: %w", err)
	}
	return append(b, '\n'), nil
}

// DOT returns the plan as a Graphviz digraph, sources at the top: one
// cluster per task labelled with its id and parallelism, one box per
// operator (n<id>), and one arrow per edge labelled with its partitioning;
// chained edges are dashed, edges between tasks bold.
func (p *Plan) DOT() string {
	var b strings.Builder
	b.WriteString("digraph stream {\n")
	b.WriteString("  node [shape=box, fontname=\"monospace\"];\n")
	b.WriteString("  edge [fontname=\"monospace\"];\n")
	if c := p.Checkpointing; c != nil {
		fmt.Fprintf(&b, "  label=%s;\n  labelloc=b;\n", dotQuote(c.String()))
	}
	for _, t := range p.Tasks {
		fmt.Fprintf(&b, "  subgraph cluster_%d {\n", t.ID)
		fmt.Fprintf(&b, "    label=%s;\n", dotQuote(fmt.Sprintf("task %d p=%d", t.ID, t.Parallelism)))
		for _, o := range t.Operators {
			label := fmt.Sprintf("#%d %s", o.ID, o.Name)
			if o.MaxParallelism > 0 {
				label += fmt.Sprintf("\nkeyed maxp=%d", o.MaxParallelism)
			}
			fmt.Fprintf(&b, "    n%d [label=%s];\n", o.ID, dotQuote(label))
		}
		b.WriteString("  }\n")
	}
	for _, e := range p.Edges {
		label := e.Partitioning
		if e.Output != "" {
			label = e.Output + ": " + label
		}
		style := "bold"
		if e.Chained {
			style = "dashed"
		}
		fmt.Fprintf(&b, "  n%d -> n%d [label=%s, style=%s];\n", e.From, e.To, dotQuote(label), style)
	}
	b.WriteString("}\n")
	return b.String()
}

// dotQuote quotes s as a DOT string: backslashes and quotes escaped, line
// breaks as DOT's \n.
func dotQuote(s string) string {
	s = strings.ReplaceAll(s, `\`, `\\`)
	s = strings.ReplaceAll(s, `"`, `\"`)
	s = strings.ReplaceAll(s, "\n", `\n`)
	return `"` + s + `"`
}
