package cmd

import (
	"fmt"
	"strings"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/restmapper"

	"github.com/scale-preview/scale-preview/pkg/snapshot"
)

// kindHPA is the autoscaler's kind; workload.Predict decides whether it is
// modelled.
const kindHPA = "HorizontalPodAutoscaler"

// modelled maps the group/kinds the plugin can be asked about to the
// snapshot's kind names.
var modelled = map[schema.GroupKind]string{
	{Group: "apps", Kind: "Deployment"}:                     snapshot.Deployment,
	{Group: "apps", Kind: "ReplicaSet"}:                     snapshot.ReplicaSet,
	{Group: "apps", Kind: "StatefulSet"}:                    snapshot.StatefulSet,
	{Group: "", Kind: "ReplicationController"}:              snapshot.ReplicationController,
	{Group: "autoscaling", Kind: "HorizontalPodAutoscaler"}: kindHPA,
	{Group: "", Kind: "Node"}:                               snapshot.Node, // node.go
	{Group: "", Kind: "Pod"}:                                kindPod,       // a pending pod: preemption
	{Group: "batch", Kind: "Job"}:                           snapshot.Job,
}

// unsupported explains kinds that have no scale-in victim choice to predict.
var unsupported = map[schema.GroupKind]string{
	{Group: "apps", Kind: "DaemonSet"}: "DaemonSets have no replica count: their pods go when nodes stop being eligible",
	{Group: "batch", Kind: "CronJob"}:  "CronJobs create Jobs; they are not scaled",
}

// builtinResources is what discovery says about the kinds above, short
// names included. Offline it stands in for the API server's discovery, so
// every form kubectl accepts (deploy, deployment, deployments.apps,
// deployments.v1.apps, Deployment, ...) resolves the same way; tests also
// serve it from the fake clientset's discovery.
var builtinResources = []*metav1.APIResourceList{
	{GroupVersion: "v1", APIResources: []metav1.APIResource{
		apiResource("replicationcontrollers", "ReplicationController", "rc"),
		apiResource("pods", "Pod", "po"),
		clusterResource(apiResource("nodes", "Node", "no")),
	}},
	{GroupVersion: "apps/v1", APIResources: []metav1.APIResource{
		apiResource("deployments", "Deployment", "deploy"),
		apiResource("replicasets", "ReplicaSet", "rs"),
		apiResource("statefulsets", "StatefulSet", "sts"),
		apiResource("daemonsets", "DaemonSet", "ds"),
	}},
	{GroupVersion: "autoscaling/v2", APIResources: []metav1.APIResource{apiResource("horizontalpodautoscalers", kindHPA, "hpa")}},
	{GroupVersion: "autoscaling/v1", APIResources: []metav1.APIResource{apiResource("horizontalpodautoscalers", kindHPA, "hpa")}},
	{GroupVersion: "batch/v1", APIResources: []metav1.APIResource{
		apiResource("jobs", "Job"),
		apiResource("cronjobs", "CronJob", "cj"),
	}},
}

func apiResource(plural, kind string, short ...string) metav1.APIResource {
	return metav1.APIResource{Name: plural, SingularName: strings.ToLower(kind), Kind: kind, Namespaced: true,
		ShortNames: short, Verbs: metav1.Verbs{"get", "list"}}
}

func clusterResource(r metav1.APIResource) metav1.APIResource { r.Namespaced = false; return r }

// offlineMapper resolves resource arguments without a cluster.
type offlineMapper struct{ meta.RESTMapper }

func newOfflineMapper() offlineMapper {
	var groups []*restmapper.APIGroupResources
	byGroup := map[string]*restmapper.APIGroupResources{}
	for _, list := range builtinResources {
		gv, _ := schema.ParseGroupVersion(list.GroupVersion)
		g := byGroup[gv.Group]
		if g == nil {
			// The first version listed is the preferred one.
			pref := metav1.GroupVersionForDiscovery{GroupVersion: list.GroupVersion, Version: gv.Version}
			g = &restmapper.APIGroupResources{Group: metav1.APIGroup{Name: gv.Group, PreferredVersion: pref},
				VersionedResources: map[string][]metav1.APIResource{}}
			byGroup[gv.Group] = g
			groups = append(groups, g)
		}
		g.Group.Versions = append(g.Group.Versions, metav1.GroupVersionForDiscovery{GroupVersion: list.GroupVersion, Version: gv.Version})
		g.VersionedResources[gv.Version] = list.APIResources
	}
	return offlineMapper{restmapper.NewDiscoveryRESTMapper(groups)}
}

