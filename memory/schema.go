package memory

import (
	"encoding/binary"
	"errors"
	"fmt"
	"reflect"
	"strings"
)

// ErrSchema is wrapped by ParseSchema's errors for bytes SchemaOf could not
// have written.
var ErrSchema = errors.New("memory: bad schema")

// A schema is the shape of a type as the codec serializes it: kinds, struct
// field names, array lengths. Snapshots of state record it next to the
// serialized values, so that a later program whose type gained or lost
// struct fields reads them through a Migration. Type names are not part of
// it: a named type and its underlying type have one schema.
//
// Encoding: one node per type, a kind byte and then
//
//	bool, numbers, string, time: nothing
//	array: uvarint length, the element's node
//	slice, pointer: the element's node
//	struct: uvarint field count, then per field uvarint name length, name, node
//	ref: uvarint depth, the enclosing struct it refers to (recursive types)
const (
	schemaTime   = 64 // time.Time and types defined on it
	schemaRef    = 65 // a struct enclosing this node, by depth
	maxSchemaLen = 1 << 20
)

// SchemaOf returns the schema of T's serialized form; types NewCodec rejects
// get an error naming the field.
func SchemaOf[T any]() ([]byte, error) {
	return schemaOf(reflect.TypeFor[T]())
}

func schemaOf(t reflect.Type) ([]byte, error) {
	if _, err := programFor(t); err != nil {
		return nil, err
	}
	return appendSchema(nil, t, nil), nil
}

// appendSchema appends t's node; stack holds the structs enclosing it.
func appendSchema(dst []byte, t reflect.Type, stack []reflect.Type) []byte {
	if isTime(t) {
		return append(dst, schemaTime)
	}
	switch t.Kind() {
	case reflect.Array:
		dst = append(dst, byte(reflect.Array))
		dst = binary.AppendUvarint(dst, uint64(t.Len()))
		return appendSchema(dst, t.Elem(), stack)
	case reflect.Slice, reflect.Pointer:
		dst = append(dst, byte(t.Kind()))
		return appendSchema(dst, t.Elem(), stack)
	case reflect.Struct:
		for i := len(stack) - 1; i >= 0; i-- {
			if stack[i] == t {
				dst = append(dst, schemaRef)
				return binary.AppendUvarint(dst, uint64(len(stack)-1-i))
			}
		}
		stack = append(stack, t)
		dst = append(dst, byte(reflect.Struct))
		dst = binary.AppendUvarint(dst, uint64(t.NumField()))
		for i := 0; i < t.NumField(); i++ {
			f := t.Field(i)
			dst = binary.AppendUvarint(dst, uint64(len(f.Name)))
			dst = append(dst, f.Name...)
			dst = appendSchema(dst, f.Type, stack)
		}
		return dst
	}
	return append(dst, byte(t.Kind()))
}

// schemaNode is a parsed schema node.
type schemaNode struct {
	kind   reflect.Kind // or schemaTime, schemaRef
	n      int          // array length; ref depth
	elem   *schemaNode
	fields []schemaField
}

type schemaField struct {
	name string
	node *schemaNode
}

// ParseSchema checks that b is a schema SchemaOf could have written and
// returns its text form (Go-like: "struct { A int64; B []string }").
func ParseSchema(b []byte) (string, error) {
	n, err := parseSchema(b)
	if err != nil {
		return "", err
	}
	var sb strings.Builder
	n.format(&sb)
	return sb.String(), nil
}

func parseSchema(b []byte) (*schemaNode, error) {
	if len(b) > maxSchemaLen {
		return nil, fmt.Errorf("%w: %d bytes", ErrSchema, len(b))
	}
	p := schemaParser{b: b}
	n := p.node(0)
	if p.err == nil && p.pos != len(b) {
		p.fail("%d bytes after the schema", len(b)-p.pos)
	}
	if p.err != nil {
		return nil, p.err
	}
	return n, nil
}

type schemaParser struct {
	b   []byte
	pos int
	err error
}

func (p *schemaParser) fail(format string, args ...any) {
	if p.err == nil {
		p.err = fmt.Errorf("%w: byte %d: %s", ErrSchema, p.pos, fmt.Sprintf(format, args...))
	}
}

func (p *schemaParser) uvarint(limit uint64) int {
	if p.err != nil {
		return 0
	}
	v, n := binary.Uvarint(p.b[p.pos:])
	if n <= 0 || v > limit {
		p.fail("bad number")
		return 0
	}
	p.pos += n
	return int(v)
}

// node parses one node at struct depth depth.
func (p *schemaParser) node(depth int) *schemaNode {
	if p.err != nil {
		return nil
	}
	if p.pos >= len(p.b) {
		p.fail("truncated")
		return nil
	}
	k := reflect.Kind(p.b[p.pos])
	p.pos++
	n := &schemaNode{kind: k}
	switch k {
	case reflect.Bool, reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64,
		reflect.Float32, reflect.Float64, reflect.Complex64, reflect.Complex128, reflect.String, schemaTime:
	case reflect.Array:
		n.n = p.uvarint(1 << 31)
		n.elem = p.node(depth)
	case reflect.Slice, reflect.Pointer:
		n.elem = p.node(depth)
	case reflect.Struct:
		if depth >= 64 {
			p.fail("structs nested deeper than 64")
			return nil
		}
		nf := p.uvarint(uint64(len(p.b) - p.pos))
		seen := map[string]bool{}
		for i := 0; i < nf && p.err == nil; i++ {
			l := p.uvarint(uint64(len(p.b) - p.pos))
			if p.err == nil && l > len(p.b)-p.pos {
				p.fail("field name of %d bytes beyond the input", l)
			}
			if p.err != nil {
				break
			}
			name := string(p.b[p.pos : p.pos+l])
			p.pos += l
			if name == "" || seen[name] {
				p.fail("field name %q empty or repeated", name)
				break
			}
			seen[name] = true
			n.fields = append(n.fields, schemaField{name: name, node: p.node(depth + 1)})
		}
	case schemaRef:
		n.n = p.uvarint(uint64(depth))
		if p.err == nil && n.n >= depth {
			p.fail("reference to struct %d levels up inside %d", n.n+1, depth)
		}
	default:
		p.fail("kind %d", k)
	}
	return n
}

func (n *schemaNode) format(sb *strings.Builder) {
	switch n.kind {
	case schemaTime:
		sb.WriteString("time.Time")
	case schemaRef:
		fmt.Fprintf(sb, "<struct %d up>", n.n+1)
	case reflect.Array:
		fmt.Fprintf(sb, "[%d]", n.n)
		n.elem.format(sb)
	case reflect.Slice:
		sb.WriteString("[]")
		n.elem.format(sb)
	case reflect.Pointer:
		sb.WriteString("*")
		n.elem.format(sb)
	case reflect.Struct:
		sb.WriteString("struct {")
		for i, f := range n.fields {
			if i > 0 {
				sb.WriteString(";")
			}
			sb.WriteString(" " + f.name + " ")
			f.node.format(sb)
		}
		sb.WriteString(" }")
	default:
		sb.WriteString(n.kind.String())
	}
}
