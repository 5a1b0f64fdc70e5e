package eviction

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"k8s.io/apimachinery/pkg/api/resource"
	kjson "sigs.k8s.io/json"

	"github.com/scale-preview/scale-preview/pkg/rules"
)

// Signal is an eviction signal, as the kubelet's configuration names it.
type Signal string

// The kubelet's signals (pkg/kubelet/eviction/api/types.go).
const (
	MemoryAvailable            Signal = "memory.available"
	AllocatableMemoryAvailable Signal = "allocatableMemory.available"
	NodeFsAvailable            Signal = "nodefs.available"
	NodeFsInodesFree           Signal = "nodefs.inodesFree"
	ImageFsAvailable           Signal = "imagefs.available"
	ImageFsInodesFree          Signal = "imagefs.inodesFree"
	ContainerFsAvailable       Signal = "containerfs.available"
	ContainerFsInodesFree      Signal = "containerfs.inodesFree"
	PIDAvailable               Signal = "pid.available"
)

// AllSignals in the order the plugin shows them.
var AllSignals = []Signal{MemoryAvailable, AllocatableMemoryAvailable, NodeFsAvailable, NodeFsInodesFree,
	ImageFsAvailable, ImageFsInodesFree, ContainerFsAvailable, ContainerFsInodesFree, PIDAvailable}

// Valid reports whether the kubelet of these rules knows the signal
// (validSignal: containerfs signals exist from 1.29).
func (s Signal) Valid(k rules.KubeletRules) bool {
	switch s {
	case ContainerFsAvailable, ContainerFsInodesFree:
		return k.ContainerFsSignals
	}
	return slices.Contains(AllSignals, s)
}

// isMemory: byEvictionPriority puts these first.
func (s Signal) isMemory() bool { return s == MemoryAvailable || s == AllocatableMemoryAvailable }

// Condition is the node condition the signal sets.
func (s Signal) Condition() string {
	switch {
	case s.isMemory():
		return "MemoryPressure"
	case s == PIDAvailable:
		return "PIDPressure"
	}
	return "DiskPressure"
}

// Unit says how values of the signal are counted.
func (s Signal) Unit() string {
	switch s {
	case NodeFsInodesFree, ImageFsInodesFree, ContainerFsInodesFree:
		return "inodes"
	case PIDAvailable:
		return "pids"
	}
	return "bytes"
}

// value is a threshold or minimum reclaim: a quantity or a fraction of
// capacity (evictionapi.ThresholdValue).
type value struct {
	Quantity   *resource.Quantity
	Percentage float32
	Text       string // as configured
}

// resolve is evictionapi.GetThresholdQuantity.
func (v value) resolve(capacity int64) resource.Quantity {
	if v.Quantity != nil {
		return v.Quantity.DeepCopy()
	}
	return *resource.NewQuantity(int64(float64(capacity)*float64(v.Percentage)), resource.BinarySI)
}

// Threshold is one parsed eviction threshold.
type Threshold struct {
	Signal      Signal
	Value       value
	GracePeriod time.Duration // 0: hard
	MinReclaim  *value
	// Derived names where the kubelet made it: "allocatable" (copied from
	// memory.available), "nodefs"/"imagefs" (containerfs set from them).
	Derived string
}

// Hard is isHardEvictionThreshold.
func (t Threshold) Hard() bool { return t.GracePeriod == 0 }

// Config is what the kubelet's configuration says about eviction.
type Config struct {
	Thresholds []Threshold
	// MaxPodGracePeriod is evictionMaxPodGracePeriod (seconds).
	MaxPodGracePeriod int64
	// LocalStorage: localStorageCapacityIsolation (default true).
	LocalStorage bool
	// Assumed: no configz was read; these are the kubelet's defaults.
	Assumed bool
}

