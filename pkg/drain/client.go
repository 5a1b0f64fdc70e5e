package drain

import (
	"context"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	appsv1client "k8s.io/client-go/kubernetes/typed/apps/v1"
	corev1client "k8s.io/client-go/kubernetes/typed/core/v1"
)

// filterClient is the narrowest kubernetes.Interface that kubectl's
// Helper.GetPodsForDeletion runs on: it lists the one pod being checked and
// gets the snapshot's DaemonSets. The filters make no other call; any other
// would hit the nil embedded clientset and fail loudly in the tests.
type filterClient struct {
	*kubernetes.Clientset
	current    *corev1.Pod
	daemonSets map[string]bool // namespace/name
}

func newFilterClient(daemonSets []*appsv1.DaemonSet) *filterClient {
	c := &filterClient{daemonSets: make(map[string]bool, len(daemonSets))}
	for _, d := range daemonSets {
		c.daemonSets[d.Namespace+"/"+d.Name] = true
	}
	return c
}

func (c *filterClient) CoreV1() corev1client.CoreV1Interface { return filterCore{c: c} }
func (c *filterClient) AppsV1() appsv1client.AppsV1Interface { return filterApps{c: c} }

type filterCore struct {
	corev1client.CoreV1Interface
	c *filterClient
}

func (f filterCore) Pods(string) corev1client.PodInterface { return filterPods{c: f.c} }

type filterPods struct {
	corev1client.PodInterface
	c *filterClient
}

// List answers kubectl's pods-on-the-node query with the current pod only.
func (f filterPods) List(context.Context, metav1.ListOptions) (*corev1.PodList, error) {
	return &corev1.PodList{Items: []corev1.Pod{*f.c.current}}, nil
}

type filterApps struct {
	appsv1client.AppsV1Interface
	c *filterClient
}

func (f filterApps) DaemonSets(ns string) appsv1client.DaemonSetInterface {
	return filterDaemonSets{c: f.c, ns: ns}
}

type filterDaemonSets struct {
	appsv1client.DaemonSetInterface
	c  *filterClient
	ns string
}

// Get says whether the DaemonSet exists, with the API server's NotFound.
func (f filterDaemonSets) Get(_ context.Context, name string, _ metav1.GetOptions) (*appsv1.DaemonSet, error) {
	if !f.c.daemonSets[f.ns+"/"+name] {
		return nil, apierrors.NewNotFound(appsv1.Resource("daemonsets"), name)
	}
	return &appsv1.DaemonSet{ObjectMeta: metav1.ObjectMeta{Namespace: f.ns, Name: name}}, nil
}
