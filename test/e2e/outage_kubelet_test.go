package e2e

import (
	"context"
	"sync"
	"time"

	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
)

// outageKubelet is the node half of the fake kubelet when the node
// lifecycle controller runs: it renews each node's Lease every renew
// interval and its Ready heartbeat every 10 s, and stops for the failed
// nodes. It never touches taints (the controller removes the not-ready
// one admission adds) and keeps a failed node's Lease object, which the
// NodeControllerLeaseCircuitBreaker gate re-reads.
type outageKubelet struct {
	c     kubernetes.Interface
	renew time.Duration

	mu     sync.Mutex
	failed map[string]string // node -> "unreachable" | "not-ready"
	leases map[string]*coordinationv1.Lease
	status map[string]time.Time // last Ready heartbeat written
}

// startOutageKubelet runs the drain's fake kubelet with this node loop;
// pods on unreachable nodes are left alone (nobody runs or removes them).
func startOutageKubelet(c kubernetes.Interface, renew time.Duration) (*fakeKubelet, *outageKubelet) {
	ok := &outageKubelet{c: c, renew: renew, failed: map[string]string{},
		leases: map[string]*coordinationv1.Lease{}, status: map[string]time.Time{}}
	k := startFakeKubeletWith(&fakeKubelet{c: c, nodes: ok.sync, down: ok.unreachable})
	return k, ok
}

// fail stops the kubelets of nodes: unreachable stops every report,
// not-ready keeps the Lease and reports Ready=False. It returns the time.
func (ok *outageKubelet) fail(nodes []string, condition string) time.Time {
	ok.mu.Lock()
	defer ok.mu.Unlock()
	for _, n := range nodes {
		ok.failed[n] = condition
	}
	return time.Now()
}

// forget drops a torn-down scenario's nodes.
func (ok *outageKubelet) forget(nodes []string) {
	ok.mu.Lock()
	defer ok.mu.Unlock()
	for _, n := range nodes {
		delete(ok.failed, n)
		delete(ok.leases, n)
		delete(ok.status, n)
	}
}

func (ok *outageKubelet) unreachable(node string) bool {
	ok.mu.Lock()
	defer ok.mu.Unlock()
	return ok.failed[node] == "unreachable"
}

func (ok *outageKubelet) condition(node string) string {
	ok.mu.Lock()
	defer ok.mu.Unlock()
	return ok.failed[node]
}

// sync renews what is due, eight nodes at a time (a large zone has more
// than 50 nodes and a renewal must not lag behind the grace period).
func (ok *outageKubelet) sync(ctx context.Context) {
	nodes, err := ok.c.CoreV1().Nodes().List(ctx, metav1.ListOptions{})
	if err != nil {
		return
	}
	sem := make(chan struct{}, 8)
	var wg sync.WaitGroup
	for i := range nodes.Items {
		n := &nodes.Items[i]
		cond := ok.condition(n.Name)
		if cond == "unreachable" {
			continue
		}
		wg.Add(1)
		sem <- struct{}{}
		go func() {
			defer func() { <-sem; wg.Done() }()
			ok.renewLease(ctx, n)
			ok.heartbeat(ctx, n, cond == "")
		}()
	}
	wg.Wait()
}

func (ok *outageKubelet) renewLease(ctx context.Context, n *corev1.Node) {
	ok.mu.Lock()
	l := ok.leases[n.Name]
	ok.mu.Unlock()
	if l != nil && time.Since(l.Spec.RenewTime.Time) < ok.renew {
		return
	}
	now := metav1.NewMicroTime(time.Now())
	var err error
	if l == nil {
		l, err = ok.c.CoordinationV1().Leases(corev1.NamespaceNodeLease).Get(ctx, n.Name, metav1.GetOptions{})
		if apierrors.IsNotFound(err) {
			l = &coordinationv1.Lease{ObjectMeta: metav1.ObjectMeta{Name: n.Name, Namespace: corev1.NamespaceNodeLease,
				OwnerReferences: []metav1.OwnerReference{{APIVersion: "v1", Kind: "Node", Name: n.Name, UID: n.UID}}},
				Spec: coordinationv1.LeaseSpec{HolderIdentity: ptrTo(n.Name),
					LeaseDurationSeconds: ptrTo(int32(4 * ok.renew / time.Second)), RenewTime: &now}}
			l, err = ok.c.CoordinationV1().Leases(corev1.NamespaceNodeLease).Create(ctx, l, metav1.CreateOptions{})
		}
	} else {
		l = l.DeepCopy()
		l.Spec.RenewTime = &now
		l, err = ok.c.CoordinationV1().Leases(corev1.NamespaceNodeLease).Update(ctx, l, metav1.UpdateOptions{})
	}
	ok.mu.Lock()
	defer ok.mu.Unlock()
	if err != nil {
		delete(ok.leases, n.Name) // read it again next time
		return
	}
	ok.leases[n.Name] = l
}

// heartbeat writes Ready=True every 10 s, or Ready=False once for a
// not-ready node.
func (ok *outageKubelet) heartbeat(ctx context.Context, n *corev1.Node, ready bool) {
	cur := corev1.ConditionUnknown
	for _, c := range n.Status.Conditions {
		if c.Type == corev1.NodeReady {
			cur = c.Status
		}
	}
	ok.mu.Lock()
	last := ok.status[n.Name]
	ok.mu.Unlock()
	want, reason := corev1.ConditionTrue, "KubeletReady"
	if !ready {
		want, reason = corev1.ConditionFalse, "KubeletNotReady"
	}
	if cur == want && time.Since(last) < 10*time.Second {
		return
	}
	now := metav1.Now()
	var conds []corev1.NodeCondition
	for _, c := range n.Status.Conditions {
		if c.Type != corev1.NodeReady {
			conds = append(conds, c)
		}
	}
	conds = append(conds, corev1.NodeCondition{Type: corev1.NodeReady, Status: want, Reason: reason,
		LastHeartbeatTime: now, LastTransitionTime: now})
	n.Status.Conditions = conds
	if _, err := ok.c.CoreV1().Nodes().UpdateStatus(ctx, n, metav1.UpdateOptions{}); err == nil {
		ok.mu.Lock()
		ok.status[n.Name] = now.Time
		ok.mu.Unlock()
	}
}
