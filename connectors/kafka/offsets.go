package kafka

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"unicode/utf16"

	"github.com/twmb/franz-go/pkg/kadm"
)

// Offsets says where a partition starts (Flink's OffsetsInitializer):
// Earliest, Latest, Committed or Timestamp. The enumerator resolves it to
// an offset when it discovers the partition, so a split always holds a
// concrete offset.
type Offsets struct {
	kind     offsetKind
	millis   int64
	fallback offsetKind
}

type offsetKind uint8

const (
	earliest offsetKind = iota
	latest
	committed
	timestamp
)

// Earliest starts at the log start of each partition.
func Earliest() Offsets { return Offsets{kind: earliest} }

// Latest starts at the end of each partition when it is discovered: only
// records produced after that are read (the last stable offset under
// read_committed, the high watermark otherwise).
func Latest() Offsets { return Offsets{kind: latest} }

// Committed starts at the offsets the source's group committed; a
// partition without a committed offset starts at fallback (Earliest or
// Latest).
func Committed(fallback Offsets) Offsets {
	fb := earliest
	if fallback.kind == latest {
		fb = latest
	}
	return Offsets{kind: committed, fallback: fb}
}

// Timestamp starts at the first record whose timestamp is at or after ms
// (milliseconds since the epoch), or at the end when there is none.
func Timestamp(ms int64) Offsets { return Offsets{kind: timestamp, millis: ms} }

// String names the start as ParseOffsets reads it.
func (o Offsets) String() string {
	switch o.kind {
	case latest:
		return "latest"
	case committed:
		if o.fallback == latest {
			return "committed-or-latest"
		}
		return "committed"
	case timestamp:
		return "timestamp:" + strconv.FormatInt(o.millis, 10)
	}
	return "earliest"
}

// ParseOffsets reads a start position as a --start flag holds it:
// earliest, latest, committed (falling back to earliest),
// committed-or-latest, or timestamp:MILLIS.
func ParseOffsets(s string) (Offsets, error) {
	switch s {
	case "earliest":
		return Earliest(), nil
	case "latest":
		return Latest(), nil
	case "committed":
		return Committed(Earliest()), nil
	case "committed-or-latest":
		return Committed(Latest()), nil
	}
	if ms, ok := strings.CutPrefix(s, "timestamp:"); ok {
		v, err := strconv.ParseInt(ms, 10, 64)
		if err == nil && v >= 0 {
			return Timestamp(v), nil
		}
	}
	return Offsets{}, fmt.Errorf("%w: start %q (want earliest, latest, committed, committed-or-latest or timestamp:MILLIS)", ErrConfig, s)
}

// partition is one partition of a topic.
type partition struct {
	Topic     string
	Partition int32
}

// splitID is the id of a partition's split, as Flink's KafkaPartitionSplit
// names it: topic-partition.
func (p partition) splitID() string { return p.Topic + "-" + strconv.Itoa(int(p.Partition)) }

// parseSplitID reads what splitID wrote; a topic may hold '-', the
// partition is after the last one.
func parseSplitID(id string) (partition, error) {
	i := strings.LastIndexByte(id, '-')
	if i <= 0 {
		return partition{}, fmt.Errorf("connectors/kafka: split %q is not topic-partition", id)
	}
	digits := id[i+1:]
	n, err := strconv.ParseInt(digits, 10, 32)
	if err != nil || n < 0 || strconv.Itoa(int(n)) != digits {
		return partition{}, fmt.Errorf("connectors/kafka: split %q is not topic-partition", id)
	}
	return partition{id[:i], int32(n)}, nil
}

// owner is the reader that reads p among n, as Flink's
// KafkaSourceEnumerator.getSplitOwner: a topic's partitions go round robin
// from a start that the topic name's Java hash code picks.
func owner(p partition, n int) int {
	start := int((javaHash(p.Topic) * 31 & 0x7FFFFFFF) % int32(n))
	return (start + int(p.Partition)) % n
}

// javaHash is Java's String.hashCode over the UTF-16 code units of s.
func javaHash(s string) int32 {
	var h int32
	for _, u := range utf16.Encode([]rune(s)) {
		h = 31*h + int32(u)
	}
	return h
}

// offsetsOf resolves o for partitions ps: one offset per partition.
// isolation 1 lists the end as the last stable offset (read_committed).
func resolveOffsets(ctx context.Context, adm *kadm.Client, o Offsets, group string, readCommitted bool, ps []partition) (map[partition]int64, error) {
	topics := topicsOf(ps)
	out := make(map[partition]int64, len(ps))
	var listed kadm.ListedOffsets
	var err error
	switch o.kind {
	case earliest:
		listed, err = adm.ListStartOffsets(ctx, topics...)
	case latest:
		listed, err = listEnd(ctx, adm, readCommitted, topics)
	case timestamp:
		listed, err = adm.ListOffsetsAfterMilli(ctx, o.millis, topics...)
	case committed:
		if group == "" {
			return nil, fmt.Errorf("%w: committed offsets need a group", ErrConfig)
		}
		got, ferr := adm.FetchOffsetsForTopics(ctx, group, topics...)
		if ferr != nil {
			return nil, fmt.Errorf("connectors/kafka: committed offsets of group %s: %w", group, ferr)
		}
		var missing []partition
		for _, p := range ps {
			r, ok := got.Lookup(p.Topic, p.Partition)
			if ok && r.Err == nil && r.At >= 0 {
				out[p] = r.At
			} else {
				missing = append(missing, p)
			}
		}
		if len(missing) == 0 {
			return out, nil
		}
		rest, err := resolveOffsets(ctx, adm, Offsets{kind: o.fallback}, group, readCommitted, missing)
		for p, v := range rest {
			out[p] = v
		}
		return out, err
	}
	if err != nil {
		return nil, fmt.Errorf("connectors/kafka: list %s offsets of %s: %w", o, strings.Join(topics, ","), err)
	}
	for _, p := range ps {
		l, ok := listed.Lookup(p.Topic, p.Partition)
		if !ok {
			return nil, fmt.Errorf("connectors/kafka: list %s offsets: no answer for %s", o, p.splitID())
		}
		if l.Err != nil {
			return nil, fmt.Errorf("connectors/kafka: list %s offsets of %s: %w", o, p.splitID(), l.Err)
		}
		out[p] = l.Offset
	}
	return out, nil
}

// listEnd lists the end offsets: the last stable offsets under
// read_committed, the high watermarks otherwise.
func listEnd(ctx context.Context, adm *kadm.Client, readCommitted bool, topics []string) (kadm.ListedOffsets, error) {
	if readCommitted {
		return adm.ListCommittedOffsets(ctx, topics...)
	}
	return adm.ListEndOffsets(ctx, topics...)
}

func topicsOf(ps []partition) []string {
	var topics []string
	seen := map[string]bool{}
	for _, p := range ps {
		if !seen[p.Topic] {
			seen[p.Topic] = true
			topics = append(topics, p.Topic)
		}
	}
	return topics
}

// errNoTopic is wrapped by the error of a subscribed topic that does not
// exist.
var errNoTopic = errors.New("connectors/kafka: topic does not exist")
