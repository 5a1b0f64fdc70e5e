package inprocess

import (
	"context"
	"fmt"
	"math/rand/v2"
	"sync"
	"time"

	"github.com/go-logr/logr"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes/fake"
	"k8s.io/client-go/tools/cache"
	"k8s.io/klog/v2"
	"k8s.io/kubernetes/pkg/controller/deployment"
	"k8s.io/kubernetes/pkg/controller/replicaset"
)

var quietLogs sync.Once

// cluster is one in-process control plane: the strict API, shared
// informers and the real ReplicaSet and Deployment controllers with the
// kube-controller-manager default of 5 workers each.
type cluster struct {
	cs     *fake.Clientset
	api    *strictAPI
	q      *quiescence
	cancel context.CancelFunc
	done   sync.WaitGroup
}

// startCluster loads objs, starts the informers in a shuffled order with
// small random gaps, waits for them to sync and starts the controllers.
func startCluster(objs []runtime.Object, seed uint64, latency time.Duration) (*cluster, error) {
	quietLogs.Do(func() {
		klog.SetLogger(logr.Discard())
	})
	cs, api := newStrictAPI(seed, 0)
	var pods []runtime.Object
	for _, o := range objs {
		if _, ok := o.(*corev1.Pod); ok {
			pods = append(pods, o)
			continue
		}
		if err := createObject(cs, o.DeepCopyObject()); err != nil {
			return nil, err
		}
	}
	ctx, cancel := context.WithCancel(context.Background())
	q := &quiescence{}
	c := &cluster{cs: cs, api: api, q: q, cancel: cancel}
	f := informers.NewSharedInformerFactory(cs, 0)
	podInf, rsInf, dInf := f.Core().V1().Pods(), f.Apps().V1().ReplicaSets(), f.Apps().V1().Deployments()
	client := concurrentClient{cs, api.delayCall}
	// The controllers get their informers and queues watched (quiescence).
	rsc := replicaset.NewReplicaSetController(ctx, viewedReplicaSets{rsInf, q}, viewedPods{podInf, q}, client, replicaset.BurstReplicas)
	dc, err := deployment.NewDeploymentController(ctx, viewedDeployments{dInf, q}, viewedReplicaSets{rsInf, q}, viewedPods{podInf, q}, client)
	if err != nil {
		cancel()
		return nil, err
	}
	q.watchQueue(rsc)
	q.watchQueue(dc)
	infs := []cache.SharedIndexInformer{podInf.Informer(), rsInf.Informer(), dInf.Informer()}
	rng := rand.New(rand.NewPCG(seed, 11))
	rng.Shuffle(len(infs), func(i, j int) { infs[i], infs[j] = infs[j], infs[i] })
	for _, inf := range infs {
		c.done.Add(1)
		go func() { defer c.done.Done(); inf.Run(ctx.Done()) }()
		time.Sleep(time.Duration(rng.IntN(2000)) * time.Microsecond)
	}
	syncs := make([]cache.InformerSynced, len(infs))
	for i, inf := range infs {
		syncs[i] = inf.HasSynced
	}
	if !cache.WaitForCacheSync(ctx.Done(), syncs...) {
		cancel()
		return nil, fmt.Errorf("informers did not sync")
	}
	// Pods reach the informers one by one, in a random order, as they do
	// when they are created while the controller-manager runs. A List
	// would hand them over in name order, and the order pods enter the
	// controller's cache breaks exact ties (docs/deployments.md).
	rng.Shuffle(len(pods), func(i, j int) { pods[i], pods[j] = pods[j], pods[i] })
	for _, o := range pods {
		if err := createObject(cs, o.DeepCopyObject()); err != nil {
			cancel()
			return nil, err
		}
	}
	for end := time.Now().Add(10 * time.Second); len(podInf.Informer().GetStore().ListKeys()) < len(pods); time.Sleep(time.Millisecond) {
		if time.Now().After(end) {
			cancel()
			return nil, fmt.Errorf("the pod informer did not see every pod")
		}
	}
	api.setLatency(latency)
	c.done.Add(2)
	go func() { defer c.done.Done(); rsc.Run(ctx, 5) }()
	go func() { defer c.done.Done(); dc.Run(ctx, 5) }()
	return c, nil
}

func (c *cluster) stop() {
	c.cancel()
	c.done.Wait()
}

