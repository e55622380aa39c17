package optimizer

import (
	"encoding/json"
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"
)

// This file renders a planned Plan three ways: Text (an indented tree for
// people and golden tests), JSON (for tools) and DOT (for Graphviz). All three
// read only the model: they are stable for a given plan (no maps, no pointers,
// and no timings unless the plan carries Actual values).

// Text returns the plan as an indented tree, read from the sinks (the nodes no
// other node consumes, in plan order) down to the sources, one line per
// operator:
//
//	#4 Sink "collect" p=1 est(rows=12 bytes=768) cost(net=0 disk=0 cpu=12) total(net=1.2M disk=0 cpu=3.4K)
//	└─ in0:HASH/PIPELINED #3 Reduce "sum" p=4 local=HASH_AGGREGATE combine est(...) cost(...) total(...)
//	   │  -- combiner before the shuffle
//	   └─ in0:FORWARD/PIPELINED #2 Source "lines" p=4 est(rows=? bytes=?) ...
//
// An operator line holds the node's id, kind, quoted name, parallelism, its
// driver strategy (local=, omitted when NONE), "combine" when a combiner runs,
// the planner's output estimate (rows and bytes in human units, "?" when
// unknown), its own cost and its cumulative cost (network, disk, CPU). When
// the node ran (Actual set, EXPLAIN ANALYZE) the line goes on with
// "| actual rows=... time=... mem=... spilled=..." (rows exact, memory and
// bytes spilled in human units), "variant=..." naming the physical variants
// its subtasks ran (Actual.Variant, see Variants) and "replanned" when the
// adaptive planner changed it. A child line starts with the edge it hangs on:
// in<i>:<ship>/<exchange>, then /<input local strategy> when it is not NONE.
// The planner's notes follow their operator as "-- note" lines. A node
// consumed more than once is printed in full where it is first reached and
// elsewhere as "#id (see above)". Missing decisions (an unplanned plan) show
// as "?".
func (p *Plan) Text() string {
	var b strings.Builder
	printed := make(map[*Node]bool, len(p.Nodes))
	for _, root := range p.roots() {
		p.textNode(&b, root, "", "", printed)
	}
	return b.String()
}

// roots returns the nodes no node of p consumes, in plan order.
func (p *Plan) roots() []*Node {
	consumed := make(map[*Node]bool, len(p.Nodes))
	for _, n := range p.Nodes {
		for _, in := range n.Inputs {
			consumed[in] = true
		}
	}
	var roots []*Node
	for _, n := range p.Nodes {
		if !consumed[n] {
			roots = append(roots, n)
		}
	}
	return roots
}

// textNode writes n's line after head (the branch and edge that lead to it),
// then its notes and inputs, each line starting with indent.
func (p *Plan) textNode(b *strings.Builder, n *Node, head, indent string, printed map[*Node]bool) {
	b.WriteString(head)
	if printed[n] {
		fmt.Fprintf(b, "#%d (see above)\n", n.ID)
		return
	}
	printed[n] = true
	b.WriteString(operatorLine(n))
	b.WriteByte('\n')
	bar := "   "
	if len(n.Inputs) > 0 {
		bar = "│  "
	}
	for _, note := range n.Decision.Notes {
		fmt.Fprintf(b, "%s%s-- %s\n", indent, bar, oneLine(note))
	}
	for i, in := range n.Inputs {
		branch, next := "├─ ", "│  "
		if i == len(n.Inputs)-1 {
			branch, next = "└─ ", "   "
		}
		p.textNode(b, in, indent+branch+edgeText(n, i)+" ", indent+next, printed)
	}
}

