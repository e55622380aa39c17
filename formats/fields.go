package formats

import (
	"fmt"
	"reflect"
	"strings"
	"unicode"
)

// Field is one struct field mapped to a column.
type Field struct {
	Column string       // the column name: the tag, or the Go name
	GoName string       // the Go field name
	Tagged bool         // Column came from a `weir` or `parquet` tag
	Opts   string       // the `weir` tag's options after the name ("scale=2"), or ""
	Index  int          // the field's index in the struct
	Offset uintptr      // the field's offset in the struct
	Type   reflect.Type // the field's type
}

// FieldsOf maps the exported fields of struct type t to columns, in field order.
// A field's column is the name in its `weir` tag, else the name in its `parquet`
// tag (parquet-go's convention, "name,optional,..."; only the name is read), else
// the field name. A name of "-" skips the field. Two fields naming the same
// column are an error. The errors of FieldsOf, Fields and Resolve carry no
// package prefix: the format package that calls them wraps them with its
// own, so that a message names one package, not two.
func FieldsOf(t reflect.Type) ([]Field, error) {
	if t.Kind() != reflect.Struct {
		return nil, fmt.Errorf("%s is not a struct", t)
	}
	var out []Field
	seen := map[string]string{}
	for i := 0; i < t.NumField(); i++ {
		sf := t.Field(i)
		if !sf.IsExported() {
			continue
		}
		f := Field{Column: sf.Name, GoName: sf.Name, Index: i, Offset: sf.Offset, Type: sf.Type}
		name := ""
		if tag, ok := sf.Tag.Lookup("weir"); ok {
			name, f.Opts, _ = strings.Cut(tag, ",")
		}
		if name == "" {
			name, _, _ = strings.Cut(sf.Tag.Get("parquet"), ",")
		}
		if name == "-" {
			continue
		}
		if name != "" {
			f.Column, f.Tagged = name, true
		}
		key := strings.ToLower(f.Column)
		if prev, dup := seen[key]; dup {
			return nil, fmt.Errorf("%s: fields %s and %s both map to column %q", t, prev, sf.Name, f.Column)
		}
		seen[key] = sf.Name
		out = append(out, f)
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("%s has no exported fields to map to columns", t)
	}
	return out, nil
}

// Fields is FieldsOf for T.
func Fields[T any]() ([]Field, error) {
	return FieldsOf(reflect.TypeFor[T]())
}

// Resolve finds each field's column among columns: a tagged field by its exact
// name, else case-insensitively; an untagged field by its name compared
// case-insensitively, else by its name in snake_case. It returns, per field, the
// index of its column, or an error naming every field without a column. where
// names the input for the error ("orders.parquet").
func Resolve(fields []Field, columns []string, where string) ([]int, error) {
	exact := make(map[string]int, len(columns))
	folded := make(map[string]int, len(columns))
	for i, c := range columns {
		if _, ok := exact[c]; !ok {
			exact[c] = i
		}
		if _, ok := folded[strings.ToLower(c)]; !ok {
			folded[strings.ToLower(c)] = i
		}
	}
	idx := make([]int, len(fields))
	var missing []string
	for i, f := range fields {
		if j, ok := exact[f.Column]; ok {
			idx[i] = j
			continue
		}
		if j, ok := folded[strings.ToLower(f.Column)]; ok {
			idx[i] = j
			continue
		}
		if !f.Tagged {
			if j, ok := folded[SnakeCase(f.GoName)]; ok {
				idx[i] = j
				continue
			}
		}
		missing = append(missing, fmt.Sprintf("%s (column %q)", f.GoName, f.Column))
	}
	if len(missing) > 0 {
		return nil, fmt.Errorf("%s has no column for field(s) %s; its columns are %s",
			where, strings.Join(missing, ", "), strings.Join(columns, ", "))
	}
	return idx, nil
}

// SnakeCase turns a Go name into snake_case: "OrderKey" → "order_key",
// "LShipDate" → "l_ship_date", "HTTPCode" → "http_code".
func SnakeCase(name string) string {
	rs := []rune(name)
	var b strings.Builder
	for i, r := range rs {
		if unicode.IsUpper(r) {
			if i > 0 && (unicode.IsLower(rs[i-1]) || unicode.IsDigit(rs[i-1]) ||
				(i+1 < len(rs) && unicode.IsLower(rs[i+1]) && unicode.IsUpper(rs[i-1]))) {
				b.WriteByte('_')
			}
			b.WriteRune(unicode.ToLower(r))
			continue
		}
		b.WriteRune(r)
	}
	return b.String()
}
