package e2e

import (
	"context"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"
)

// steerCase is a scale-in where the operator asks the plugin which
// deletion costs make the controller delete the pods they want (issue 7).
type steerCase struct {
	sc *scenario
	// spare and target are indexes into the initial pods (state order).
	spare, target []int
	targetNode    string
	// impossible: the plugin must answer possible=false with a reason
	// containing every string of reasonHas; nothing is scaled.
	impossible bool
	reasonHas  []string
	// check is a hand-written check of steering.wanted.
	check func(r *scenarioRun, st *steering) error
	short bool
}

func steerCases() []steerCase {
	return []steerCase{
		{
			// A standalone ReplicaSet (ranks 0): R6 deletes the two most
			// recently ready pods (idx 4, 3). Spare idx 4: the next one in
			// order (idx 2) must go instead.
			sc: &scenario{name: "steer-rs-spare-one", kind: kindRS, replicas: 5, target: 3,
				states: []podState{
					running("node-a", 100*day), running("node-b", 60*day), running("node-a", 20*day),
					running("node-b", 5*time.Hour), running("node-a", 10*time.Minute),
				}},
			spare: []int{4},
			check: wantIdx(2, 3),
			short: true,
		},
		{
			// Target the two longest-ready pods, which R6 would keep.
			sc: &scenario{name: "steer-rs-target-two", kind: kindRS, replicas: 6, target: 4,
				states: []podState{
					running("node-a", 150*day), running("node-b", 120*day), running("node-a", 30*day),
					running("node-b", 9*day), running("node-a", 2*day), running("node-b", 3*time.Hour),
				}},
			target: []int{0, 1},
			check:  wantIdx(0, 1),
		},
		{
			// A Deployment with one active ReplicaSet: node-a is crowded,
			// so R5 would empty it first; target node-c (two long-ready
			// pods) instead: both go, plus the first of the rest in order.
			sc: &scenario{name: "steer-deploy-target-node", kind: kindDeployment, replicas: 6, target: 3,
				states: []podState{
					running("node-a", 40*day), running("node-a", 20*day), running("node-a", 10*day),
					running("node-b", 5*day), running("node-c", 150*day), running("node-c", 120*day),
				}},
			targetNode: "node-c",
			check: func(r *scenarioRun, st *steering) error {
				if err := wantIdxSubset(4, 5)(r, st); err != nil {
					return err
				}
				if len(st.Wanted) != 3 {
					return fmt.Errorf("wanted %v, want 3 pods", st.Wanted)
				}
				return nil
			},
		},
		{
			// A Deployment with one active ReplicaSet: R5 then R6 delete
			// idx 1 and 2 (crowded node-a, most recently ready first).
			// Spare idx 1 and target idx 3 (node-b, 90 days ready): idx 3
			// and idx 2 must go.
			sc: &scenario{name: "steer-deploy-spare-and-target", kind: kindDeployment, replicas: 5, target: 3,
				states: []podState{
					running("node-a", 200*day), running("node-a", 2*day), running("node-a", 50*day),
					running("node-b", 90*day), running("node-b", 7*day),
				}},
			spare:  []int{1},
			target: []int{3},
			check: func(r *scenarioRun, st *steering) error {
				if err := wantIdxSubset(3)(r, st); err != nil {
					return err
				}
				if slices.Contains(st.Wanted, r.initial[1]) || len(st.Wanted) != 2 {
					return fmt.Errorf("wanted %v: want 2 pods, with %s and without %s", st.Wanted, r.initial[3], r.initial[1])
				}
				return nil
			},
		},
		{
			// Impossible: the not-ready pod goes before any ready one by R3,
			// which comes before deletion cost; sparing it would need a
			// ready pod to go first.
			sc: &scenario{name: "steer-impossible-readiness", kind: kindRS, replicas: 4, target: 3,
				states: []podState{
					notReady("node-a"), running("node-a", 30*day), running("node-b", 20*day), running("node-b", day),
				}},
			spare:      []int{0},
			impossible: true,
			reasonHas:  []string{"R3", "readiness"},
			short:      true,
		},
	}
}

// wantIdx: steering.wanted is exactly these initial pods.
func wantIdx(idx ...int) func(r *scenarioRun, st *steering) error {
	return func(r *scenarioRun, st *steering) error {
		var want []string
		for _, i := range idx {
			want = append(want, r.initial[i])
		}
		if !sameSet(st.Wanted, want) {
			return fmt.Errorf("wanted %v, want %v (state indexes %v)", st.Wanted, want, idx)
		}
		return nil
	}
}

// wantIdxSubset: steering.wanted contains these initial pods.
func wantIdxSubset(idx ...int) func(r *scenarioRun, st *steering) error {
	return func(r *scenarioRun, st *steering) error {
		for _, i := range idx {
			if !slices.Contains(st.Wanted, r.initial[i]) {
				return fmt.Errorf("wanted %v does not contain %s (state index %d)", st.Wanted, r.initial[i], i)
			}
		}
		return nil
	}
}

