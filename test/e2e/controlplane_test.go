package e2e

import (
	"bufio"
	"context"
	"crypto/rand"
	"crypto/rsa"
	"crypto/tls"
	"crypto/x509"
	"encoding/pem"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
)

// Tokens of the static token file. admin is in system:masters; viewer gets
// the read-only ClusterRole; nobody has no role at all.
const (
	adminToken  = "e2e-admin-token"
	viewerToken = "e2e-viewer-token"
	nobodyToken = "e2e-nobody-token"

	viewerUser = "viewer"
	nobodyUser = "nobody"

	viewerRoleName = "scale-preview-viewer"

	// probeNamespace holds the ReplicaSet used to prove that the
	// controller-manager runs, and to probe the plugin binary.
	probeNamespace = "e2e-probe"
	probeRSName    = "probe"
)

// kcmControllers are the only controllers the suite runs. Without the
// pod-GC, node-lifecycle and namespace controllers, bound pods that are
// deleted stay Terminating forever, which makes deletions easy to observe.
const kcmControllers = "replicaset-controller,deployment-controller,statefulset-controller," +
	"replicationcontroller-controller,garbage-collector-controller"

// process is one control-plane child process with its log file.
type process struct {
	name    string
	cmd     *exec.Cmd
	logPath string
	logFile *os.File
	done    chan struct{}
	err     error
}

func (p *process) exited() bool {
	select {
	case <-p.done:
		return true
	default:
		return false
	}
}

// controlPlane is etcd + kube-apiserver + kube-controller-manager on
// loopback ports in a private temp dir.
type controlPlane struct {
	dir      string
	binDir   string
	etcdURL  string
	apiURL   string
	caData   []byte
	auditLog string
	procs    []*process

	adminConfig *rest.Config
	admin       kubernetes.Interface

	adminKubeconfig  string
	viewerKubeconfig string
	nobodyKubeconfig string
	// deadKubeconfig points at a loopback port where nothing listens.
	deadKubeconfig string

	startDuration time.Duration
}

func freePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}

func freePorts(n int) ([]int, error) {
	// Hold all listeners until we have n distinct ports.
	var ls []net.Listener
	defer func() {
		for _, l := range ls {
			l.Close()
		}
	}()
	var ports []int
	for i := 0; i < n; i++ {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			return nil, err
		}
		ls = append(ls, l)
		ports = append(ports, l.Addr().(*net.TCPAddr).Port)
	}
	return ports, nil
}

func writeServiceAccountKey(path string) error {
	key, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		return err
	}
	b := pem.EncodeToMemory(&pem.Block{Type: "RSA PRIVATE KEY", Bytes: x509.MarshalPKCS1PrivateKey(key)})
	return os.WriteFile(path, b, 0o600)
}

const auditPolicy = `apiVersion: audit.k8s.io/v1
kind: Policy
omitStages:
- RequestReceived
rules:
- level: Metadata
`

func (cp *controlPlane) startProcess(name string, args ...string) (*process, error) {
	logPath := filepath.Join(cp.dir, name+".log")
	f, err := os.Create(logPath)
	if err != nil {
		return nil, err
	}
	cmd := exec.Command(filepath.Join(cp.binDir, name), args...)
	cmd.Stdout = f
	cmd.Stderr = f
	cmd.Dir = cp.dir
	cmd.SysProcAttr = childSysProcAttr()
	fmt.Fprintf(f, "# %s %s\n", name, strings.Join(args, " "))
	if err := cmd.Start(); err != nil {
		f.Close()
		return nil, fmt.Errorf("start %s: %w", name, err)
	}
	p := &process{name: name, cmd: cmd, logPath: logPath, logFile: f, done: make(chan struct{})}
	go func() {
		p.err = cmd.Wait()
		close(p.done)
	}()
	cp.procs = append(cp.procs, p)
	return p, nil
}

