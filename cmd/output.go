package cmd

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"reflect"

	"github.com/itchyny/gojq"
	"github.com/memctl/memctl/mdmem"
	"github.com/spf13/cobra"
)

// writeJSON is the one JSON encoder of every command's --json output
// (docs/JSON.md): indented, a trailing newline, no HTML escaping, and every
// list present ([] when empty, never null or left out).
func writeJSON(w io.Writer, v any) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	enc.SetEscapeHTML(false)
	return enc.Encode(withLists(v))
}

// withLists returns a copy of v whose nil lists are empty (fillLists).
func withLists(v any) any {
	rv := reflect.ValueOf(v)
	if !rv.IsValid() {
		return v
	}
	// Work on a copy, so that the nil lists it fills are addressable.
	p := reflect.New(rv.Type())
	p.Elem().Set(rv)
	fillLists(p.Elem(), 0)
	return p.Elem().Interface()
}

// jsonArray prints a command's --json array one element at a time, byte
// for byte as writeJSON prints the whole slice, so a long list is never
// held whole. With --jq the elements are kept (as JSON) and the array is
// filtered whole at close: jq reads the whole array.
type jsonArray struct {
	f     *Factory
	n     int
	kept  []json.RawMessage // the elements, under --jq
	enc   *json.Encoder
	buf   bytes.Buffer
	wrote error // the first write error: the output is cut short
}

// jsonArray starts the command's --json array.
func (f *Factory) jsonArray() *jsonArray {
	a := &jsonArray{f: f}
	a.enc = json.NewEncoder(&a.buf)
	a.enc.SetEscapeHTML(false)
	if f.JQ == "" {
		a.enc.SetIndent("  ", "  ") // an element's lines, one level into the array
	}
	return a
}

// add prints (or, under --jq, keeps) the next element.
func (a *jsonArray) add(v any) error {
	if a.wrote != nil {
		return a.wrote
	}
	a.buf.Reset()
	if a.f.JQ == "" {
		if a.n == 0 {
			a.buf.WriteString("[\n  ")
		} else {
			a.buf.WriteString(",\n  ")
		}
	}
	if err := a.enc.Encode(withLists(v)); err != nil {
		return err
	}
	b := bytes.TrimSuffix(a.buf.Bytes(), []byte("\n"))
	a.n++
	if a.f.JQ != "" {
		a.kept = append(a.kept, bytes.Clone(b))
		return nil
	}
	return a.write(b)
}

// close ends the array: "]", or "[]" when it had no element; under --jq
// it filters the kept elements.
func (a *jsonArray) close() error {
	if a.wrote != nil {
		return a.wrote
	}
	if a.f.JQ != "" {
		if a.kept == nil {
			a.kept = []json.RawMessage{}
		}
		return a.f.printJSON(a.kept)
	}
	if a.n == 0 {
		return a.write([]byte("[]\n"))
	}
	return a.write([]byte("\n]\n"))
}

func (a *jsonArray) write(b []byte) error {
	a.f.wroteJSON = true
	if _, err := a.f.IO.Out.Write(b); err != nil {
		a.wrote = fmt.Errorf("write the JSON output: %w (it is cut short)", err)
	}
	return a.wrote
}

var marshalerType = reflect.TypeFor[json.Marshaler]()

// fillLists replaces nil slices and maps reachable from v by empty ones,
// so JSON prints [] and {} instead of null. Types with their own
// MarshalJSON (an entry's view does the same itself) are left to it.
func fillLists(v reflect.Value, depth int) {
	if depth > 32 || !v.IsValid() {
		return
	}
	if v.Kind() != reflect.Pointer && v.Kind() != reflect.Interface &&
		(v.Type().Implements(marshalerType) || reflect.PointerTo(v.Type()).Implements(marshalerType)) {
		return
	}
	switch v.Kind() {
	case reflect.Pointer, reflect.Interface:
		if !v.IsNil() {
			e := v.Elem()
			if v.Kind() == reflect.Interface && e.Kind() != reflect.Pointer {
				// A value in an interface is not addressable: copy it.
				c := reflect.New(e.Type()).Elem()
				c.Set(e)
				fillLists(c, depth+1)
				if v.CanSet() {
					v.Set(c)
				}
				return
			}
			fillLists(e, depth+1)
		}
	case reflect.Struct:
		t := v.Type()
		for i := range t.NumField() {
			if f := t.Field(i); f.IsExported() && f.Tag.Get("json") != "-" {
				fillLists(v.Field(i), depth+1)
			}
		}
	case reflect.Slice:
		if v.IsNil() {
			if v.CanSet() && v.Type().Elem().Kind() != reflect.Uint8 {
				v.Set(reflect.MakeSlice(v.Type(), 0, 0))
			}
			return
		}
		for i := range v.Len() {
			fillLists(v.Index(i), depth+1)
		}
	case reflect.Array:
		for i := range v.Len() {
			fillLists(v.Index(i), depth+1)
		}
	case reflect.Map:
		if v.IsNil() && v.CanSet() {
			v.Set(reflect.MakeMap(v.Type()))
		}
	}
}

// printJSON prints v as the command's --json output: whole, or filtered
// through --jq (a jq expression, evaluated by gojq: strings print raw,
// other values as compact JSON, one result a line).
func (f *Factory) printJSON(v any) error {
	f.wroteJSON = true
	if f.JQ == "" {
		return writeJSON(f.IO.Out, v)
	}
	q, err := gojq.Parse(f.JQ)
	if err != nil {
		return &FlagError{Err: fmt.Errorf("invalid --jq %q: %w", f.JQ, err)}
	}
	// gojq works on plain JSON values: print v, read it back.
	var buf bytes.Buffer
	if err := writeJSON(&buf, v); err != nil {
		return err
	}
	var in any
	if err := json.Unmarshal(buf.Bytes(), &in); err != nil {
		return err
	}
	iter := q.Run(in)
	for {
		out, ok := iter.Next()
		if !ok {
			return nil
		}
		if err, ok := out.(error); ok {
			var halt *gojq.HaltError
			if errors.As(err, &halt) && halt.Value() == nil {
				return nil
			}
			return fmt.Errorf("--jq %q: %w", f.JQ, err)
		}
		if s, ok := out.(string); ok {
			if _, err := fmt.Fprintln(f.IO.Out, s); err != nil {
				return err
			}
			continue
		}
		b, err := mdmem.MarshalNoEscape(out)
		if err != nil {
			return err
		}
		if _, err := fmt.Fprintf(f.IO.Out, "%s\n", b); err != nil {
			return err
		}
	}
}

// addJQFlags gives every command that prints JSON a --jq flag: it turns
// --json on and filters the output (docs/JSON.md).
func addJQFlags(f *Factory, c *cobra.Command) {
	if fl := c.Flags().Lookup("json"); fl != nil && fl.Value.Type() == "bool" {
		c.Flags().StringVar(&f.JQ, "jq", "", "filter the JSON output with a jq expression (implies --json), e.g. '.[].id'")
		pre := c.PreRunE
		c.PreRunE = func(cmd *cobra.Command, args []string) error {
			if f.JQ != "" {
				if _, err := gojq.Parse(f.JQ); err != nil {
					return &FlagError{Err: fmt.Errorf("invalid --jq %q: %w", f.JQ, err)}
				}
				if err := cmd.Flags().Set("json", "true"); err != nil {
					return err
				}
			}
			if pre != nil {
				return pre(cmd, args)
			}
			return nil
		}
	}
	for _, sub := range c.Commands() {
		addJQFlags(f, sub)
	}
}
