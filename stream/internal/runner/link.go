package runner

import (
	"context"
	"errors"
	"fmt"

	"github.com/weirdata/weir/flow"
)

// Spread places a job's subtasks in several processes (stream.Spread):
// subtask i of every task runs in the part that holds slot i modulo the
// slots of all. Part 0 runs the checkpoint coordinator and the sources'
// split enumerators; the other parts reach them over a link of two
// control channels on the Transport.
type Spread struct {
	Part      int
	Slots     []int
	Transport func(part func(v, i int) int) (flow.Transport, error)
}

// slotPart returns the part that holds slot i modulo the total.
func (s *Spread) slotPart(i int) int { return flow.SlotPart(s.Slots, i) }

// part returns the part that runs subtask i of flow vertex v.
func (s *Spread) part(v, i int) int {
	if v == flow.LinkVertex {
		return i
	}
	return s.slotPart(i)
}

// Here reports whether subtask i of every task runs in this part.
func (s *Spread) Here(i int) bool { return s.slotPart(i) == s.Part }

// openLink opens this part's end of the control channels: handle gets
// each message decoded, broken the link's first failure.
func openLink(ctx context.Context, s *Spread, t flow.Transport, handle func(int, *msg) error, broken func(error)) (*flow.Link, error) {
	l, err := flow.OpenLink(ctx, s.Part, len(s.Slots), t, flow.LinkHandlers{
		Message: func(from int, b []byte) error {
			m, err := decode(b)
			if err != nil {
				return err
			}
			return handle(from, m)
		},
		Broken: broken,
	})
	if err != nil {
		return nil, fmt.Errorf("stream: %w", err)
	}
	return l, nil
}

// errPartEnded is why a part's flow job ends when another part ended the
// job.
var errPartEnded = errors.New("stream: another part of the spread job ended it")