// waitFor polls cond until it returns true, the process exits or timeout.
// waitAPIReady waits for kube-apiserver's /readyz as the given token's user.
func waitAPIReady(api *process, apiURL, token string) error {
	insecure := &http.Client{Timeout: 5 * time.Second, Transport: &http.Transport{
		TLSClientConfig: &tls.Config{InsecureSkipVerify: true}, //nolint:gosec // self-signed test server
	}}
	return waitFor(api, 120*time.Second, "kube-apiserver /readyz", func() bool {
		req, _ := http.NewRequest(http.MethodGet, apiURL+"/readyz", nil)
		req.Header.Set("Authorization", "Bearer "+token)
		resp, err := insecure.Do(req)
		if err != nil {
			return false
		}
		resp.Body.Close()
		return resp.StatusCode == http.StatusOK
	})
}

func waitFor(p *process, timeout time.Duration, what string, cond func() bool) error {
	deadline := time.Now().Add(timeout)
	for {
		if cond() {
			return nil
		}
		if p != nil && p.exited() {
			return fmt.Errorf("%s exited (%v) while waiting for %s", p.name, p.err, what)
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("timed out after %s waiting for %s", timeout, what)
		}
		time.Sleep(200 * time.Millisecond)
	}
}

// startControlPlane starts etcd, the API server and the controller-manager,
// and sets up RBAC and kubeconfigs. On error, whatever was started is
// stopped.
func startControlPlane(binDir string) (cp *controlPlane, err error) {
	return startControlPlaneWith(binDir, kcmControllers)
}

// startControlPlaneWith is startControlPlane with the controller-manager's
// --controllers list (the drain test runs a control plane of its own).
func startControlPlaneWith(binDir, controllers string) (cp *controlPlane, err error) {
	return startControlPlaneArgs(binDir, controllers, nil, nil)
}

