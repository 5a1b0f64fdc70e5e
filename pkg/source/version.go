package source

import (
	"context"
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
)

// KubeVersion is the Kubernetes version whose controller rules apply, and
// where it was read.
type KubeVersion struct {
	Version string // e.g. "v1.29.3"
	Source  string // "kube-controller-manager" or "apiserver"
	Detail  string
}

// DetectVersion prefers the kube-controller-manager's own version (the
// rules live there, and it may lag the API server during an upgrade), read
// from its static pod's image on kubeadm-style clusters; otherwise the API
// server's version from discovery.
func DetectVersion(ctx context.Context, client kubernetes.Interface) (KubeVersion, error) {
	pods, err := client.CoreV1().Pods("kube-system").List(ctx, metav1.ListOptions{LabelSelector: "component=kube-controller-manager"})
	if err == nil {
		for _, p := range pods.Items {
			for _, c := range p.Spec.Containers {
				if i := strings.LastIndex(c.Image, ":"); i > 0 && strings.HasPrefix(c.Image[i+1:], "v1.") {
					return KubeVersion{Version: c.Image[i+1:], Source: "kube-controller-manager", Detail: "image of pod kube-system/" + p.Name}, nil
				}
			}
		}
	}
	v, err := client.Discovery().ServerVersion()
	if err != nil {
		return KubeVersion{}, err
	}
	detail := "API server " + v.GitVersion + "; the controller-manager's version was not readable (it may lag by one minor version during upgrades; use --kube-version)"
	return KubeVersion{Version: v.GitVersion, Source: "apiserver", Detail: detail}, nil
}
