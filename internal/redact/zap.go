package redact

import (
	"encoding/json"
	"fmt"

	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"
)

// Core wraps a zap core so that no secret reaches it: the message and every
// field (strings, errors, stringers, objects, arrays, the fields of With)
// are redacted before they are encoded, at every level. Use it with
// zap.WrapCore(r.Core).
func (r *Redactor) Core(c zapcore.Core) zapcore.Core {
	if r == nil {
		return c
	}
	return &core{Core: c, r: r}
}

type core struct {
	zapcore.Core
	r *Redactor
}

func (c *core) With(fields []zapcore.Field) zapcore.Core {
	return &core{Core: c.Core.With(c.r.fields(fields)), r: c.r}
}

// Check adds this core (not the wrapped one) so that Write redacts.
func (c *core) Check(ent zapcore.Entry, ce *zapcore.CheckedEntry) *zapcore.CheckedEntry {
	if c.Enabled(ent.Level) {
		return ce.AddCore(ent, c)
	}
	return ce
}

func (c *core) Write(ent zapcore.Entry, fields []zapcore.Field) error {
	ent.Message = c.r.String(ent.Message)
	ent.Stack = c.r.String(ent.Stack)
	return c.Core.Write(ent, c.r.fields(fields))
}

// fields returns fs with every field that holds a secret replaced by a
// string field of the same key holding its redacted text.
func (r *Redactor) fields(fs []zapcore.Field) []zapcore.Field {
	set := r.load()
	if set == nil {
		return fs
	}
	var out []zapcore.Field
	for i, f := range fs {
		text, isJSON, ok := fieldText(f)
		if !ok {
			continue
		}
		red := text
		if isJSON {
			red = string(r.JSON([]byte(text)))
		} else if set.contains(text) {
			red = set.plain.Replace(text)
		}
		if red == text {
			continue
		}
		if out == nil {
			out = append([]zapcore.Field(nil), fs...)
		}
		out[i] = zap.String(f.Key, red)
	}
	if out == nil {
		return fs
	}
	return out
}

// fieldText renders the value of a field that may hold text, as JSON for
// objects and arrays; false for numbers, booleans, times and the like.
func fieldText(f zapcore.Field) (text string, isJSON, ok bool) {
	defer func() {
		if recover() != nil { // a Stringer or marshaler that panics
			text, isJSON, ok = "", false, false
		}
	}()
	switch f.Type {
	case zapcore.StringType:
		return f.String, false, true
	case zapcore.ByteStringType:
		b, _ := f.Interface.([]byte)
		return string(b), false, true
	case zapcore.ErrorType:
		if err, _ := f.Interface.(error); err != nil {
			return err.Error(), false, true
		}
		return "", false, false
	case zapcore.StringerType:
		if s, _ := f.Interface.(fmt.Stringer); s != nil {
			return s.String(), false, true
		}
		return "", false, false
	case zapcore.ReflectType, zapcore.ObjectMarshalerType, zapcore.ArrayMarshalerType, zapcore.InlineMarshalerType:
		enc := zapcore.NewMapObjectEncoder()
		f.AddTo(enc)
		var v any = enc.Fields
		if f.Type != zapcore.InlineMarshalerType {
			v = enc.Fields[f.Key]
		}
		b, err := json.Marshal(v)
		if err != nil {
			return fmt.Sprint(v), false, true
		}
		return string(b), true, true
	}
	return "", false, false
}
