package rules

import (
	"cmp"
	"flag"
	"fmt"
	"maps"
	"os"
	"reflect"
	"slices"
	"strings"
	"testing"
)

var update = flag.Bool("update", false, "rewrite the version table in docs/rules.md")

// Every version-dependent switch, with the versions where it is on under
// default gates. Supporting a new release changes this list visibly: Newest
// moves (so every open range grows by one version) and any new behaviour is
// one new line; its oracle goes in test/versions.
const wantTable = `DeletionCost                            comparator     1.22-1.37  gate PodDeletionCost
LogScale                                comparator     1.22-1.37  gate LogarithmicScaleDown
SidecarRestarts                         comparator     1.32-1.37
RCRanks                                 ReplicaSet/RC  1.21-1.23
BadSiblingSelectorZeroesRanks           ReplicaSet/RC  1.21-1.23
AvailableAtBoundary                     availability   1.34-1.37
Deployment.MathRound                    Deployment     1.31-1.37
Deployment.StrictReplicasAnnotations    Deployment     1.32-1.37
StatefulSet.MinReadySeconds             StatefulSet    1.23-1.37  gate StatefulSetMinReadySeconds
StatefulSet.AutoDeletePVC               StatefulSet    1.27-1.37  gate StatefulSetAutoDeletePVC
StatefulSet.ConcurrentParallel          StatefulSet    1.25-1.37
StatefulSet.StartOrdinal                StatefulSet    1.27-1.37  gate StatefulSetStartOrdinal
StatefulSet.SucceededRecreated          StatefulSet    1.27-1.37
StatefulSet.RecreateSameSync            StatefulSet    1.21-1.27
StatefulSet.UnexpectedController        StatefulSet    1.28-1.37
StatefulSet.UnavailableFirst            StatefulSet    1.34-1.37
StatefulSet.OwnerIndex                  StatefulSet    1.34-1.37
StatefulSet.RecreateStrategy            StatefulSet    1.37-1.37
StatefulSet.RecreateGate                StatefulSet    never      gate StatefulSetRecreateStrategy
StatefulSet.MaxUnavailable              STS update     1.37-1.37  gate MaxUnavailableStatefulSet
StatefulSet.ParallelUnavailableFirst    STS update     1.37-1.37
Autoscaler.ConfigurableTolerance        HorizontalPodAutoscaler1.35-1.37  gate HPAConfigurableTolerance
Job.WantRemaining                       Job            1.22-1.37
Job.OutOfRange                          Job            1.22-1.37
Job.DeleteCap                           Job            1.22-1.37
Job.ElasticIndexed                      Job            1.27-1.37  gate ElasticIndexedJob
Job.TrackingFinalizers                  Job            1.25-1.37  gate JobTrackingWithFinalizers
Job.TrackingAll                         Job            1.26-1.37
DaemonSet.Surge                         DS update      1.22-1.37  gate DaemonSetUpdateSurge
DaemonSet.UnavailableOldCount           DS update      1.28-1.37
Kubelet.NodeReclaimMinReclaim           kubelet        1.22-1.37
Kubelet.ContainerFsSignals              kubelet        1.29-1.37
Kubelet.SplitContainerFs                kubelet        1.31-1.37  gate KubeletSeparateDiskGC
Kubelet.ImageFsInodesDefault            kubelet        1.30-1.37
Kubelet.OneSecondGrace                  kubelet        1.31-1.37
Kubelet.SoftGracePodCap                 kubelet        1.32-1.37
Kubelet.SoftGraceOverwrite              kubelet        never      gate AllowOverwriteTerminationGracePeriodSeconds
Kubelet.PodLevelRequests                kubelet        1.34-1.37  gate PodLevelResources
Kubelet.EffectiveRequests               kubelet        1.34-1.37
Kubelet.SidecarStorageLimits            kubelet        1.37-1.37
Kubelet.MemoryEmptyDirExempt            kubelet        never      gate InPlacePodVerticalScalingMemoryBackedVolumes
`

// onByDefault renders the versions in which a switch is on with default
// gates, as ranges.
func onByDefault(s Switch) string {
	var ranges []string
	start := 0
	for m := Oldest; m <= Newest+1; m++ {
		on := m <= Newest && s.On(m, GatesFor(m))
		switch {
		case on && start == 0:
			start = m
		case !on && start != 0:
			ranges = append(ranges, fmt.Sprintf("1.%d-1.%d", start, m-1))
			start = 0
		}
	}
	if len(ranges) == 0 {
		return "never"
	}
	return strings.Join(ranges, ",")
}