// operatorLine is n's line of Text, without the tree drawing.
func operatorLine(n *Node) string {
	var b strings.Builder
	d := &n.Decision
	fmt.Fprintf(&b, "#%d %s %q p=%d", n.ID, n.Kind, n.Name, n.Parallelism)
	if d.Local != NoLocal {
		fmt.Fprintf(&b, " local=%s", d.Local)
	}
	if d.Combine {
		b.WriteString(" combine")
	}
	fmt.Fprintf(&b, " est(rows=%s bytes=%s)", humanCount(d.Estimate.Rows), humanCount(d.Estimate.Bytes))
	fmt.Fprintf(&b, " cost(%s) total(%s)", costsText(d.Cost), costsText(d.Cumulative))
	if a := n.Actual; a != nil {
		fmt.Fprintf(&b, " | actual rows=%d time=%s mem=%s spilled=%s",
			a.Rows, durationText(a.Time), humanCount(a.PeakMemory), humanCount(a.Spilled))
		if a.Variant != "" {
			fmt.Fprintf(&b, " variant=%s", a.Variant)
		}
		if a.KeyFilter != "" {
			fmt.Fprintf(&b, " key-filter=%s removed=%d", a.KeyFilter, a.KeyFiltered)
		}
		if a.Replanned {
			b.WriteString(" replanned")
		}
	}
	return b.String()
}

// edgeText is input i of n as Text shows it: "in0:HASH/PIPELINED/SORT".
func edgeText(n *Node, i int) string {
	s := fmt.Sprintf("in%d:%s/%s", i, shipName(n, i), exchangeName(n, i))
	if l := inputLocal(n, i); l != LocalNone {
		s += "/" + l.String()
	}
	return s
}

func costsText(c Costs) string {
	return fmt.Sprintf("net=%s disk=%s cpu=%s", human(c.Network), human(c.Disk), human(c.CPU))
}

// shipName is the ship strategy of n's input i, "?" when undecided.
func shipName(n *Node, i int) string {
	if i < len(n.Decision.Ship) {
		return n.Decision.Ship[i].String()
	}
	return "?"
}

// exchangeName is the exchange mode of n's input i, "?" when undecided.
func exchangeName(n *Node, i int) string {
	if i < len(n.Decision.Exchange) {
		return n.Decision.Exchange[i].String()
	}
	return "?"
}

// inputLocal is the local strategy of n's input i (LocalNone when InputLocal
// is nil or short).
func inputLocal(n *Node, i int) InputLocal {
	if i < len(n.Decision.InputLocal) {
		return n.Decision.InputLocal[i]
	}
	return LocalNone
}

// humanCount formats a count or a size in bytes in decimal units ("1.2K",
// "3.4M"), "?" when negative (unknown).
func humanCount(v int64) string {
	if v < 0 {
		return "?"
	}
	return human(float64(v))
}

// human formats v with one decimal and a decimal unit suffix (K, M, G, T, P,
// E) from 1000 on, dropping a ".0"; "?" for NaN and negative values.
func human(v float64) string {
	if math.IsNaN(v) || v < 0 {
		return "?"
	}
	if math.IsInf(v, 1) {
		return "inf"
	}
	if v < 1000 {
		return trimZero(strconv.FormatFloat(v, 'f', 1, 64))
	}
	const units = "KMGTPE"
	u := -1
	for v >= 999.95 && u < len(units)-1 {
		v /= 1000
		u++
	}
	return trimZero(strconv.FormatFloat(v, 'f', 1, 64)) + string(units[u])
}

func trimZero(s string) string { return strings.TrimSuffix(s, ".0") }

// durationText rounds d to a precision a person reads: microseconds under a
// millisecond, milliseconds under a minute, seconds above.
func durationText(d time.Duration) string {
	switch {
	case d < time.Millisecond:
		return d.Round(time.Microsecond).String()
	case d < time.Minute:
		return d.Round(time.Millisecond).String()
	}
	return d.Round(time.Second).String()
}

// oneLine replaces line breaks so that a note stays on its line.
func oneLine(s string) string {
	return strings.NewReplacer("\r\n", " ", "\n", " ", "\r", " ").Replace(s)
}

