package eviction

import (
	"strings"
	"testing"

	"github.com/scale-preview/scale-preview/pkg/rules"
)

// FuzzThresholds: any configured values parse or fail with one line, never
// panic; a parsed percentage is within 0..1 and a quantity positive, as the
// kubelet requires.
func FuzzThresholds(f *testing.F) {
	for _, s := range []string{"100Mi", "10%", "0%", "100%", "-1", "1e3", "5.5%", "abc", "", "0.5Ki"} {
		f.Add("memory.available", s, s, "30s")
	}
	f.Add("containerfs.available", "10%", "1Gi", "1m")
	f.Fuzz(func(t *testing.T, signal, value, reclaim, grace string) {
		k := rules.Defaults(rules.Newest).Kubelet
		ths, err := ParseThresholds(k, []string{"pods"}, map[string]string{signal: value}, map[string]string{signal: value},
			map[string]string{signal: grace}, map[string]string{signal: reclaim})
		if err != nil {
			if strings.Contains(err.Error(), "\n") {
				t.Fatalf("multi-line error %q", err)
			}
			return
		}
		for _, th := range ths {
			if th.Value.Quantity == nil && (th.Value.Percentage < 0 || th.Value.Percentage > 1) {
				t.Fatalf("percentage %v out of range from %q", th.Value.Percentage, value)
			}
			if th.Value.Quantity != nil && th.Value.Quantity.Sign() <= 0 {
				t.Fatalf("non-positive quantity from %q", value)
			}
			_ = th.Value.resolve(1 << 40)
		}
	})
}