func TestVersionTable(t *testing.T) {
	var b strings.Builder
	for _, s := range Switches {
		line := fmt.Sprintf("%-40s%-15s%-11s", s.Field, s.Kind, onByDefault(s))
		if s.Gate != "" {
			line += "gate " + s.Gate
		}
		b.WriteString(strings.TrimRight(line, " ") + "\n")
	}
	if b.String() != wantTable {
		t.Errorf("version table changed; got:\n%s", b.String())
	}
}

// Every bool of RuleSet is set by exactly one entry of Switches, so no
// version switch can live outside the table.
func TestEverySwitchIsInTheTable(t *testing.T) {
	fields := map[string]bool{}
	var walk func(prefix string, typ reflect.Type)
	walk = func(prefix string, typ reflect.Type) {
		for i := 0; i < typ.NumField(); i++ {
			f := typ.Field(i)
			switch f.Type.Kind() {
			case reflect.Bool:
				fields[prefix+f.Name] = true
			case reflect.Struct:
				walk(prefix+f.Name+".", f.Type)
			}
		}
	}
	walk("", reflect.TypeOf(RuleSet{}))
	seen := map[string]bool{}
	for _, s := range Switches {
		if !fields[s.Field] || seen[s.Field] {
			t.Errorf("switch %s: not a RuleSet bool, or listed twice", s.Field)
		}
		seen[s.Field] = true
		// The ref must point at the field the entry names.
		var r RuleSet
		*s.ref(&r) = true
		v := reflect.ValueOf(r)
		for _, part := range strings.Split(s.Field, ".") {
			v = v.FieldByName(part)
		}
		if !v.Bool() {
			t.Errorf("switch %s sets another field", s.Field)
		}
		if s.Gate != "" {
			if _, ok := gateHistory[s.Gate]; !ok {
				t.Errorf("switch %s: gate %s is not in the gate history", s.Field, s.Gate)
			}
		}
	}
	for f := range fields {
		if !seen[f] {
			t.Errorf("RuleSet.%s is not in Switches", f)
		}
	}
}

// docs/rules.md carries the table between markers; -update rewrites it.
func TestDocsTable(t *testing.T) {
	const path = "../../docs/rules.md"
	const begin, end = "<!-- version-table:begin -->\n", "<!-- version-table:end -->"
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	doc := string(data)
	i, j := strings.Index(doc, begin), strings.Index(doc, end)
	if i < 0 || j < i {
		t.Fatalf("%s has no version-table markers", path)
	}
	got := doc[i+len(begin) : j]
	want := markdownTable()
	if got == want {
		return
	}
	if *update {
		if err := os.WriteFile(path, []byte(doc[:i+len(begin)]+want+doc[j:]), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	t.Errorf("%s's version table is stale: go test ./pkg/rules -run TestDocsTable -update", path)
}

// markdownTable renders Switches and the gate history for docs/rules.md.
func markdownTable() string {
	var b strings.Builder
	b.WriteString("| Switch | Controller | On by default in | Gate | What changes |\n|---|---|---|---|---|\n")
	for _, s := range Switches {
		fmt.Fprintf(&b, "| `%s` | %s | %s | %s | %s |\n", s.Field, s.Kind, onByDefault(s), s.Gate, s.What)
	}
	b.WriteString("\n| Gate | Added | Default on | Locked on | Removed |\n|---|---|---|---|---|\n")
	ver := func(m int) string {
		if m == 0 {
			return "-"
		}
		return fmt.Sprintf("1.%d", m)
	}
	names := slices.SortedFunc(maps.Keys(gateHistory), func(a, b string) int {
		return cmp.Or(cmp.Compare(gateHistory[a].added, gateHistory[b].added), cmp.Compare(a, b))
	})
	for _, name := range names {
		h := gateHistory[name]
		fmt.Fprintf(&b, "| %s | %s | %s | %s | %s |\n", name, ver(h.added), ver(h.defaultOn), ver(h.locked), ver(h.removed))
	}
	return b.String()
}

// A gate that only a StatefulSet reads can be set from the command line.
func TestStatefulSetGateReachesTheRules(t *testing.T) {
	r, err := For(37, map[string]bool{StatefulSetRecreateStrategy: true})
	if err != nil || !r.StatefulSet.RecreateGate || !r.StatefulSet.RecreateStrategy {
		t.Fatalf("For(37, StatefulSetRecreateStrategy=true) = %+v, %v", r.StatefulSet, err)
	}
	if _, err := For(36, map[string]bool{StatefulSetRecreateStrategy: true}); err == nil || !strings.Contains(err.Error(), "does not exist in Kubernetes 1.36") {
		t.Fatalf("1.36 accepted StatefulSetRecreateStrategy: %v", err)
	}
}

func BenchmarkResolve(b *testing.B) {
	for i := 0; i < b.N; i++ {
		_ = Resolve(Newest, nil)
	}
}
