package cmd

import (
	"slices"

	"github.com/spf13/pflag"
	corev1 "k8s.io/api/core/v1"
	certutil "k8s.io/client-go/util/cert"

	"github.com/scale-preview/scale-preview/pkg/snapshot"
	"github.com/scale-preview/scale-preview/pkg/source"
)

// kubeletFlags say how node/NAME reaches the kubelet directly; the names
// are metrics-server's.
type kubeletFlags struct {
	caFile       string
	insecureTLS  bool
	addressTypes []string
}

func (o *Options) addKubeletFlags(fl *pflag.FlagSet) {
	fl.StringVar(&o.kubelet.caFile, "kubelet-certificate-authority", "", "For node/NAME: verify the kubelet's serving certificate with this CA file. Default: the kubeconfig's CA.")
	fl.BoolVar(&o.kubelet.insecureTLS, "kubelet-insecure-tls", false, "For node/NAME: send your credentials to a kubelet whose serving certificate does not verify (warned). Not recommended.")
	fl.StringSliceVar(&o.kubelet.addressTypes, "kubelet-preferred-address-types", nil, "For node/NAME: the node address types to reach the kubelet at, in order. Default: kube-apiserver's, Hostname,InternalDNS,InternalIP,ExternalDNS,ExternalIP.")
}

// validateKubeletFlags refuses them outside a live node/NAME, and a CA
// file that holds no certificate.
func (o *Options) validateKubeletFlags() error {
	if o.kubelet.caFile == "" && !o.kubelet.insecureTLS && o.kubelet.addressTypes == nil {
		return nil
	}
	if o.ref.Kind != snapshot.Node || o.Desired {
		return withCode(ExitUsage, "the --kubelet-* flags apply to node/NAME only")
	}
	if o.offline() {
		return withCode(ExitUsage, "the --kubelet-* flags apply to a live node/NAME; with -f the files are read")
	}
	for _, t := range o.kubelet.addressTypes {
		if !slices.Contains(source.DefaultAddressTypes, corev1.NodeAddressType(t)) {
			return withCode(ExitUsage, "--kubelet-preferred-address-types: unknown address type %q (known: %v)", t, source.DefaultAddressTypes)
		}
	}
	if o.kubelet.caFile != "" {
		if _, err := certutil.NewPool(o.kubelet.caFile); err != nil {
			return withCode(ExitUsage, "--kubelet-certificate-authority: %v", err)
		}
	}
	return nil
}

// kubeletAccess is the direct path for a live node/NAME: the user's own
// REST config (credentials and CA) and the flags. nil without a config
// (an injected client in tests): the node proxy only.
func (o *Options) kubeletAccess() *source.KubeletAccess {
	cfg, err := o.configFlags.ToRESTConfig()
	if err != nil {
		return nil
	}
	a := &source.KubeletAccess{Config: cfg, CAFile: o.kubelet.caFile, InsecureTLS: o.kubelet.insecureTLS}
	for _, t := range o.kubelet.addressTypes {
		a.AddressTypes = append(a.AddressTypes, corev1.NodeAddressType(t))
	}
	return a
}