// DefaultEvictionHard is the kubelet's default evictionHard on Linux
// (pkg/kubelet/eviction/defaults_linux.go; imagefs.inodesFree from 1.30).
func DefaultEvictionHard(k rules.KubeletRules) map[string]string {
	m := map[string]string{"memory.available": "100Mi", "nodefs.available": "10%", "nodefs.inodesFree": "5%", "imagefs.available": "15%"}
	if k.ImageFsInodesDefault {
		m["imagefs.inodesFree"] = "5%"
	}
	return m
}

// KubeletConfiguration is the part of the kubelet's configuration (as
// configz prints it: kubelet.config.k8s.io/v1beta1 field names) that
// eviction reads. k8s.io/kubelet's own type would pull the metrics stack
// into the plugin.
type KubeletConfiguration struct {
	EvictionHard                     map[string]string `json:"evictionHard,omitempty"`
	EvictionSoft                     map[string]string `json:"evictionSoft,omitempty"`
	EvictionSoftGracePeriod          map[string]string `json:"evictionSoftGracePeriod,omitempty"`
	EvictionMinimumReclaim           map[string]string `json:"evictionMinimumReclaim,omitempty"`
	EvictionMaxPodGracePeriod        int32             `json:"evictionMaxPodGracePeriod,omitempty"`
	EvictionPressureTransitionPeriod string            `json:"evictionPressureTransitionPeriod,omitempty"`
	EnforceNodeAllocatable           []string          `json:"enforceNodeAllocatable,omitempty"`
	LocalStorageCapacityIsolation    *bool             `json:"localStorageCapacityIsolation,omitempty"`
	FeatureGates                     map[string]bool   `json:"featureGates,omitempty"`
}

// DecodeKubeletConfiguration decodes the inner object of a configz
// document, as the plugin reads it from a file or the node proxy.
func DecodeKubeletConfiguration(raw []byte) (*KubeletConfiguration, error) {
	kc := &KubeletConfiguration{}
	if err := kjson.UnmarshalCaseSensitivePreserveInts(raw, kc); err != nil {
		return nil, err
	}
	return kc, nil
}

// ConfigFrom reads a kubelet configuration as configz prints it (nil: the
// defaults, marked assumed) and parses its thresholds as the kubelet does
// (ParseThresholdConfig), rejecting what the kubelet rejects.
//
// configz serialises the running configuration, after every default was
// applied (v1beta1 SetDefaults until 1.24, loadConfigFile from 1.25), and
// its maps and slices are omitempty: a field it leaves out is empty in the
// running kubelet. So a configz without evictionHard means no hard
// thresholds at all, not the defaults; the same holds for evictionSoft,
// evictionSoftGracePeriod, evictionMinimumReclaim, enforceNodeAllocatable
// (no allocatable threshold) and evictionMaxPodGracePeriod (0).
func ConfigFrom(kc *KubeletConfiguration, k rules.KubeletRules) (Config, error) {
	assumed := kc == nil
	if kc == nil {
		kc = &KubeletConfiguration{EnforceNodeAllocatable: []string{"pods"}, EvictionHard: DefaultEvictionHard(k)}
	}
	ths, err := ParseThresholds(k, kc.EnforceNodeAllocatable, kc.EvictionHard, kc.EvictionSoft, kc.EvictionSoftGracePeriod, kc.EvictionMinimumReclaim)
	if err != nil {
		return Config{}, err
	}
	c := Config{Thresholds: ths, MaxPodGracePeriod: int64(kc.EvictionMaxPodGracePeriod), LocalStorage: localStorageIsolation(kc), Assumed: assumed}
	return c, nil
}

// localStorageIsolation is localStorageCapacityIsolation (defaulted to true
// and so always in a configz from 1.25); before 1.25 that field did not
// exist and the kubelet read the LocalStorageCapacityIsolation gate.
func localStorageIsolation(kc *KubeletConfiguration) bool {
	if kc.LocalStorageCapacityIsolation != nil {
		return *kc.LocalStorageCapacityIsolation
	}
	if on, ok := kc.FeatureGates["LocalStorageCapacityIsolation"]; ok {
		return on
	}
	return true
}