// startControlPlaneArgs adds flags to kube-apiserver and to the
// controller-manager (the outage test's short node-lifecycle settings).
func startControlPlaneArgs(binDir, controllers string, apiArgs, kcmArgs []string) (cp *controlPlane, err error) {
	start := time.Now()
	dir, err := os.MkdirTemp("", "scale-preview-e2e-")
	if err != nil {
		return nil, err
	}
	cp = &controlPlane{dir: dir, binDir: binDir, auditLog: filepath.Join(dir, "audit.log")}
	defer func() {
		if err != nil {
			fmt.Fprintf(os.Stderr, "control plane failed to start; logs in %s\n%s", dir, cp.logTails(40))
			cp.stop()
		}
	}()

	ports, err := freePorts(3)
	if err != nil {
		return cp, err
	}
	etcdClient, etcdPeer, apiPort := ports[0], ports[1], ports[2]
	cp.etcdURL = fmt.Sprintf("http://127.0.0.1:%d", etcdClient)
	cp.apiURL = fmt.Sprintf("https://127.0.0.1:%d", apiPort)
	peerURL := fmt.Sprintf("http://127.0.0.1:%d", etcdPeer)

	// --- files
	saKey := filepath.Join(dir, "sa.key")
	if err := writeServiceAccountKey(saKey); err != nil {
		return cp, err
	}
	tokens := filepath.Join(dir, "tokens.csv")
	tokenLines := strings.Join([]string{
		adminToken + ",admin,admin-uid,system:masters",
		viewerToken + "," + viewerUser + ",viewer-uid",
		nobodyToken + "," + nobodyUser + ",nobody-uid",
	}, "\n") + "\n"
	if err := os.WriteFile(tokens, []byte(tokenLines), 0o600); err != nil {
		return cp, err
	}
	policy := filepath.Join(dir, "audit-policy.yaml")
	if err := os.WriteFile(policy, []byte(auditPolicy), 0o600); err != nil {
		return cp, err
	}

	// --- etcd
	etcd, err := cp.startProcess("etcd",
		"--name", "e2e",
		"--data-dir", filepath.Join(dir, "etcd-data"),
		"--listen-client-urls", cp.etcdURL,
		"--advertise-client-urls", cp.etcdURL,
		"--listen-peer-urls", peerURL,
		"--initial-advertise-peer-urls", peerURL,
		"--initial-cluster", "e2e="+peerURL,
		"--unsafe-no-fsync",
		"--log-level", "warn",
		// TestScale5000 at 50,000 pods writes several GB of revisions
		// between compactions; the default quota is 2 GB.
		"--quota-backend-bytes", strconv.Itoa(8<<30),
	)
	if err != nil {
		return cp, err
	}
	httpc := &http.Client{Timeout: 2 * time.Second}
	if err := waitFor(etcd, 60*time.Second, "etcd /health", func() bool {
		resp, err := httpc.Get(cp.etcdURL + "/health")
		if err != nil {
			return false
		}
		resp.Body.Close()
		return resp.StatusCode == http.StatusOK
	}); err != nil {
		return cp, err
	}

	// --- kube-apiserver
	certDir := filepath.Join(dir, "certs")
	api, err := cp.startProcess("kube-apiserver", append([]string{
		"--etcd-servers", cp.etcdURL,
		"--bind-address", "127.0.0.1",
		"--advertise-address", "127.0.0.1",
		// A loopback advertise address is only allowed without the
		// endpoint reconciler (nothing here needs the kubernetes Service).
		"--endpoint-reconciler-type", "none",
		"--secure-port", strconv.Itoa(apiPort),
		"--cert-dir", certDir,
		"--token-auth-file", tokens,
		"--authorization-mode", "RBAC",
		"--service-account-issuer", "https://kubernetes.default.svc",
		"--service-account-key-file", saKey,
		"--service-account-signing-key-file", saKey,
		"--disable-admission-plugins", "ServiceAccount",
		"--service-cluster-ip-range", "10.96.0.0/16",
		"--audit-log-path", cp.auditLog,
		"--audit-policy-file", policy,
		"--audit-log-format", "json",
		"--audit-log-mode", "blocking",
		"--profiling=false",
	}, apiArgs...)...)
	if err != nil {
		return cp, err
	}
	if err := waitAPIReady(api, cp.apiURL, adminToken); err != nil {
		return cp, err
	}
	// The API server writes a self-signed serving certificate (with its CA
	// appended) into --cert-dir; trust it instead of skipping verification.
	if b, err := os.ReadFile(filepath.Join(certDir, "apiserver.crt")); err == nil {
		cp.caData = b
	}

	// --- kubeconfigs and admin client
	cp.adminKubeconfig = filepath.Join(dir, "admin.kubeconfig")
	cp.viewerKubeconfig = filepath.Join(dir, "viewer.kubeconfig")
	cp.nobodyKubeconfig = filepath.Join(dir, "nobody.kubeconfig")
	cp.deadKubeconfig = filepath.Join(dir, "dead.kubeconfig")
	for _, kc := range []struct{ path, user, token, server string }{
		{cp.adminKubeconfig, "admin", adminToken, cp.apiURL},
		{cp.viewerKubeconfig, viewerUser, viewerToken, cp.apiURL},
		{cp.nobodyKubeconfig, nobodyUser, nobodyToken, cp.apiURL},
	} {
		if err := writeKubeconfig(kc.path, kc.server, cp.caData, kc.user, kc.token); err != nil {
			return cp, err
		}
	}
	deadPort, err := freePort()
	if err != nil {
		return cp, err
	}
	if err := writeKubeconfig(cp.deadKubeconfig, fmt.Sprintf("https://127.0.0.1:%d", deadPort), cp.caData, viewerUser, viewerToken); err != nil {
		return cp, err
	}
	cp.adminConfig, err = clientcmd.BuildConfigFromFlags("", cp.adminKubeconfig)
	if err != nil {
		return cp, err
	}
	cp.adminConfig.QPS = 200
	cp.adminConfig.Burst = 400
	cp.admin, err = kubernetes.NewForConfig(cp.adminConfig)
	if err != nil {
		return cp, err
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if _, err := cp.admin.Discovery().ServerVersion(); err != nil {
		return cp, fmt.Errorf("admin client cannot reach the API server (TLS with the generated CA?): %w", err)
	}
	if err := cp.setupRBAC(ctx); err != nil {
		return cp, err
	}

	// --- kube-controller-manager
	// TestScale5000 has the ReplicaSet controller create up to 50,000 pods
	// (500 at a time): at 100 requests per second that alone takes 9 min.
	kcmQPS, kcmBurst := "100", "200"
	if os.Getenv("E2E_SCALE") == "1" {
		kcmQPS, kcmBurst = "1000", "2000"
	}
	kcm, err := cp.startProcess("kube-controller-manager", append([]string{
		"--kubeconfig", cp.adminKubeconfig,
		"--controllers", controllers,
		"--leader-elect=false",
		"--secure-port", "0",
		"--concurrent-replicaset-syncs", "5",
		"--kube-api-qps", kcmQPS,
		"--kube-api-burst", kcmBurst,
		"--v", "2",
	}, kcmArgs...)...)
	if err != nil {
		return cp, err
	}
	// The controller-manager has no health endpoint with --secure-port 0:
	// it is "running" once a ReplicaSet gets its pod.
	if err := cp.createProbeReplicaSet(ctx); err != nil {
		return cp, err
	}
	if err := waitFor(kcm, 120*time.Second, "the controller-manager to create the probe pod", func() bool {
		pods, err := cp.admin.CoreV1().Pods(probeNamespace).List(context.Background(), metav1.ListOptions{})
		return err == nil && len(pods.Items) > 0
	}); err != nil {
		return cp, err
	}
	cp.startDuration = time.Since(start)
	return cp, nil
}

func writeKubeconfig(path, server string, caData []byte, user, token string) error {
	cfg := clientcmdapi.NewConfig()
	cluster := clientcmdapi.NewCluster()
	cluster.Server = server
	if len(caData) > 0 {
		cluster.CertificateAuthorityData = caData
	} else {
		cluster.InsecureSkipTLSVerify = true
	}
	cfg.Clusters["e2e"] = cluster
	auth := clientcmdapi.NewAuthInfo()
	auth.Token = token
	cfg.AuthInfos[user] = auth
	kctx := clientcmdapi.NewContext()
	kctx.Cluster = "e2e"
	kctx.AuthInfo = user
	kctx.Namespace = "default"
	cfg.Contexts[user] = kctx
	cfg.CurrentContext = user
	return clientcmd.WriteToFile(*cfg, path)
}

// viewerRules is the least privilege the plugin is documented to need.
func viewerRules() []rbacv1.PolicyRule {
	ro := []string{"get", "list", "watch"}
	return []rbacv1.PolicyRule{
		{APIGroups: []string{""}, Resources: []string{"pods", "replicationcontrollers", "persistentvolumeclaims", "nodes", "namespaces"}, Verbs: ro},
		{APIGroups: []string{"apps"}, Resources: []string{"replicasets", "deployments", "statefulsets", "daemonsets"}, Verbs: ro},
		{APIGroups: []string{"autoscaling"}, Resources: []string{"horizontalpodautoscalers"}, Verbs: ro},
		{APIGroups: []string{"batch"}, Resources: []string{"jobs"}, Verbs: ro},
		{APIGroups: []string{"policy"}, Resources: []string{"poddisruptionbudgets"}, Verbs: ro},
		// pod/NAME (preemption) resolves priorities from the classes.
		{APIGroups: []string{"scheduling.k8s.io"}, Resources: []string{"priorityclasses"}, Verbs: ro},
	}
}

func (cp *controlPlane) setupRBAC(ctx context.Context) error {
	role := &rbacv1.ClusterRole{ObjectMeta: metav1.ObjectMeta{Name: viewerRoleName}, Rules: viewerRules()}
	if _, err := cp.admin.RbacV1().ClusterRoles().Create(ctx, role, metav1.CreateOptions{}); err != nil {
		return fmt.Errorf("create ClusterRole: %w", err)
	}
	// The ClusterRole covers pods cluster-wide, kube-system included (where
	// a plugin may look for the controller-manager's pod and version). The
	// extra RoleBinding in kube-system makes that intent explicit.
	crb := &rbacv1.ClusterRoleBinding{
		ObjectMeta: metav1.ObjectMeta{Name: viewerRoleName},
		RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: viewerRoleName},
		Subjects:   []rbacv1.Subject{{APIGroup: rbacv1.GroupName, Kind: rbacv1.UserKind, Name: viewerUser}},
	}
	if _, err := cp.admin.RbacV1().ClusterRoleBindings().Create(ctx, crb, metav1.CreateOptions{}); err != nil {
		return fmt.Errorf("create ClusterRoleBinding: %w", err)
	}
	ksRole := &rbacv1.Role{
		ObjectMeta: metav1.ObjectMeta{Name: viewerRoleName + "-kube-system-pods", Namespace: metav1.NamespaceSystem},
		Rules:      []rbacv1.PolicyRule{{APIGroups: []string{""}, Resources: []string{"pods"}, Verbs: []string{"get", "list", "watch"}}},
	}
	if _, err := cp.admin.RbacV1().Roles(metav1.NamespaceSystem).Create(ctx, ksRole, metav1.CreateOptions{}); err != nil {
		return fmt.Errorf("create kube-system Role: %w", err)
	}
	rb := &rbacv1.RoleBinding{
		ObjectMeta: metav1.ObjectMeta{Name: ksRole.Name, Namespace: metav1.NamespaceSystem},
		RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "Role", Name: ksRole.Name},
		Subjects:   []rbacv1.Subject{{APIGroup: rbacv1.GroupName, Kind: rbacv1.UserKind, Name: viewerUser}},
	}
	if _, err := cp.admin.RbacV1().RoleBindings(metav1.NamespaceSystem).Create(ctx, rb, metav1.CreateOptions{}); err != nil {
		return fmt.Errorf("create kube-system RoleBinding: %w", err)
	}
	return nil
}