func sameSet(a, b []string) bool {
	a, b = slices.Clone(a), slices.Clone(b)
	slices.Sort(a)
	slices.Sort(b)
	return slices.Equal(a, b)
}

// TestSteering runs the plugin with --spare/--target/--target-node, applies
// the deletion-cost annotations it prints (as admin), waits for the
// controller's informer, scales for real and checks that exactly
// steering.wanted died. The scale itself also goes through the usual
// plugin-vs-controllers comparison (the plugin, run again without the
// flags, must now predict the wanted pods).
func TestSteering(t *testing.T) {
	needPlugin(t)
	for _, c := range steerCases() {
		t.Run(c.sc.name, func(t *testing.T) {
			if testing.Short() && !c.short {
				t.Skip("not in the -short set")
			}
			r := newRun(c.sc)
			ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
			defer cancel()
			if err := r.prepare(ctx); err != nil {
				r.dumpNamespace(t)
				t.Fatalf("prepare: %v", err)
			}
			var flags []string
			for _, i := range c.spare {
				flags = append(flags, "--spare", r.initial[i])
			}
			if len(c.target) > 0 {
				var names []string
				for _, i := range c.target {
					names = append(names, r.initial[i])
				}
				flags = append(flags, "--target="+strings.Join(names, ","))
			}
			if c.targetNode != "" {
				flags = append(flags, "--target-node", c.targetNode)
			}
			pred, run, err := predictWith(ctx, c.sc.kind, r.ns, workloadName, c.sc.target, r.seq%2 == 0, flags...)
			if err != nil {
				t.Fatalf("plugin: %v", err)
			}
			t.Logf("plugin %s (%s): victims %v", strings.Join(run.args, " "), run.duration.Round(time.Millisecond), pred.Victims)
			st := pred.Steering
			if st == nil {
				t.Fatalf("no steering section in the JSON: %s", firstLines(run.stdout, 60))
			}
			t.Logf("  steering: possible=%v verified=%v wanted=%v annotations=%+v reason=%q", st.Possible, st.Verified, st.Wanted, st.Annotations, st.Reason)
			for _, cmd := range st.Commands {
				t.Logf("    %s", cmd)
			}
			if c.impossible {
				if st.Possible || st.Verified || len(st.Annotations) > 0 {
					t.Errorf("possible=%v verified=%v annotations=%v, want an impossible answer", st.Possible, st.Verified, st.Annotations)
				}
				for _, s := range c.reasonHas {
					if !strings.Contains(st.Reason, s) {
						t.Errorf("reason %q does not name %q", st.Reason, s)
					}
				}
				return
			}
			if !st.Possible || !st.Verified {
				t.Fatalf("possible=%v verified=%v (%s), want a verified answer", st.Possible, st.Verified, st.Reason)
			}
			if want := int(c.sc.replicas - c.sc.target); len(st.Wanted) != want {
				t.Errorf("wanted %v: %d pods, the scale-in deletes %d", st.Wanted, len(st.Wanted), want)
			}
			for _, i := range c.spare {
				if slices.Contains(st.Wanted, r.initial[i]) {
					t.Errorf("spared pod %s is in wanted %v", r.initial[i], st.Wanted)
				}
			}
			for _, i := range c.target {
				if !slices.Contains(st.Wanted, r.initial[i]) {
					t.Errorf("target %s is not in wanted %v", r.initial[i], st.Wanted)
				}
			}
			if c.check != nil {
				if err := c.check(r, st); err != nil {
					t.Errorf("steering.wanted: %v", err)
				}
			}
			if len(st.Annotations) == 0 || len(st.Commands) != len(st.Annotations) {
				t.Errorf("%d annotations, %d commands: want one command per annotation, and some annotation", len(st.Annotations), len(st.Commands))
			}
			// Apply the answer as admin, give the informer a moment.
			for _, a := range st.Annotations {
				if _, ok := r.states[a.Pod]; !ok {
					t.Errorf("annotation for %s, which is not one of the scenario's pods", a.Pod)
				}
				if err := annotatePod(ctx, env.cp.admin, r.ns, a.Pod, map[string]string{deletionCostAnnotation: strconv.Itoa(int(a.Cost))}); err != nil {
					t.Fatalf("annotate %s: %v", a.Pod, err)
				}
				r.notef("steering: %s=%d on %s (was %q)", deletionCostAnnotation, a.Cost, a.Pod, a.Was)
			}
			time.Sleep(2 * time.Second)
			r.run(t)
			if r.pred != nil && !sameSet(r.pred.Victims, st.Wanted) {
				t.Errorf("with the annotations applied, the plugin predicts %v, not the wanted %v", r.pred.Victims, st.Wanted)
			}
			if !sameSet(r.deleted, st.Wanted) {
				t.Errorf("STEERING FAILED: the controllers deleted %v, steering.wanted was %v", r.deleted, st.Wanted)
			} else {
				t.Logf("  STEERING OK: the controllers deleted exactly the wanted %v", st.Wanted)
			}
		})
	}
}