// ParseThresholds is the kubelet's ParseThresholdConfig, signal names
// sorted so that the result does not depend on map order.
func ParseThresholds(k rules.KubeletRules, enforceNodeAllocatable []string, hard, soft, softGrace, minReclaim map[string]string) ([]Threshold, error) {
	var out []Threshold
	hardTh, err := parseStatements(k, hard)
	if err != nil {
		return nil, fmt.Errorf("evictionHard: %w", err)
	}
	out = append(out, hardTh...)
	softTh, err := parseStatements(k, soft)
	if err != nil {
		return nil, fmt.Errorf("evictionSoft: %w", err)
	}
	graces := map[Signal]time.Duration{}
	for _, s := range sortedKeys(softGrace) {
		sig := Signal(s)
		if !sig.Valid(k) {
			return nil, fmt.Errorf("evictionSoftGracePeriod: unsupported eviction signal %v", sig)
		}
		d, err := time.ParseDuration(softGrace[s])
		if err != nil {
			return nil, fmt.Errorf("evictionSoftGracePeriod %s: %w", s, err)
		}
		if d < 0 {
			return nil, fmt.Errorf("evictionSoftGracePeriod: invalid eviction grace period specified: %v, must be a positive value", softGrace[s])
		}
		graces[sig] = d
	}
	reclaims := map[Signal]value{}
	for _, s := range sortedKeys(minReclaim) {
		sig := Signal(s)
		if !sig.Valid(k) {
			return nil, fmt.Errorf("evictionMinimumReclaim: unsupported eviction signal %v", sig)
		}
		v, err := parseMinReclaim(sig, minReclaim[s])
		if err != nil {
			return nil, fmt.Errorf("evictionMinimumReclaim: %w", err)
		}
		reclaims[sig] = v
	}
	for i := range softTh {
		d, ok := graces[softTh[i].Signal]
		if !ok {
			return nil, fmt.Errorf("grace period must be specified for the soft eviction threshold %v", softTh[i].Signal)
		}
		// A soft threshold with a 0s grace period acts as a hard one, as
		// in the kubelet (isHardEvictionThreshold).
		softTh[i].GracePeriod = d
	}
	out = append(out, softTh...)
	for i := range out {
		if v, ok := reclaims[out[i].Signal]; ok {
			out[i].MinReclaim = &v
		}
	}
	if slices.Contains(enforceNodeAllocatable, "pods") {
		for _, t := range slices.Clone(out) {
			if t.Signal == MemoryAvailable && t.Hard() {
				out = append(out, Threshold{Signal: AllocatableMemoryAvailable, Value: t.Value, MinReclaim: t.MinReclaim, Derived: "allocatable"})
			}
		}
	}
	return out, nil
}

func sortedKeys(m map[string]string) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}

func parseStatements(k rules.KubeletRules, m map[string]string) ([]Threshold, error) {
	var out []Threshold
	for _, s := range sortedKeys(m) {
		sig, val := Signal(s), m[s]
		if !sig.Valid(k) {
			return nil, fmt.Errorf("unsupported eviction signal %v", sig)
		}
		if strings.HasSuffix(val, "%") {
			if val == "0%" || val == "100%" { // the kubelet ignores these
				continue
			}
			p, err := parsePercentage(val)
			if err != nil {
				return nil, fmt.Errorf("%s: %w", s, err)
			}
			if p < 0 {
				return nil, fmt.Errorf("eviction percentage threshold %v must be >= 0%%: %s", sig, val)
			}
			if p > 1 {
				return nil, fmt.Errorf("eviction percentage threshold %v must be <= 100%%: %s", sig, val)
			}
			out = append(out, Threshold{Signal: sig, Value: value{Percentage: p, Text: val}})
			continue
		}
		q, err := resource.ParseQuantity(val)
		if err != nil {
			return nil, fmt.Errorf("%s: %q: %w", s, val, err)
		}
		if q.Sign() <= 0 {
			return nil, fmt.Errorf("eviction threshold %v must be positive: %s", sig, &q)
		}
		out = append(out, Threshold{Signal: sig, Value: value{Quantity: &q, Text: val}})
	}
	return out, nil
}

