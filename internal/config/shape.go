package config

import (
	"encoding"
	"fmt"
	"reflect"
	"sort"
	"strconv"
	"time"
)

// shape checks a generically decoded document against the Config struct,
// by its toml tags, and returns every unknown key and every value of the
// wrong type, in plain words. Each bad key is deleted from doc, so that
// what is left decodes strictly and the semantic checks can run on it.
func shape(doc map[string]any, pos positions) Errors {
	s := shaper{pos: pos}
	s.table("", doc, reflect.TypeFor[Config]())
	return s.errs
}

type shaper struct {
	pos  positions
	errs Errors
}

func (s *shaper) bad(key, format string, args ...any) {
	line, col := s.pos.find(key)
	s.errs = append(s.errs, &Error{Line: line, Col: col, Key: key, Msg: fmt.Sprintf(format, args...)})
}

var (
	textUnmarshaler = reflect.TypeFor[encoding.TextUnmarshaler]()
	durationType    = reflect.TypeFor[Duration]()
	commandType     = reflect.TypeFor[Command]()
)

// table checks the keys of one TOML table against struct type t.
func (s *shaper) table(prefix string, m map[string]any, t reflect.Type) {
	fields := map[string]reflect.Type{}
	var names []string
	for i := range t.NumField() {
		f := t.Field(i)
		tag := f.Tag.Get("toml")
		if tag == "" || tag == "-" || !f.IsExported() {
			continue
		}
		fields[tag] = f.Type
		names = append(names, tag)
	}
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		key := join(prefix, k)
		ft, ok := fields[k]
		if !ok {
			if near := closest(k, names); near != "" {
				s.bad(key, "unknown key; did you mean %q?", near)
			} else {
				s.bad(key, "unknown key")
			}
			delete(m, k)
			continue
		}
		if !s.value(key, m[k], ft) {
			delete(m, k)
		}
	}
}

// value checks v against type t; false when v is unusable and was reported.
// A table or list that is usable may still have had bad parts removed.
func (s *shaper) value(key string, v any, t reflect.Type) bool {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	switch {
	case t == durationType:
		str, ok := v.(string)
		if !ok {
			s.bad(key, "want a duration such as \"500ms\", got %s", what(v))
			return false
		}
		d, err := time.ParseDuration(str)
		if err != nil {
			s.bad(key, "want a duration such as \"500ms\", got %q", str)
			return false
		}
		if d < 0 {
			s.bad(key, "want a duration of zero or more, got the negative duration %q", str)
			return false
		}
		return true
	case t == commandType:
		switch v := v.(type) {
		case string:
			return true
		case []any:
			return s.strings(key, v, "want a command (a string or a list of strings)")
		}
		s.bad(key, "want a command (a string or a list of strings), got %s", what(v))
		return false
	case reflect.PointerTo(t).Implements(textUnmarshaler):
		str, ok := v.(string)
		if !ok {
			s.bad(key, "want a string, got %s", what(v))
			return false
		}
		if err := reflect.New(t).Interface().(encoding.TextUnmarshaler).UnmarshalText([]byte(str)); err != nil {
			s.bad(key, "%v", err)
			return false
		}
		return true
	}
	switch t.Kind() {
	case reflect.String:
		return s.want(key, v, "a string", isString)
	case reflect.Bool:
		return s.want(key, v, "true or false", isBool)
	case reflect.Int, reflect.Int64, reflect.Int32:
		return s.want(key, v, "an integer", isInt)
	case reflect.Float64, reflect.Float32:
		return s.want(key, v, "a number", isNumber)
	case reflect.Struct:
		m, ok := v.(map[string]any)
		if !ok {
			s.bad(key, "want a table, got %s", what(v))
			return false
		}
		s.table(key, m, t)
		return true
	case reflect.Map:
		m, ok := v.(map[string]any)
		if !ok {
			s.bad(key, "want a table, got %s", what(v))
			return false
		}
		for k, e := range m {
			if !s.value(key+"."+k, e, t.Elem()) {
				delete(m, k)
			}
		}
		return true
	case reflect.Slice:
		list, ok := v.([]any)
		if t.Elem().Kind() == reflect.Struct {
			if !ok {
				s.bad(key, "want a list of tables ([[%s]]), got %s", key, what(v))
				return false
			}
			good := true
			for i, e := range list {
				m, ok := e.(map[string]any)
				if !ok {
					s.bad(key+"["+strconv.Itoa(i)+"]", "want a table, got %s", what(e))
					good = false
					continue
				}
				s.table(key+"["+strconv.Itoa(i)+"]", m, t.Elem())
			}
			return good
		}
		if t.Elem().Kind() == reflect.String {
			if !ok {
				s.bad(key, "want a list of strings, got %s", what(v))
				return false
			}
			return s.strings(key, list, "want a list of strings")
		}
	}
	// A type the shape check does not know: the strict decoder judges it.
	return true
}

// strings reports each element of list that is not a string.
func (s *shaper) strings(key string, list []any, want string) bool {
	good := true
	for i, e := range list {
		if _, ok := e.(string); !ok {
			s.bad(key+"["+strconv.Itoa(i)+"]", "%s, got %s in it", want, what(e))
			good = false
		}
	}
	return good
}

func (s *shaper) want(key string, v any, want string, ok func(any) bool) bool {
	if ok(v) {
		return true
	}
	s.bad(key, "want %s, got %s", want, what(v))
	return false
}

func isString(v any) bool { _, ok := v.(string); return ok }
func isBool(v any) bool   { _, ok := v.(bool); return ok }
func isInt(v any) bool    { _, ok := v.(int64); return ok }
func isNumber(v any) bool {
	switch v.(type) {
	case int64, float64:
		return true
	}
	return false
}

// what names the TOML type of v in plain words.
func what(v any) string {
	switch v.(type) {
	case string:
		return "a string"
	case bool:
		return "a boolean"
	case int64:
		return "a number"
	case float64:
		return "a decimal number"
	case []any:
		return "a list"
	case map[string]any:
		return "a table"
	}
	return "a date or time"
}