// JSON returns the plan as indented JSON: {"nodes": [...]}, the nodes in plan
// order, each with its id, operator (kind), name, driver_strategy,
// parallelism, combine, estimates {rows, bytes} (null when unknown), costs and
// cumulative_costs {network, disk, cpu}, notes, inputs [{id, ship_strategy,
// local_strategy, exchange_mode}] and, when the program ran, actual {rows,
// time_ms, peak_memory, spilled, replanned}. An undecided ship strategy or
// exchange mode is "?".
func (p *Plan) JSON() ([]byte, error) {
	out := jsonPlan{Nodes: make([]jsonNode, 0, len(p.Nodes))}
	for _, n := range p.Nodes {
		d := &n.Decision
		jn := jsonNode{
			ID:              n.ID,
			Operator:        n.Kind.String(),
			Name:            n.Name,
			DriverStrategy:  d.Local.String(),
			Parallelism:     n.Parallelism,
			Combine:         d.Combine,
			Estimates:       jsonEstimate{Rows: known(d.Estimate.Rows), Bytes: known(d.Estimate.Bytes)},
			Costs:           jsonCosts(d.Cost),
			CumulativeCosts: jsonCosts(d.Cumulative),
			Notes:           append([]string{}, d.Notes...),
			Inputs:          make([]jsonInput, len(n.Inputs)),
		}
		for i, in := range n.Inputs {
			jn.Inputs[i] = jsonInput{ID: in.ID, ShipStrategy: shipName(n, i),
				LocalStrategy: inputLocal(n, i).String(), ExchangeMode: exchangeName(n, i)}
		}
		if a := n.Actual; a != nil {
			jn.Actual = &jsonActual{Rows: a.Rows, TimeMS: float64(a.Time) / float64(time.Millisecond),
				PeakMemory: a.PeakMemory, Spilled: a.Spilled, Replanned: a.Replanned, Variant: a.Variant,
				KeyFilter: a.KeyFilter, KeyFiltered: a.KeyFiltered}
		}
		out.Nodes = append(out.Nodes, jn)
	}
	b, err := json.MarshalIndent(out, "", "  ")
	if err != nil {
		return nil, fmt.Errorf("optimizer: plan as JSON: %w", err)
	}
	return append(b, '\n'), nil
}

type jsonPlan struct {
	Nodes []jsonNode `json:"nodes"`
}

type jsonNode struct {
	ID              int          `json:"id"`
	Operator        string       `json:"operator"`
	Name            string       `json:"name"`
	DriverStrategy  string       `json:"driver_strategy"`
	Parallelism     int          `json:"parallelism"`
	Combine         bool         `json:"combine"`
	Estimates       jsonEstimate `json:"estimates"`
	Costs           jsonCost     `json:"costs"`
	CumulativeCosts jsonCost     `json:"cumulative_costs"`
	Notes           []string     `json:"notes"`
	Inputs          []jsonInput  `json:"inputs"`
	Actual          *jsonActual  `json:"actual,omitempty"`
}

type jsonEstimate struct {
	Rows  *int64 `json:"rows"`
	Bytes *int64 `json:"bytes"`
}

type jsonCost struct {
	Network float64 `json:"network"`
	Disk    float64 `json:"disk"`
	CPU     float64 `json:"cpu"`
}

func jsonCosts(c Costs) jsonCost { return jsonCost{Network: c.Network, Disk: c.Disk, CPU: c.CPU} }

type jsonInput struct {
	ID            int    `json:"id"`
	ShipStrategy  string `json:"ship_strategy"`
	LocalStrategy string `json:"local_strategy"`
	ExchangeMode  string `json:"exchange_mode"`
}

type jsonActual struct {
	Rows       int64   `json:"rows"`
	TimeMS     float64 `json:"time_ms"`
	PeakMemory int64   `json:"peak_memory"`
	Spilled    int64   `json:"spilled"`
	Replanned  bool    `json:"replanned"`
	Variant    string  `json:"variant,omitempty"`
	// KeyFilter: the key column a runtime join filter tested in a source
	KeyFilter   string `json:"key_filter,omitempty"`
	KeyFiltered int64  `json:"key_filtered,omitempty"`
}