func (cp *controlPlane) createProbeReplicaSet(ctx context.Context) error {
	if _, err := cp.admin.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: probeNamespace}}, metav1.CreateOptions{}); err != nil {
		return err
	}
	labels := map[string]string{"app": probeRSName}
	rs := &appsv1.ReplicaSet{
		ObjectMeta: metav1.ObjectMeta{Name: probeRSName, Namespace: probeNamespace},
		Spec: appsv1.ReplicaSetSpec{
			Replicas: ptrTo(int32(1)),
			Selector: &metav1.LabelSelector{MatchLabels: labels},
			Template: podTemplate(labels, false),
		},
	}
	_, err := cp.admin.AppsV1().ReplicaSets(probeNamespace).Create(ctx, rs, metav1.CreateOptions{})
	return err
}

// stop kills every process (SIGTERM, then SIGKILL) in reverse start order.
func (cp *controlPlane) stop() {
	for i := len(cp.procs) - 1; i >= 0; i-- {
		p := cp.procs[i]
		if !p.exited() {
			_ = p.cmd.Process.Signal(syscall.SIGTERM)
			select {
			case <-p.done:
			case <-time.After(10 * time.Second):
				_ = p.cmd.Process.Kill()
				<-p.done
			}
		}
		p.logFile.Close()
	}
}

