package api

import (
	"encoding/json"
	"fmt"
	"math"
	"sort"
	"strings"
)

// The settings of the context a model is given: attachments, thinking,
// the heat map, prices, the project's instructions and compaction
// (docs/PROTOCOL.md §2).

// objectFields decodes v as a JSON object whose keys are among allowed,
// naming key in the error.
func objectFields(key string, v json.RawMessage, shape string, allowed ...string) (map[string]json.RawMessage, error) {
	var fields map[string]json.RawMessage
	if err := json.Unmarshal(v, &fields); err != nil || fields == nil {
		return nil, &SettingsError{Key: key, Reason: "must be an object " + shape + ", got " + jsonKind(v)}
	}
	for k := range fields {
		found := false
		for _, a := range allowed {
			found = found || k == a
		}
		if !found {
			return nil, &SettingsError{Key: key + "." + k, Reason: fmt.Sprintf("unknown key; %s has %s", key, strings.Join(allowed, ", "))}
		}
	}
	return fields, nil
}

func decodeAttachmentLimits(v json.RawMessage, a *AttachmentLimits) error {
	fields, err := objectFields("attachments", v, `{"maxFileBytes", "maxImageBytes", "maxTotalBytes"}`, "maxFileBytes", "maxImageBytes", "maxTotalBytes")
	if err != nil {
		return err
	}
	next := *a
	for k, fv := range fields {
		if isNull(fv) {
			continue
		}
		dst := map[string]*int64{"maxFileBytes": &next.MaxFileBytes, "maxImageBytes": &next.MaxImageBytes, "maxTotalBytes": &next.MaxTotalBytes}[k]
		if err := decodeBytes("attachments."+k, fv, dst); err != nil {
			return err
		}
	}
	if next.MaxTotalBytes < max(next.MaxFileBytes, next.MaxImageBytes) {
		return &SettingsError{Key: "attachments.maxTotalBytes", Reason: fmt.Sprintf("%d is less than one file or image may weigh (maxFileBytes %d, maxImageBytes %d)", next.MaxTotalBytes, next.MaxFileBytes, next.MaxImageBytes)}
	}
	*a = next
	return nil
}

// maxAttachmentBytes bounds the attachment limits: what one run sends a
// model stays within what a request to a provider may hold.
const maxAttachmentBytes = 1 << 30

func decodeBytes(key string, v json.RawMessage, dst *int64) error {
	var f float64
	if err := json.Unmarshal(v, &f); err != nil {
		return &SettingsError{Key: key, Reason: "must be a number of bytes, got " + jsonKind(v)}
	}
	if f != math.Trunc(f) || f < 1 || f > maxAttachmentBytes {
		return &SettingsError{Key: key, Reason: fmt.Sprintf("must be a whole number of bytes from 1 to %d, got %v", maxAttachmentBytes, f)}
	}
	*dst = int64(f)
	return nil
}

func decodeThinking(v json.RawMessage, t *Thinking) error {
	fields, err := objectFields("thinking", v, `{"enabled", "budgetTokens"}`, "enabled", "budgetTokens")
	if err != nil {
		return err
	}
	next := *t
	if fv, ok := fields["enabled"]; ok && !isNull(fv) {
		if err := decodeBool("thinking.enabled", fv, &next.Enabled); err != nil {
			return err
		}
	}
	if fv, ok := fields["budgetTokens"]; ok && !isNull(fv) {
		if err := decodeInt("thinking.budgetTokens", fv, &next.BudgetTokens, MinThinkingBudget, MaxThinkingBudget); err != nil {
			return err
		}
	}
	*t = next
	return nil
}

func decodeHeat(v json.RawMessage, h *HeatSettings) error {
	fields, err := objectFields("heat", v, `{"decay", "contextTurns", "compactionThreshold"}`, "decay", "contextTurns", "compactionThreshold")
	if err != nil {
		return err
	}
	next := *h
	if fv, ok := fields["decay"]; ok && !isNull(fv) {
		if err := decodeFraction("heat.decay", fv, &next.Decay, false, true); err != nil {
			return err
		}
	}
	if fv, ok := fields["contextTurns"]; ok && !isNull(fv) {
		if err := decodeInt("heat.contextTurns", fv, &next.ContextTurns, 1, 1000); err != nil {
			return err
		}
	}
	if fv, ok := fields["compactionThreshold"]; ok && !isNull(fv) {
		if err := decodeFraction("heat.compactionThreshold", fv, &next.CompactionThreshold, true, false); err != nil {
			return err
		}
	}
	*h = next
	return nil
}