// known returns &v, or nil (JSON null) when v is negative (unknown).
func known(v int64) *int64 {
	if v < 0 {
		return nil
	}
	return &v
}

// DOT returns the plan as a Graphviz digraph, sources at the bottom: one box
// per operator, named n<id>, labelled with its id and kind, name, parallelism,
// driver strategy, estimates and, when the program ran, its actuals; and one
// edge per input, from the input to its consumer, labelled with the input's
// index, ship strategy and exchange mode (and its local strategy when not
// NONE). Blocking edges are dashed, broadcast edges bold.
func (p *Plan) DOT() string {
	var b strings.Builder
	b.WriteString("digraph plan {\n")
	b.WriteString("  rankdir=BT;\n")
	b.WriteString("  node [shape=box, fontname=\"monospace\"];\n")
	b.WriteString("  edge [fontname=\"monospace\"];\n")
	for _, n := range p.Nodes {
		d := &n.Decision
		lines := []string{
			fmt.Sprintf("#%d %s", n.ID, n.Kind),
			n.Name,
			fmt.Sprintf("p=%d", n.Parallelism),
		}
		if d.Local != NoLocal || d.Combine {
			s := d.Local.String()
			if d.Combine {
				s += " combine"
			}
			lines = append(lines, s)
		}
		lines = append(lines, fmt.Sprintf("est rows=%s bytes=%s", humanCount(d.Estimate.Rows), humanCount(d.Estimate.Bytes)))
		if a := n.Actual; a != nil {
			s := fmt.Sprintf("actual rows=%d time=%s mem=%s spilled=%s",
				a.Rows, durationText(a.Time), humanCount(a.PeakMemory), humanCount(a.Spilled))
			if a.Variant != "" {
				s += " variant=" + a.Variant
			}
			if a.KeyFilter != "" {
				s += fmt.Sprintf(" key-filter=%s removed=%d", a.KeyFilter, a.KeyFiltered)
			}
			if a.Replanned {
				s += " replanned"
			}
			lines = append(lines, s)
		}
		fmt.Fprintf(&b, "  n%d [label=%s];\n", n.ID, dotLabel(lines))
	}
	for _, n := range p.Nodes {
		for i, in := range n.Inputs {
			label := fmt.Sprintf("in%d: %s / %s", i, shipName(n, i), exchangeName(n, i))
			if l := inputLocal(n, i); l != LocalNone {
				label += " / " + l.String()
			}
			var styles []string
			if i < len(n.Decision.Exchange) && n.Decision.Exchange[i] == Blocking {
				styles = append(styles, "dashed")
			}
			if i < len(n.Decision.Ship) && n.Decision.Ship[i] == Broadcast {
				styles = append(styles, "bold")
			}
			fmt.Fprintf(&b, "  n%d -> n%d [label=%s", in.ID, n.ID, dotString(label))
			if len(styles) > 0 {
				fmt.Fprintf(&b, ", style=%s", dotString(strings.Join(styles, ",")))
			}
			b.WriteString("];\n")
		}
	}
	b.WriteString("}\n")
	return b.String()
}

// dotLabel joins lines into one quoted DOT label, a line each.
func dotLabel(lines []string) string {
	esc := make([]string, len(lines))
	for i, l := range lines {
		esc[i] = dotEscape(l)
	}
	return `"` + strings.Join(esc, `\n`) + `"`
}

// dotString quotes s as a DOT string.
func dotString(s string) string { return `"` + dotEscape(s) + `"` }

// dotEscape escapes s for the inside of a quoted DOT string: backslashes and
// quotes are escaped and line breaks become DOT's \n, so that no name can end
// the string or start an escape sequence of its own.
func dotEscape(s string) string {
	return strings.NewReplacer(`\`, `\\`, `"`, `\"`, "\r\n", `\n`, "\n", `\n`, "\r", `\n`).Replace(s)
}
