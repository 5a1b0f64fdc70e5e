package e2e

// The scenario runner: what a scenario is, and run, which takes a
// prepared scenario through predict, scale, observe and compare.

import (
	"context"
	"fmt"
	"regexp"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/intstr"
)

const (
	kindDeployment = "Deployment"
	kindRS         = "ReplicaSet"
	kindRC         = "ReplicationController"
	kindSTS        = "StatefulSet"

	workloadName = "web"
)

// scenario describes one scale-in against the real controllers.
type scenario struct {
	name     string
	kind     string
	replicas int32 // initial spec.replicas
	target   int32 // spec.replicas after the scale-in
	// states are applied to the initial pods in index order (pods sorted by
	// name, StatefulSet pods by ordinal). Missing entries mean "ready on
	// node-a for 1h".
	states []podState
	// extraStates are applied, in order, to pods created later (rollout,
	// replacement of a terminating pod). Missing entries leave the new pod
	// unbound and Pending.
	extraStates []podState
	sidecar     bool

	// desiredApply, if set, makes the scale-in itself (kubectl apply of a
	// desired manifest) instead of patching spec.replicas.
	desiredApply func(ctx context.Context, r *scenarioRun) error

	// Deployment
	maxSurge, maxUnavailable *intstr.IntOrString
	rollout                  bool // change the pod template once the initial pods have their states
	// secondRollout changes the template again once the first rollout's
	// pods have their states: a third ReplicaSet. The second keeps the pods
	// that were available; the controller scales its unavailable ones away.
	secondRollout bool
	// paused pauses the Deployment (after the rollout started): the scale
	// then only splits the replicas, the rollout does not continue.
	paused bool
	// growFrom creates the workload with this many replicas first, waits
	// growDelay, then grows it to replicas: pods get different creation times.
	growFrom  int32
	growDelay time.Duration

	// StatefulSet
	parallel     bool
	startOrdinal *int32

	// orphan is a pod created (with this state) before an RS/RC, matching
	// its selector, so that the controller adopts it.
	orphan *podState
	// terminate lists pod indexes deleted (gracefully: they stay
	// Terminating, being bound) before the prediction.
	terminate []int

	// expect is a hand-written expectation checked against the real
	// controllers, independent of the plugin.
	expect func(r *scenarioRun) error
	// quiet is how long nothing must change before the controllers are
	// considered done after the scale. Default per kind.
	quiet time.Duration
	// stableMargin overrides E2E_STABLE_MARGIN for this scenario.
	stableMargin time.Duration
}

// scenarioRun is the state of one scenario.
type scenarioRun struct {
	sc     *scenario
	seq    int
	ns     string
	notes  []string
	states map[string]podState // pod name -> state applied
	// prepared pods, in state-index order
	initial  []string
	orphan   string
	prepErr  error
	prepTime time.Duration

	pred       *prediction
	predRun    *pluginRun
	predReason string // why there is no prediction

	before     []*corev1.Pod // snapshot just before the scale
	beforeByN  map[string]*corev1.Pod
	scaleTime  time.Time
	deleted    []string // snapshot pods that got a deletionTimestamp or vanished, in order
	forced     []string // pods force-deleted by the runner (StatefulSet OrderedReady)
	created    []string // pods created after the scale
	observeDur time.Duration
	oracle     *oracleResult

	// Deployments: what happened to the ReplicaSets, for the step checks.
	rsBefore   []appsv1.ReplicaSet // listed just before the scale
	rsEvents   []rsMark            // every ReplicaSet watch event after it
	deletedAt  map[string]podMark  // deleted pod -> owner and resourceVersion
	createdAt  []podMark           // pods created after the scale
	stepReport *stepReport         // filled by checkRollout
}

// podMark is a pod deletion or creation seen by the watch: the owning
// controller and the resourceVersion (the etcd revision) of the event.
type podMark struct {
	name  string
	owner string
	rv    uint64
}

// rsMark is one ReplicaSet watch event.
type rsMark struct {
	name     string
	uid      types.UID
	rv       uint64
	gen      int64
	replicas int32
	obsGen   int64
	revision string
	desired  string // the deployment.kubernetes.io/desired-replicas annotation
}

var nsSeq atomic.Int64

