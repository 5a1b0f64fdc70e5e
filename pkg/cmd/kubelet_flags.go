package cmd

import (
	"github.com/spf13/pflag"
	certutil "k8s.io/client-go/util/cert"

	"github.com/scale-preview/scale-preview/pkg/snapshot"
	"github.com/scale-preview/scale-preview/pkg/source"
)

// kubeletFlags say how node/NAME reaches the kubelet directly; the names
// are metrics-server's.
type kubeletFlags struct {
	caFile      string
	insecureTLS bool
}

func (o *Options) addKubeletFlags(fl *pflag.FlagSet) {
	fl.StringVar(&o.kubelet.caFile, "kubelet-certificate-authority", "", "For node/NAME: verify the kubelet's serving certificate with this CA file. Default: the kubeconfig's CA.")
	fl.BoolVar(&o.kubelet.insecureTLS, "kubelet-insecure-tls", false, "For node/NAME: send your credentials to a kubelet whose serving certificate does not verify (warned). Not recommended.")
}

// validateKubeletFlags refuses them outside a live node/NAME, and a CA
// file that holds no certificate.
func (o *Options) validateKubeletFlags() error {
	if o.kubelet.caFile == "" && !o.kubelet.insecureTLS {
		return nil
	}
	if o.ref.Kind != snapshot.Node || o.Desired {
		return withCode(ExitUsage, "--kubelet-certificate-authority and --kubelet-insecure-tls apply to node/NAME only")
	}
	if o.offline() {
		return withCode(ExitUsage, "--kubelet-certificate-authority and --kubelet-insecure-tls apply to a live node/NAME; with -f the files are read")
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
	return &source.KubeletAccess{Config: cfg, CAFile: o.kubelet.caFile, InsecureTLS: o.kubelet.insecureTLS}
}