// decodeFraction reads a number between 0 and 1, each end allowed or not.
func decodeFraction(key string, v json.RawMessage, dst *float64, zero, one bool) error {
	var f float64
	if err := json.Unmarshal(v, &f); err != nil {
		return &SettingsError{Key: key, Reason: "must be a number, got " + jsonKind(v)}
	}
	lo, hi := "above 0", "below 1"
	if zero {
		lo = "from 0"
	}
	if one {
		hi = "to 1"
	}
	if (f < 0 || f == 0 && !zero) || (f > 1 || f == 1 && !one) {
		return &SettingsError{Key: key, Reason: fmt.Sprintf("must be a number %s %s, got %v", lo, hi, f)}
	}
	*dst = f
	return nil
}

func decodePrices(v json.RawMessage) (map[string]Price, error) {
	var entries map[string]json.RawMessage
	if err := json.Unmarshal(v, &entries); err != nil || entries == nil {
		return nil, &SettingsError{Key: "prices", Reason: `must be an object {"provider:model": {"input", "output", "cacheRead", "cacheWrite", "contextWindow"}}, got ` + jsonKind(v)}
	}
	names := make([]string, 0, len(entries))
	for name := range entries {
		names = append(names, name)
	}
	sort.Strings(names)
	out := make(map[string]Price, len(entries))
	for _, name := range names {
		key := "prices." + name
		provider, model, ok := strings.Cut(name, ":")
		if !ok || strings.TrimSpace(provider) == "" || strings.TrimSpace(model) == "" {
			return nil, &SettingsError{Key: key, Reason: fmt.Sprintf("%q is not provider:model (e.g. openai:gpt-4.1-mini)", name)}
		}
		if isNull(entries[name]) {
			continue
		}
		fields, err := objectFields(key, entries[name], `{"input", "output", "cacheRead", "cacheWrite", "contextWindow"}`, "input", "output", "cacheRead", "cacheWrite", "contextWindow")
		if err != nil {
			return nil, err
		}
		var p Price
		for k, dst := range map[string]**float64{"input": &p.Input, "output": &p.Output, "cacheRead": &p.CacheRead, "cacheWrite": &p.CacheWrite} {
			fv, ok := fields[k]
			if !ok || isNull(fv) {
				continue
			}
			var f float64
			if err := json.Unmarshal(fv, &f); err != nil || f < 0 || f > 1e6 {
				return nil, &SettingsError{Key: key + "." + k, Reason: "must be a price in US dollars per million tokens, from 0 to 1000000, got " + string(fv)}
			}
			*dst = &f
		}
		if (p.Input == nil) != (p.Output == nil) {
			return nil, &SettingsError{Key: key, Reason: "needs both input and output prices (US dollars per million tokens), or neither"}
		}
		if (p.CacheRead != nil || p.CacheWrite != nil) && p.Input == nil {
			return nil, &SettingsError{Key: key, Reason: "cache prices need the input and output prices"}
		}
		if fv, ok := fields["contextWindow"]; ok && !isNull(fv) {
			var n int
			if err := decodeInt(key+".contextWindow", fv, &n, 1, 1<<31-1); err != nil {
				return nil, err
			}
			p.ContextWindow = int64(n)
		}
		out[name] = p
	}
	return out, nil
}

func decodeInstructions(v json.RawMessage, in *InstructionSettings) error {
	fields, err := objectFields("instructions", v, `{"add", "remove", "maxTokens"}`, "add", "remove", "maxTokens")
	if err != nil {
		return err
	}
	next := *in
	for _, k := range []string{"add", "remove"} {
		fv, ok := fields[k]
		if !ok || isNull(fv) {
			continue
		}
		dst := map[string]*[]string{"add": &next.Add, "remove": &next.Remove}[k]
		if err := decodeStrings("instructions."+k, fv, dst); err != nil {
			return err
		}
		for i, p := range *dst {
			if err := ValidateGlob(p); err != nil {
				return &SettingsError{Key: fmt.Sprintf("instructions.%s[%d]", k, i), Reason: err.Error()}
			}
		}
	}
	if fv, ok := fields["maxTokens"]; ok && !isNull(fv) {
		if err := decodeInt("instructions.maxTokens", fv, &next.MaxTokens, 0, InstructionTokensLimit); err != nil {
			return err
		}
	}
	*in = next
	return nil
}

func decodeCompaction(v json.RawMessage, c *CompactionSettings) error {
	fields, err := objectFields("compaction", v, `{"threshold"}`, "threshold")
	if err != nil {
		return err
	}
	if fv, ok := fields["threshold"]; ok && !isNull(fv) {
		if err := decodeFraction("compaction.threshold", fv, &c.Threshold, true, false); err != nil {
			return err
		}
	}
	return nil
}
