package rules

import (
	"testing"
	"time"
)

// The defaults as each release's source writes them.
func TestOutageDefaults(t *testing.T) {
	for _, c := range []struct {
		minor int
		grace time.Duration
		job   bool
	}{{21, 40 * time.Second, false}, {28, 40 * time.Second, false}, {29, 40 * time.Second, true}, {31, 40 * time.Second, true},
		{32, 50 * time.Second, true}, {37, 50 * time.Second, true}} {
		r := Outage(c.minor)
		if r.NodeMonitorGracePeriod != c.grace || r.JobReplacementPolicy != c.job {
			t.Errorf("1.%d: grace %s job policy %v, want %s %v", c.minor, r.NodeMonitorGracePeriod, r.JobReplacementPolicy, c.grace, c.job)
		}
		if r.NodeEvictionRate != 0.1 || r.SecondaryNodeEvictionRate != 0.01 || r.UnhealthyZoneThreshold != 0.55 || r.LargeClusterSizeThreshold != 50 {
			t.Errorf("1.%d: rates %+v", c.minor, r)
		}
	}
}
