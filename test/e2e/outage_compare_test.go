package e2e

import (
	"encoding/json"
	"fmt"
	"slices"
	"sort"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
)

// outagePrediction is the part of `outage -o json` the test reads (the
// contract in docs/output.md).
type outagePrediction struct {
	Certain bool     `json:"certain"`
	Victims []string `json:"victims"`
	Outage  *struct {
		Nodes []struct {
			Node    string    `json:"node"`
			Zone    string    `json:"zone"`
			Tainted []float64 `json:"taintedAfterSeconds"`
			Reason  string    `json:"reason"`
			Certain bool      `json:"certain"`
		} `json:"nodes"`
		Zones []struct {
			Zone  string `json:"zone"`
			State string `json:"state"`
			Nodes int    `json:"nodes"`
		} `json:"zones"`
		Pods []struct {
			Pod        string    `json:"pod"`
			Fate       string    `json:"fate"`
			Deleted    []float64 `json:"deletedAfterSeconds"`
			Terminated []float64 `json:"terminatingAfterSeconds"`
			Toleration string    `json:"toleration"`
			Replaced   bool      `json:"replaced"`
			Certain    bool      `json:"certain"`
		} `json:"pods"`
		Replacements []struct {
			For        string   `json:"for"`
			Node       string   `json:"node"`
			Candidates []string `json:"candidates"`
			Reason     string   `json:"reason"`
			Certain    bool     `json:"certain"`
		} `json:"replacements"`
	} `json:"outage"`
}

func parseOutagePrediction(out string) (*outagePrediction, error) {
	var p outagePrediction
	if err := json.Unmarshal([]byte(out), &p); err != nil {
		return nil, fmt.Errorf("plugin JSON: %w", err)
	}
	if p.Outage == nil {
		return nil, fmt.Errorf("plugin JSON has no outage object")
	}
	return &p, nil
}

// outageVerdict counts the comparisons of one scenario.
type outageVerdict struct {
	checked, undetermined int
	mismatches            []string
}

func (v *outageVerdict) fail(format string, args ...any) {
	v.mismatches = append(v.mismatches, fmt.Sprintf(format, args...))
}

// within says whether d lies in the predicted window widened by tol.
func within(d time.Duration, w []float64, tol time.Duration) bool {
	s := d.Seconds()
	return len(w) == 2 && s >= w[0]-tol.Seconds() && s <= w[1]+tol.Seconds()
}

// compareOutage checks every determined answer of p against o.
func compareOutage(p *outagePrediction, o *outageObserved, tol time.Duration) *outageVerdict {
	v := &outageVerdict{}
	compareOutageNodes(v, p, o, tol)
	compareOutagePods(v, p, o, tol)
	compareOutageReplacements(v, p, o)
	compareOutageZones(v, p, o)
	return v
}

func compareOutageNodes(v *outageVerdict, p *outagePrediction, o *outageObserved, tol time.Duration) {
	for _, n := range p.Outage.Nodes {
		got, tainted := o.tainted[n.Node]
		if !n.Certain {
			v.undetermined++
			continue
		}
		v.checked++
		switch {
		case n.Tainted == nil && tainted:
			v.fail("node %s: predicted never tainted (%s), tainted at T+%.1fs", n.Node, n.Reason, got.Seconds())
		case n.Tainted != nil && !tainted:
			v.fail("node %s: predicted tainted within %v s, never tainted", n.Node, n.Tainted)
		case n.Tainted != nil && !within(got, n.Tainted, tol):
			v.fail("node %s: predicted tainted within %v s (±%s), tainted at T+%.1fs", n.Node, n.Tainted, tol, got.Seconds())
		}
	}
}