func slug(s string) string {
	s = strings.ToLower(regexp.MustCompile(`[^a-zA-Z0-9]+`).ReplaceAllString(s, "-"))
	s = strings.Trim(s, "-")
	if len(s) > 40 {
		s = strings.Trim(s[:40], "-")
	}
	return s
}

func newRun(sc *scenario) *scenarioRun {
	seq := int(nsSeq.Add(1))
	return &scenarioRun{sc: sc, seq: seq, ns: fmt.Sprintf("e2e-%03d-%s", seq, slug(sc.name)), states: map[string]podState{}}
}

func (r *scenarioRun) notef(format string, args ...any) {
	r.notes = append(r.notes, fmt.Sprintf(format, args...))
}

func (r *scenarioRun) stateful() bool { return r.sc.kind == kindSTS }
func (r *scenarioRun) orderedReady() bool {
	return r.sc.kind == kindSTS && !r.sc.parallel
}

func (sc *scenario) selectorLabels() map[string]string { return map[string]string{"app": workloadName} }

// ---------------------------------------------------------------- run

// run executes a prepared scenario as a (sub)test.
func (r *scenarioRun) run(t *testing.T) {
	t.Helper()
	if err := env.cp.crashed(); err != nil {
		t.Fatalf("control plane is down: %v", err)
	}
	t.Logf("scenario %q: %s %s/%s %d -> %d (namespace %s)", r.sc.name, r.sc.kind, r.ns, workloadName, r.sc.replicas, r.sc.target, r.ns)
	if r.prepErr != nil {
		r.dumpNamespace(t)
		t.Fatalf("prepare: %v", r.prepErr)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()

	// A plugin error is reported at the end: the controllers' behaviour is
	// still observed and checked.
	predErr := r.predict(ctx)
	if predErr != nil {
		r.pred = nil
	}
	err := r.scaleAndObserve(ctx)
	for _, n := range r.notes {
		t.Log("  " + n)
	}
	t.Logf("  prepared in %s; pods before the scale:", r.prepTime.Round(time.Millisecond))
	for _, p := range sortedByName(r.before) {
		t.Logf("    %s", describePod(p))
	}
	if r.pred != nil {
		t.Logf("  plugin (%s): victims=%v stableUntil=%v version=%s", r.predRun.duration.Round(time.Millisecond), r.pred.Victims, deref(r.pred.StableUntil), r.pred.Rules.KubernetesVersion)
	}
	t.Logf("  controllers deleted (in order): %v; force-deleted: %v; created after the scale: %v; settled %s after the scale",
		r.deleted, r.forced, r.created, r.observeDur.Round(time.Millisecond))
	if err != nil {
		r.dumpNamespace(t)
		t.Fatalf("scale/observe: %v", err)
	}

	// Hand-written expectation about the real controllers.
	if r.sc.expect != nil {
		if err := r.sc.expect(r); err != nil {
			t.Errorf("real controllers: %v", err)
		} else {
			t.Logf("  hand-written expectation met")
		}
	}
	// The real comparator, run on the snapshot.
	r.checkOracle(t)

	if predErr != nil {
		env.stats.pluginError(r.sc.name)
		t.Errorf("plugin: %v", predErr)
		r.dumpOnFailure(t)
		return
	}
	if r.pred == nil {
		r.dumpOnFailure(t)
		t.Skipf("plugin comparison skipped: %s (harness checks ran)", r.predReason)
	}
	r.compare(t)
	r.dumpOnFailure(t)
}

func (r *scenarioRun) dumpOnFailure(t *testing.T) {
	if !t.Failed() {
		return
	}
	if r.predRun != nil {
		t.Logf("plugin output:\n%s", r.predRun.stdout)
	}
	t.Logf("controller-manager log lines for %s:\n%s", r.ns, env.cp.grepLog("kube-controller-manager", r.ns, 40))
}

func (r *scenarioRun) dumpNamespace(t *testing.T) {
	pods, _, err := r.listPods(context.Background())
	if err != nil {
		t.Logf("list pods: %v", err)
		return
	}
	for _, p := range sortedByName(pods) {
		t.Logf("    %s", describePod(p))
	}
	t.Logf("controller-manager log lines for %s:\n%s", r.ns, env.cp.grepLog("kube-controller-manager", r.ns, 40))
}
