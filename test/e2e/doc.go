// Package e2e is the real control-plane end-to-end suite of scale-preview.
//
// It builds etcd, kube-apiserver, kube-controller-manager and
// kube-scheduler v1.37.1 from the Go module proxy, starts the first three on
// loopback ports (no kubelet; the scheduler only for TestPreemptE2E), drives pods by hand through the binding and status
// subresources, runs the plugin binary against each scenario as a read-only
// user, then scales for real and checks that the controllers deleted what
// the plugin predicted. All code lives in _test.go files; see README.md.
package e2e
