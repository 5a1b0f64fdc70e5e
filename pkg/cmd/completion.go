package cmd

import (
	"context"
	"slices"
	"strings"

	"github.com/spf13/cobra"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/metadata"
)

// Live completion of the object and of --namespace and --context, as
// kubectl's completion helpers do it (k8s.io/kubectl/pkg/util/completion),
// but through the metadata client: those helpers link kubectl's describers
// and `kubectl get`, about 3 MB of the binary for three lists of names.

type completeFunc func(*cobra.Command, []string, string) ([]string, cobra.ShellCompDirective)

// completeTypeAndName completes TYPE NAME or TYPE/NAME, one object: the
// types offered first, then the names of the type given.
func (o *Options) completeTypeAndName(types []string) completeFunc {
	return func(_ *cobra.Command, args []string, toComplete string) ([]string, cobra.ShellCompDirective) {
		none := cobra.ShellCompDirectiveNoFileComp
		switch typ, prefix, slash := strings.Cut(toComplete, "/"); {
		case len(args) == 1 && !strings.Contains(args[0], "/"):
			return o.liveNames(args[0], toComplete), none
		case len(args) > 0:
			return nil, none
		case slash:
			var out []string
			for _, n := range o.liveNames(typ, prefix) {
				out = append(out, typ+"/"+n)
			}
			return out, none
		}
		var out []string
		for _, t := range types {
			if strings.HasPrefix(t, toComplete) {
				out = append(out, t)
			}
		}
		return out, none
	}
}

// completeNamespace lists the cluster's namespaces.
func (o *Options) completeNamespace(_ *cobra.Command, _ []string, toComplete string) ([]string, cobra.ShellCompDirective) {
	return o.liveNames("namespace", toComplete), cobra.ShellCompDirectiveNoFileComp
}

// completeContext lists the kubeconfig's contexts.
func (o *Options) completeContext(_ *cobra.Command, args []string, toComplete string) ([]string, cobra.ShellCompDirective) {
	cfg, err := o.configFlags.ToRawKubeConfigLoader().RawConfig()
	if err != nil || len(args) > 0 {
		return nil, cobra.ShellCompDirectiveNoFileComp
	}
	var out []string
	for name := range cfg.Contexts {
		if strings.HasPrefix(name, toComplete) {
			out = append(out, name)
		}
	}
	slices.Sort(out)
	return out, cobra.ShellCompDirectiveNoFileComp
}

// liveNames are the names of typ's objects (in the command's namespace
// when namespaced) that start with prefix; none on any error, as a
// completion must stay quiet. The types are the plugin's own and
// namespaces, resolved without discovery (one request a TAB).
func (o *Options) liveNames(typ, prefix string) []string {
	gvr, namespaced := schema.GroupVersionResource{Version: "v1", Resource: "namespaces"}, false
	if typ != "namespace" {
		mapper := newOfflineMapper()
		gvk, err := mapper.KindFor(schema.ParseGroupResource(typ).WithVersion(""))
		if err != nil {
			return nil
		}
		mapping, err := mapper.RESTMapping(gvk.GroupKind(), gvk.Version)
		if err != nil {
			return nil
		}
		gvr, namespaced = mapping.Resource, mapping.Scope.Name() == meta.RESTScopeNameNamespace
	}
	client, err := o.metadataClient()
	if err != nil {
		return nil
	}
	var res metadata.ResourceInterface = client.Resource(gvr)
	if namespaced {
		res = client.Resource(gvr).Namespace(o.commandNamespace())
	}
	list, err := res.List(context.Background(), metav1.ListOptions{})
	if err != nil {
		return nil
	}
	var out []string
	for _, item := range list.Items {
		if strings.HasPrefix(item.Name, prefix) {
			out = append(out, item.Name)
		}
	}
	slices.Sort(out)
	return out
}

func (o *Options) metadataClient() (metadata.Interface, error) {
	if o.metadata != nil {
		return o.metadata, nil
	}
	cfg, err := o.configFlags.ToRESTConfig()
	if err != nil {
		return nil, err
	}
	return metadata.NewForConfig(cfg)
}
