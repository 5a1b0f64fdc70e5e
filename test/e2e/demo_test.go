package e2e

import (
	"context"
	"fmt"
	"os"
	"os/signal"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/util/intstr"
)

// TestDemoCluster (make demo-cluster) starts the local control plane with a
// sample mid-rollout Deployment and a StatefulSet, prints the kubeconfig
// and sample commands, and keeps running until Ctrl-C (SIGINT/SIGTERM).
// It runs only with E2E_DEMO=1: never as part of the suite.
func TestDemoCluster(t *testing.T) {
	if os.Getenv("E2E_DEMO") != "1" {
		t.Skip("set E2E_DEMO=1 (make demo-cluster) to start a demo control plane")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	// The Deployment of rolling.go, after the scale: 10 replicas mid-rollout at old/new 9/3,
	// the new pods not ready. Scaling it to 3 splits 4/1, then the rollout
	// deletes two more old pods and creates two new ones.
	web := &scenarioRun{ns: "demo", states: map[string]podState{}, sc: &scenario{
		name: "demo-web", kind: kindDeployment, replicas: 10, target: 3,
		maxSurge: ptrTo(intstr.FromInt32(2)), maxUnavailable: ptrTo(intstr.FromInt32(1)),
		states: []podState{
			running("node-a", 100*day), running("node-b", 60*day).withRestarts(3), running("node-c", 30*day),
			running("node-a", 12*day), running("node-b", 5*day).withCost("100"), running("node-a", 2*day),
			running("node-c", 20*time.Hour), running("node-a", 3*time.Hour), running("node-b", 40*time.Minute),
			running("node-c", 7*time.Minute),
		},
		rollout:     true,
		extraStates: []podState{notReady("node-a"), notReady("node-b"), pending("")},
	}}
	// An OrderedReady StatefulSet, every pod ready: scaling to 2 deletes
	// web-4, web-3, web-2, one at a time (highest ordinal first).
	db := &scenarioRun{ns: "demo-db", states: map[string]podState{}, sc: &scenario{
		name: "demo-db", kind: kindSTS, replicas: 5, target: 2,
		states: []podState{
			running("node-a", 30*day), running("node-b", 20*day), running("node-c", 10*day),
			running("node-a", 5*day), running("node-b", day),
		},
	}}
	for _, r := range []*scenarioRun{web, db} {
		if err := r.prepare(ctx); err != nil {
			r.dumpNamespace(t)
			t.Fatalf("prepare %s: %v", r.sc.name, err)
		}
	}
	binDir := env.build.binDir
	var b strings.Builder
	fmt.Fprintf(&b, "\n================ scale-preview demo cluster (Kubernetes v1.37.1 on loopback) ================\n")
	fmt.Fprintf(&b, "API server:  %s   (etcd, kube-apiserver and kube-controller-manager; no scheduler, no kubelet:\n", env.cp.apiURL)
	fmt.Fprintf(&b, "             pods never run; their node, phase and readiness were written by the demo)\n")
	fmt.Fprintf(&b, "kubeconfig:  %s   (admin)\n", env.cp.adminKubeconfig)
	fmt.Fprintf(&b, "             %s   (read-only user \"viewer\", the plugin's least privilege)\n", env.cp.viewerKubeconfig)
	fmt.Fprintf(&b, "Workloads:   deploy/web -n demo (10 replicas, mid-rollout: old/new 9/3, new pods not ready)\n")
	fmt.Fprintf(&b, "             sts/web -n demo-db (5 replicas, OrderedReady)\n\n")
	fmt.Fprintf(&b, "In another shell:\n")
	fmt.Fprintf(&b, "  export KUBECONFIG=%s\n", env.cp.adminKubeconfig)
	if env.pluginPath != "" {
		fmt.Fprintf(&b, "  export PATH=%s:$PATH      # puts kubectl-scale_preview where kubectl finds plugins\n", filepath.Dir(env.pluginPath))
	} else {
		fmt.Fprintf(&b, "  # the plugin did not build (%s)\n", env.pluginMissing)
	}
	fmt.Fprintf(&b, "  kubectl get deploy,rs,sts,pods -A -o wide\n")
	fmt.Fprintf(&b, "  kubectl scale-preview deploy/web --replicas=3 -n demo\n")
	fmt.Fprintf(&b, "  kubectl scale-preview deploy/web --replicas=3 -n demo -o wide\n")
	fmt.Fprintf(&b, "  kubectl scale-preview sts/web --replicas=2 -n demo-db\n")
	fmt.Fprintf(&b, "  kubectl scale-preview deploy/web --replicas=3 -n demo --kubeconfig %s -o json\n", env.cp.viewerKubeconfig)
	fmt.Fprintf(&b, "  kubectl scale deploy/web --replicas=3 -n demo && kubectl get pods -n demo   # then compare\n")
	fmt.Fprintf(&b, "(binaries in %s)\n", binDir)
	fmt.Fprintf(&b, "Press Ctrl-C to stop the control plane.\n")
	fmt.Fprintf(&b, "==============================================================================================\n")
	fmt.Fprint(os.Stderr, b.String())

	sig, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	tick := time.NewTicker(30 * time.Second)
	defer tick.Stop()
	for {
		select {
		case <-sig.Done():
			fmt.Fprintln(os.Stderr, "\ndemo: stopping the control plane")
			return
		case <-tick.C:
			if err := env.cp.crashed(); err != nil {
				t.Fatalf("control plane is down: %v", err)
			}
		}
	}
}