// parsePercentage is the kubelet's: float32 of the number, divided by 100.
func parsePercentage(s string) (float32, error) {
	v, err := strconv.ParseFloat(strings.TrimRight(s, "%"), 32)
	if err != nil {
		return 0, err
	}
	return float32(v) / 100, nil
}

func parseMinReclaim(sig Signal, s string) (value, error) {
	if strings.HasSuffix(s, "%") {
		p, err := parsePercentage(s)
		if err != nil {
			return value{}, err
		}
		if p <= 0 {
			return value{}, fmt.Errorf("eviction percentage minimum reclaim %v must be positive: %s", sig, s)
		}
		return value{Percentage: p, Text: s}, nil
	}
	q, err := resource.ParseQuantity(s)
	if err != nil {
		return value{}, fmt.Errorf("%s: %q: %w", sig, s, err)
	}
	if q.Sign() < 0 {
		return value{}, fmt.Errorf("negative eviction minimum reclaim specified for %v", sig)
	}
	return value{Quantity: &q, Text: s}, nil
}

// Layout is the kubelet's view of the node's filesystems, asked once of
// cadvisor (HasDedicatedImageFs, HasDedicatedContainerFs).
type Layout struct {
	ImageFs bool // the runtime's images are on their own filesystem
	Split   bool // and writable layers are apart from images (on nodefs)
}

func (l Layout) String() string {
	switch {
	case l.ImageFs && l.Split:
		return "split: images on imagefs, writable layers on nodefs"
	case l.ImageFs:
		return "imagefs: images and writable layers on imagefs"
	case l.Split:
		return "containerfs apart, images on nodefs"
	}
	return "one filesystem"
}

// WithContainerFs is UpdateContainerFsThresholds: each containerfs
// threshold (hard and soft, bytes and inodes) becomes a copy of nodefs's
// (one filesystem, or split) or imagefs's (imagefs), overwriting one
// configured in its place. A copy of a threshold that does not exist is
// inert in the kubelet (no operator): it is left out here.
func WithContainerFs(ths []Threshold, l Layout) []Threshold {
	var from, fromInodes Signal
	switch {
	case l.ImageFs == l.Split:
		from, fromInodes = NodeFsAvailable, NodeFsInodesFree
	case l.ImageFs:
		from, fromInodes = ImageFsAvailable, ImageFsInodesFree
	default:
		return slices.Clone(ths) // the kubelet leaves them as configured
	}
	out := slices.Clone(ths)
	for _, p := range []struct {
		sig, src Signal
		hard     bool
	}{{ContainerFsAvailable, from, true}, {ContainerFsAvailable, from, false}, {ContainerFsInodesFree, fromInodes, true}, {ContainerFsInodesFree, fromInodes, false}} {
		var src *Threshold
		idx := -1
		for i := range out {
			if out[i].Signal == p.src && out[i].Hard() == p.hard {
				src = &out[i]
			}
			if out[i].Signal == p.sig && out[i].Hard() == p.hard && out[i].Derived == "" {
				idx = i
			}
		}
		if src == nil {
			if idx >= 0 {
				out = slices.Delete(out, idx, idx+1)
			}
			continue
		}
		t := Threshold{Signal: p.sig, Value: src.Value, MinReclaim: src.MinReclaim, GracePeriod: src.GracePeriod, Derived: string(p.src)}
		if idx >= 0 {
			out[idx] = t
		} else {
			out = append(out, t)
		}
	}
	return out
}