func createObject(cs *fake.Clientset, o runtime.Object) error {
	ctx := context.Background()
	var err error
	switch x := o.(type) {
	case *corev1.Pod:
		_, err = cs.CoreV1().Pods(x.Namespace).Create(ctx, x, metav1.CreateOptions{})
	case *appsv1.ReplicaSet:
		_, err = cs.AppsV1().ReplicaSets(x.Namespace).Create(ctx, x, metav1.CreateOptions{})
	case *appsv1.Deployment:
		_, err = cs.AppsV1().Deployments(x.Namespace).Create(ctx, x, metav1.CreateOptions{})
	default:
		err = fmt.Errorf("unsupported object %T", o)
	}
	return err
}

// settle waits until the controllers can do nothing more by themselves
// (quiescence: every write has reached their handlers, no work queued or
// under way, no retry waiting) and have caught up (every ReplicaSet's and
// the Deployment's status observed its generation, every ReplicaSet counts
// spec.replicas pods), at most timeout. It does not count on wall time: a
// starved or descheduled controller is waited for however long it takes.
func (c *cluster) settle(timeout time.Duration) error {
	end := time.Now().Add(timeout)
	for !c.q.quiet(c.versions) || !c.caughtUp() {
		if time.Now().After(end) {
			return fmt.Errorf("controllers not settled after %v (%s; %s)", timeout, c.q.describe(), c.lagging())
		}
		time.Sleep(5 * time.Millisecond)
	}
	return nil
}

// versions is the API's current state: resource -> namespace/name ->
// resourceVersion.
func (c *cluster) versions() (map[string]map[string]string, error) {
	ds, rss, pods, err := c.state(metav1.NamespaceAll)
	if err != nil {
		return nil, err
	}
	out := map[string]map[string]string{"deployments": {}, "replicasets": {}, "pods": {}}
	for _, d := range ds.Items {
		out["deployments"][d.Namespace+"/"+d.Name] = d.ResourceVersion
	}
	for _, r := range rss.Items {
		out["replicasets"][r.Namespace+"/"+r.Name] = r.ResourceVersion
	}
	for _, p := range pods.Items {
		out["pods"][p.Namespace+"/"+p.Name] = p.ResourceVersion
	}
	return out, nil
}

func (c *cluster) caughtUp() bool { return c.lagging() == "" }

// lagging names the first status that has not caught up ("" when none).
func (c *cluster) lagging() string {
	ds, rss, _, err := c.state(ns)
	if err != nil {
		return err.Error()
	}
	var sum int32
	for _, r := range rss.Items {
		if r.Status.ObservedGeneration != r.Generation || r.Spec.Replicas == nil || r.Status.Replicas != *r.Spec.Replicas {
			return fmt.Sprintf("ReplicaSet %s: generation %d observed %d, replicas %d of %v", r.Name, r.Generation, r.Status.ObservedGeneration, r.Status.Replicas, r.Spec.Replicas)
		}
		sum += r.Status.Replicas
	}
	// The deployment controller has synced since the last ReplicaSet
	// status change (its status adds them up), so a pending rollout step
	// would have been taken.
	for _, d := range ds.Items {
		if d.Status.ObservedGeneration != d.Generation || d.Status.Replicas != sum {
			return fmt.Sprintf("Deployment %s: generation %d observed %d, replicas %d, its ReplicaSets %d", d.Name, d.Generation, d.Status.ObservedGeneration, d.Status.Replicas, sum)
		}
	}
	return ""
}

// state lists the Deployment, ReplicaSets and pods of ns.
func (c *cluster) state(ns string) (*appsv1.DeploymentList, *appsv1.ReplicaSetList, *corev1.PodList, error) {
	ctx := context.Background()
	ds, err := c.cs.AppsV1().Deployments(ns).List(ctx, metav1.ListOptions{})
	if err != nil {
		return nil, nil, nil, err
	}
	rss, err := c.cs.AppsV1().ReplicaSets(ns).List(ctx, metav1.ListOptions{})
	if err != nil {
		return nil, nil, nil, err
	}
	pods, err := c.cs.CoreV1().Pods(ns).List(ctx, metav1.ListOptions{})
	return ds, rss, pods, err
}

// scale sets the Deployment's spec.replicas, retrying conflicts.
func (c *cluster) scale(ns, name string, replicas int32) error {
	ctx := context.Background()
	for i := 0; i < 20; i++ {
		d, err := c.cs.AppsV1().Deployments(ns).Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			return err
		}
		d.Spec.Replicas = &replicas
		if _, err = c.cs.AppsV1().Deployments(ns).Update(ctx, d, metav1.UpdateOptions{}); err == nil {
			return nil
		}
	}
	return fmt.Errorf("could not scale %s", name)
}