// compareOutagePods checks each certain pod's fate and deletion time, and
// that no pod the prediction keeps was deleted.
func compareOutagePods(v *outageVerdict, p *outagePrediction, o *outageObserved, tol time.Duration) {
	listed := map[string]bool{}
	for _, pp := range p.Outage.Pods {
		listed[pp.Pod] = true
		got, deleted := o.deleted[pp.Pod]
		if !pp.Certain {
			v.undetermined++
			continue
		}
		v.checked++
		window := pp.Deleted
		if pp.Fate == "stuck" && pp.Terminated != nil {
			window = pp.Terminated
		}
		switch {
		case pp.Fate == "stays" && deleted:
			v.fail("pod %s: predicted stays, deleted at T+%.1fs", pp.Pod, got.Seconds())
		case pp.Fate != "stays" && !deleted:
			v.fail("pod %s: predicted %s within %v s (%s), never deleted", pp.Pod, pp.Fate, window, pp.Toleration)
		case pp.Fate != "stays" && window != nil && !within(got, window, tol):
			v.fail("pod %s: predicted %s within %v s (±%s, %s), deleted at T+%.1fs", pp.Pod, pp.Fate, window, tol, pp.Toleration, got.Seconds())
		}
	}
	for key, at := range o.deleted {
		if !listed[key] {
			v.fail("pod %s: deleted at T+%.1fs, absent from the prediction", key, at.Seconds())
		}
	}
}

// compareOutageReplacements compares, per owner, the nodes the new pods
// were bound to ("" while Pending) with the predicted ones, a tie's
// candidates as a set. Only owners whose every replacement is certain
// are compared.
func compareOutageReplacements(v *outageVerdict, p *outagePrediction, o *outageObserved) {
	type want struct {
		nodes []string // one acceptable set per replacement
		sure  bool
	}
	predicted := map[types.UID]*want{}
	for _, r := range p.Outage.Replacements {
		old, ok := o.before[r.For]
		if !ok || outageOwnerUID(&old) == "" {
			continue
		}
		uid := outageOwnerUID(&old)
		w := predicted[uid]
		if w == nil {
			w = &want{sure: true}
			predicted[uid] = w
		}
		w.sure = w.sure && r.Certain
		set := append([]string{r.Node}, r.Candidates...)
		w.nodes = append(w.nodes, strings.Join(set, "|"))
	}
	observed := map[types.UID][]string{}
	for _, np := range o.created {
		if uid := outageOwnerUID(&np); uid != "" {
			observed[uid] = append(observed[uid], np.Spec.NodeName)
		}
	}
	for uid, w := range predicted {
		if !w.sure {
			v.undetermined++
			continue
		}
		v.checked++
		if miss := outageMatchSets(w.nodes, observed[uid]); miss != "" {
			v.fail("replacements of owner %s: predicted %v, bound to %v (%s)", uid, w.nodes, observed[uid], miss)
		}
	}
}

func outageOwnerUID(p *corev1.Pod) types.UID {
	for _, r := range p.OwnerReferences {
		if r.Controller != nil && *r.Controller {
			return r.UID
		}
	}
	return ""
}

// outageMatchSets matches each observed node to one predicted set
// ("a|b": either), the narrowest sets first; "" when all match.
func outageMatchSets(sets, got []string) string {
	if len(sets) != len(got) {
		return fmt.Sprintf("%d predicted, %d created", len(sets), len(got))
	}
	sets = slices.Clone(sets)
	sort.Slice(sets, func(i, j int) bool { return strings.Count(sets[i], "|") < strings.Count(sets[j], "|") })
	left := slices.Clone(got)
	for _, s := range sets {
		options := strings.Split(s, "|")
		i := slices.IndexFunc(left, func(n string) bool { return slices.Contains(options, n) })
		if i < 0 {
			return "no node for " + s
		}
		left = slices.Delete(left, i, i+1)
	}
	return ""
}

// compareOutageZones compares each zone's final state: the last one the
// controller logged after the failure (Normal when none), or
// FullDisruption everywhere once it entered master disruption mode. A zone
// of excluded nodes only has no state there (handleDisruption drops it
// every pass): not compared.
func compareOutageZones(v *outageVerdict, p *outagePrediction, o *outageObserved) {
	for _, z := range p.Outage.Zones {
		if z.Nodes == 0 {
			v.undetermined++
			continue
		}
		got := o.zones[z.Zone]
		switch {
		case o.allDown:
			got = "FullDisruption"
		case got == "":
			got = "Normal"
		}
		v.checked++
		if got != z.State {
			v.fail("zone %s: predicted %s, the controller says %s", z.Zone, z.State, got)
		}
	}
}