// KindFor expands short names first, as kubectl's shortcut expander does
// with discovery's short names.
func (m offlineMapper) KindFor(r schema.GroupVersionResource) (schema.GroupVersionKind, error) {
	for _, list := range builtinResources {
		for _, res := range list.APIResources {
			for _, s := range res.ShortNames {
				if strings.EqualFold(r.Resource, s) {
					r.Resource = res.Name
				}
			}
		}
	}
	return m.RESTMapper.KindFor(r)
}

// objectArg is the object named on the command line, before resolution.
type objectArg struct{ typ, name string }

// parseArgs accepts what kubectl accepts for one object: TYPE/NAME or
// TYPE NAME.
func parseArgs(args []string) (objectArg, error) {
	const how = "name one object as TYPE/NAME or TYPE NAME, e.g. kubectl scale-preview deploy/web --replicas=3"
	switch {
	case len(args) == 0:
		return objectArg{}, withCode(ExitUsage, "%s", how)
	case len(args) == 1 && !strings.Contains(args[0], "/"):
		return objectArg{}, withCode(ExitUsage, "%q has no name: %s", args[0], how)
	case len(args) > 2 || (len(args) == 2 && (strings.Contains(args[0], "/") || strings.Contains(args[1], "/"))):
		return objectArg{}, withCode(ExitUsage, "scale-preview previews one object at a time, got %s: %s", strings.Join(args, " "), how)
	}
	typ, name := "", ""
	if len(args) == 2 {
		typ, name = args[0], args[1]
	} else {
		parts := strings.Split(args[0], "/")
		if len(parts) != 2 {
			return objectArg{}, withCode(ExitUsage, "%q is not TYPE/NAME: %s", args[0], how)
		}
		typ, name = parts[0], parts[1]
	}
	switch {
	case typ == "":
		return objectArg{}, withCode(ExitUsage, "missing the type before %q: %s", name, how)
	case name == "":
		return objectArg{}, withCode(ExitUsage, "missing the object name after %q", typ)
	case strings.Contains(typ, ",") || strings.Contains(name, ","):
		return objectArg{}, withCode(ExitUsage, "scale-preview previews one object at a time, got %s", strings.Join(args, " "))
	}
	return objectArg{typ: typ, name: name}, nil
}

// resolve maps the object's type through mapper, the way kubectl's
// resource builder does: as a resource (plural, singular, short name, with
// group and version if given), else as a kind.
func resolve(mapper meta.RESTMapper, a objectArg) (snapshot.Ref, error) {
	gk, err := groupKindFor(mapper, a.typ)
	if err != nil {
		return snapshot.Ref{}, err
	}
	if kind, ok := modelled[gk]; ok {
		return snapshot.Ref{Kind: kind, Name: a.name}, nil
	}
	if why, ok := unsupported[gk]; ok {
		return snapshot.Ref{}, withCode(ExitUnsupported, "unsupported kind %s: %s; supported: deploy, rs, rc, sts, hpa", gk.Kind, why)
	}
	return snapshot.Ref{}, withCode(ExitUnsupported, "unsupported kind %s (%q): scale-preview handles deploy, rs, rc, sts and hpa", gk.String(), a.typ)
}

func groupKindFor(mapper meta.RESTMapper, arg string) (schema.GroupKind, error) {
	fullGVR, gr := schema.ParseResourceArg(arg)
	if fullGVR != nil {
		if gvk, err := mapper.KindFor(*fullGVR); err == nil {
			return gvk.GroupKind(), nil
		}
	}
	gvk, err := mapper.KindFor(gr.WithVersion(""))
	if err == nil {
		return gvk.GroupKind(), nil
	}
	if !meta.IsNoMatchError(err) {
		return schema.GroupKind{}, err // discovery failed: classify says why
	}
	fullGVK, gk := schema.ParseKindArg(arg)
	if fullGVK != nil {
		if m, err := mapper.RESTMapping(fullGVK.GroupKind(), fullGVK.Version); err == nil {
			return m.GroupVersionKind.GroupKind(), nil
		}
	}
	if m, err := mapper.RESTMapping(gk); err == nil {
		return m.GroupVersionKind.GroupKind(), nil
	}
	return schema.GroupKind{}, &unknownTypeError{typ: arg}
}

// unknownTypeError: the mapper knows no resource or kind by that name.
type unknownTypeError struct{ typ string }

func (e *unknownTypeError) Error() string {
	return fmt.Sprintf("unknown resource type %q: scale-preview handles deploy, rs, rc, sts and hpa", e.typ)
}
