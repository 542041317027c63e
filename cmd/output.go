package cmd

import (
	"encoding/json"
	"io"
	"reflect"
)

// writeJSON is the one JSON encoder of every command's --json output
// (docs/JSON.md): indented, a trailing newline, no HTML escaping, and every
// list present ([] when empty, never null or left out).
func writeJSON(w io.Writer, v any) error {
	rv := reflect.ValueOf(v)
	if rv.IsValid() {
		// Work on a copy, so that the nil lists it fills are addressable.
		p := reflect.New(rv.Type())
		p.Elem().Set(rv)
		fillLists(p.Elem(), 0)
		v = p.Elem().Interface()
	}
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	enc.SetEscapeHTML(false)
	return enc.Encode(v)
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
