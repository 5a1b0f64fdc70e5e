package inprocess

import (
	"context"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes"
	typedappsv1 "k8s.io/client-go/kubernetes/typed/apps/v1"
	typedcorev1 "k8s.io/client-go/kubernetes/typed/core/v1"
)

// concurrentClient is the clientset the controllers get: each write waits
// its latency before it enters the fake clientset. client-go's Fake.Invokes
// holds one lock for the whole of a call, so a latency slept inside the
// reactors would run every call one at a time, where a real API server
// works on many at once and commits them in the order they finish.
type concurrentClient struct {
	kubernetes.Interface
	delay func()
}

func (c concurrentClient) AppsV1() typedappsv1.AppsV1Interface {
	return concurrentApps{c.Interface.AppsV1(), c.delay}
}

func (c concurrentClient) CoreV1() typedcorev1.CoreV1Interface {
	return concurrentCore{c.Interface.CoreV1(), c.delay}
}

type concurrentApps struct {
	typedappsv1.AppsV1Interface
	delay func()
}

func (a concurrentApps) ReplicaSets(ns string) typedappsv1.ReplicaSetInterface {
	return concurrentReplicaSets{a.AppsV1Interface.ReplicaSets(ns), a.delay}
}

func (a concurrentApps) Deployments(ns string) typedappsv1.DeploymentInterface {
	return concurrentDeployments{a.AppsV1Interface.Deployments(ns), a.delay}
}

type concurrentCore struct {
	typedcorev1.CoreV1Interface
	delay func()
}

func (c concurrentCore) Pods(ns string) typedcorev1.PodInterface {
	return concurrentPods{c.CoreV1Interface.Pods(ns), c.delay}
}

type concurrentReplicaSets struct {
	typedappsv1.ReplicaSetInterface
	delay func()
}

func (r concurrentReplicaSets) Create(ctx context.Context, rs *appsv1.ReplicaSet, opts metav1.CreateOptions) (*appsv1.ReplicaSet, error) {
	r.delay()
	return r.ReplicaSetInterface.Create(ctx, rs, opts)
}

func (r concurrentReplicaSets) Update(ctx context.Context, rs *appsv1.ReplicaSet, opts metav1.UpdateOptions) (*appsv1.ReplicaSet, error) {
	r.delay()
	return r.ReplicaSetInterface.Update(ctx, rs, opts)
}

func (r concurrentReplicaSets) UpdateStatus(ctx context.Context, rs *appsv1.ReplicaSet, opts metav1.UpdateOptions) (*appsv1.ReplicaSet, error) {
	r.delay()
	return r.ReplicaSetInterface.UpdateStatus(ctx, rs, opts)
}

func (r concurrentReplicaSets) Patch(ctx context.Context, name string, pt types.PatchType, data []byte, opts metav1.PatchOptions, sub ...string) (*appsv1.ReplicaSet, error) {
	r.delay()
	return r.ReplicaSetInterface.Patch(ctx, name, pt, data, opts, sub...)
}

func (r concurrentReplicaSets) Delete(ctx context.Context, name string, opts metav1.DeleteOptions) error {
	r.delay()
	return r.ReplicaSetInterface.Delete(ctx, name, opts)
}

type concurrentDeployments struct {
	typedappsv1.DeploymentInterface
	delay func()
}

func (d concurrentDeployments) Update(ctx context.Context, dep *appsv1.Deployment, opts metav1.UpdateOptions) (*appsv1.Deployment, error) {
	d.delay()
	return d.DeploymentInterface.Update(ctx, dep, opts)
}

func (d concurrentDeployments) UpdateStatus(ctx context.Context, dep *appsv1.Deployment, opts metav1.UpdateOptions) (*appsv1.Deployment, error) {
	d.delay()
	return d.DeploymentInterface.UpdateStatus(ctx, dep, opts)
}

func (d concurrentDeployments) Patch(ctx context.Context, name string, pt types.PatchType, data []byte, opts metav1.PatchOptions, sub ...string) (*appsv1.Deployment, error) {
	d.delay()
	return d.DeploymentInterface.Patch(ctx, name, pt, data, opts, sub...)
}

type concurrentPods struct {
	typedcorev1.PodInterface
	delay func()
}

func (p concurrentPods) Create(ctx context.Context, pod *corev1.Pod, opts metav1.CreateOptions) (*corev1.Pod, error) {
	p.delay()
	return p.PodInterface.Create(ctx, pod, opts)
}

func (p concurrentPods) Patch(ctx context.Context, name string, pt types.PatchType, data []byte, opts metav1.PatchOptions, sub ...string) (*corev1.Pod, error) {
	p.delay()
	return p.PodInterface.Patch(ctx, name, pt, data, opts, sub...)
}

func (p concurrentPods) Delete(ctx context.Context, name string, opts metav1.DeleteOptions) error {
	p.delay()
	return p.PodInterface.Delete(ctx, name, opts)
}
