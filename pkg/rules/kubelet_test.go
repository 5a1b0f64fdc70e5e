package rules

import "testing"

// The kubelet eviction gates join gateTable, read from pkg/features of the
// same releases: KubeletSeparateDiskGC alpha 1.29, beta (on) 1.31;
// AllowOverwriteTerminationGracePeriodSeconds deprecated (off) 1.32,
// locked 1.35 (eviction reads it 1.32-1.34 only); PodLevelResources alpha
// 1.32, beta (on) 1.34; InPlacePodVerticalScalingMemoryBackedVolumes alpha
// 1.37.
func init() {
	for m, v := range gateTable {
		if m >= 29 {
			v.defaults[KubeletSeparateDiskGC] = m >= 31
		}
		if m >= 32 {
			v.defaults[AllowOverwriteTerminationGracePeriodSeconds] = false
			v.defaults[PodLevelResources] = m >= 34
		}
		if m >= 35 {
			v.locked = append(v.locked, AllowOverwriteTerminationGracePeriodSeconds)
		}
		if m >= 37 {
			v.defaults[InPlacePodVerticalScalingMemoryBackedVolumes] = false
		}
		gateTable[m] = v
	}
}

func TestKubeletSoftGrace(t *testing.T) {
	for _, c := range []struct {
		minor          int
		gates          map[string]bool
		podCap, ignore bool
	}{
		{31, nil, false, false},
		{32, nil, true, false},
		{33, map[string]bool{AllowOverwriteTerminationGracePeriodSeconds: true}, true, true},
		{36, map[string]bool{AllowOverwriteTerminationGracePeriodSeconds: true}, true, false}, // locked off
	} {
		k := Resolve(c.minor, c.gates).Kubelet
		if k.SoftGracePodCap != c.podCap || k.SoftGraceOverwrite != c.ignore {
			t.Errorf("1.%d %v: cap=%v overwrite=%v, want %v %v", c.minor, c.gates, k.SoftGracePodCap, k.SoftGraceOverwrite, c.podCap, c.ignore)
		}
	}
	if _, err := For(36, map[string]bool{AllowOverwriteTerminationGracePeriodSeconds: true}); err == nil {
		t.Error("1.36 accepted AllowOverwriteTerminationGracePeriodSeconds=true, but it is locked")
	}
}
