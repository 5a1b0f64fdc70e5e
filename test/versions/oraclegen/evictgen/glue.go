package evictgen

import (
	"bytes"
	"encoding/json"
	"fmt"
	"sort"
)

// Strict decodes raw into a new T, refusing unknown fields: a field the
// release's type lacks is an error, not silently dropped.
func Strict[T any](raw []byte) (*T, error) {
	v := new(T)
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		return nil, fmt.Errorf("%v\n%s", err, raw)
	}
	return v, nil
}

// StrictAll decodes every element of raws strictly.
func StrictAll[T any](raws []json.RawMessage) ([]*T, error) {
	out := make([]*T, len(raws))
	for i, raw := range raws {
		v, err := Strict[T](raw)
		if err != nil {
			return nil, fmt.Errorf("item %d: %v", i, err)
		}
		out[i] = v
	}
	return out, nil
}

// Reencode is Version.Decode for a release whose pod type is P and whose
// summary type is S.
func Reencode[P, S any](pods []json.RawMessage, summary json.RawMessage) ([]json.RawMessage, json.RawMessage, error) {
	typed, err := StrictAll[P](pods)
	if err != nil {
		return nil, nil, fmt.Errorf("a pod does not decode into this release's k8s.io/api: %v", err)
	}
	sum, err := Strict[S](summary)
	if err != nil {
		return nil, nil, fmt.Errorf("the summary does not decode into this release's stats API: %v", err)
	}
	out := make([]json.RawMessage, len(typed))
	for i, p := range typed {
		if out[i], err = json.Marshal(p); err != nil {
			return nil, nil, err
		}
	}
	s, err := json.Marshal(sum)
	return out, s, err
}

// FixOrder sorts what the kubelet's ParseThresholdConfig returned in map
// order by key, so that a recording is byte-stable (the plugin calls
// signals met together a race of equal odds).
func FixOrder[T any](thresholds []T, key func(T) string) {
	sort.SliceStable(thresholds, func(i, j int) bool { return key(thresholds[i]) < key(thresholds[j]) })
}

// Pick returns all[i] for each i of idx, in that order.
func Pick[T any](all []T, idx []int) []T {
	out := make([]T, len(idx))
	for k, i := range idx {
		out[k] = all[i]
	}
	return out
}