// crashed reports control-plane processes that exited on their own.
func (cp *controlPlane) crashed() error {
	var errs []error
	for _, p := range cp.procs {
		if p.exited() {
			errs = append(errs, fmt.Errorf("%s exited: %v", p.name, p.err))
		}
	}
	return errors.Join(errs...)
}

func (cp *controlPlane) logTails(n int) string {
	var b strings.Builder
	for _, p := range cp.procs {
		fmt.Fprintf(&b, "===== last %d lines of %s =====\n%s", n, p.logPath, tailFile(p.logPath, n))
	}
	return b.String()
}

// grepLog returns up to max lines of a process log that contain substr.
func (cp *controlPlane) grepLog(name, substr string, max int) string {
	for _, p := range cp.procs {
		if p.name != name {
			continue
		}
		f, err := os.Open(p.logPath)
		if err != nil {
			return err.Error()
		}
		defer f.Close()
		var lines []string
		sc := bufio.NewScanner(f)
		sc.Buffer(make([]byte, 1<<20), 1<<20)
		for sc.Scan() {
			if strings.Contains(sc.Text(), substr) {
				lines = append(lines, sc.Text())
			}
		}
		if len(lines) > max {
			lines = lines[len(lines)-max:]
		}
		return strings.Join(lines, "\n")
	}
	return ""
}

func tailFile(path string, n int) string {
	b, err := os.ReadFile(path)
	if err != nil {
		return err.Error() + "\n"
	}
	lines := strings.Split(strings.TrimRight(string(b), "\n"), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n") + "\n"
}

func ptrTo[T any](v T) *T { return &v }

// pollUntil polls cond every interval until it returns true or ctx ends.
func pollUntil(ctx context.Context, interval time.Duration, cond func(context.Context) (bool, error)) error {
	return wait.PollUntilContextCancel(ctx, interval, true, cond)
}
