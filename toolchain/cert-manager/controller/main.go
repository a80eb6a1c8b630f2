// Command cert-manager-controller runs cert-manager's own controllers (the module
// github.com/cert-manager/cert-manager at the version go.mod pins) against the e2e
// cluster's API server on loopback.
//
// cert-manager's `cmd/controller` is a module of its own that the Go module proxy does not
// serve, so this is the smallest main over the controllers its module exports
// (pkg/controller): it reads the same configuration file and the same flags the platform's
// cert-manager chart gives the controller container (the e2e renders them with the real
// chart, e2e/cert-manager.ts), and refuses any flag it does not know, so a chart that starts
// passing a new one fails the run instead of being ignored. What it leaves out of upstream's
// main: the metrics and health servers, and profiling.
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"reflect"
	"sort"
	"strings"
	"syscall"
	"time"

	"golang.org/x/sync/errgroup"
	"k8s.io/apimachinery/pkg/api/resource"
	"sigs.k8s.io/yaml"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/clientcmd"
	"k8s.io/client-go/tools/leaderelection"
	"k8s.io/client-go/tools/leaderelection/resourcelock"
	"k8s.io/klog/v2"

	controllerpkg "github.com/cert-manager/cert-manager/pkg/controller"
	v1alpha1 "github.com/cert-manager/cert-manager/pkg/apis/config/controller/v1alpha1"

	// Every controller upstream enables by default registers itself on import
	// (internal/apis/config/controller/v1alpha1/defaults.go `DefaultEnabledControllers`),
	// and the gateway shim, which the configuration turns on.
	_ "github.com/cert-manager/cert-manager/pkg/controller/acmechallenges"
	_ "github.com/cert-manager/cert-manager/pkg/controller/acmeorders"
	_ "github.com/cert-manager/cert-manager/pkg/controller/certificate-shim/gateways"
	_ "github.com/cert-manager/cert-manager/pkg/controller/certificate-shim/ingresses"
	_ "github.com/cert-manager/cert-manager/pkg/controller/certificaterequests/acme"
	_ "github.com/cert-manager/cert-manager/pkg/controller/certificaterequests/approver"
	_ "github.com/cert-manager/cert-manager/pkg/controller/certificaterequests/ca"
	_ "github.com/cert-manager/cert-manager/pkg/controller/certificaterequests/selfsigned"
	_ "github.com/cert-manager/cert-manager/pkg/controller/certificaterequests/vault"
	_ "github.com/cert-manager/cert-manager/pkg/controller/certificates/issuing"
	_ "github.com/cert-manager/cert-manager/pkg/controller/certificates/keymanager"
	_ "github.com/cert-manager/cert-manager/pkg/controller/certificates/metrics"
	_ "github.com/cert-manager/cert-manager/pkg/controller/certificates/readiness"
	_ "github.com/cert-manager/cert-manager/pkg/controller/certificates/requestmanager"
	_ "github.com/cert-manager/cert-manager/pkg/controller/certificates/revisionmanager"
	_ "github.com/cert-manager/cert-manager/pkg/controller/certificates/trigger"
	_ "github.com/cert-manager/cert-manager/pkg/controller/clusterissuers"
	_ "github.com/cert-manager/cert-manager/pkg/controller/issuers"
	_ "github.com/cert-manager/cert-manager/pkg/issuer/acme"
	_ "github.com/cert-manager/cert-manager/pkg/issuer/ca"
	_ "github.com/cert-manager/cert-manager/pkg/issuer/selfsigned"
	_ "github.com/cert-manager/cert-manager/pkg/issuer/vault"
)

// The controllers "*" means, as upstream's DefaultEnabledControllers lists them: every one
// registered above but the gateway shim, which the Gateway API setting adds
// (cmd/controller/app/controller.go `enabledControllers`).
const gatewayShim = "gateway-shim"

func enabledControllers(requested []string, gatewayAPI bool) ([]string, error) {
	known := controllerpkg.Known()
	enabled := map[string]bool{}
	for _, name := range requested {
		switch {
		case name == "*":
			for known := range known {
				if known != gatewayShim {
					enabled[known] = true
				}
			}
		case strings.HasPrefix(name, "-"):
			delete(enabled, strings.TrimPrefix(name, "-"))
		default:
			if _, ok := known[name]; !ok {
				return nil, fmt.Errorf("controllers: %q is not a controller this build runs", name)
			}
			enabled[name] = true
		}
	}
	if gatewayAPI {
		enabled[gatewayShim] = true
	}
	names := make([]string, 0, len(enabled))
	for name := range enabled {
		names = append(names, name)
	}
	sort.Strings(names)
	return names, nil
}

func main() {
	if err := run(); err != nil {
		fmt.Fprintf(os.Stderr, "cert-manager-controller: %v\n", err)
		os.Exit(1)
	}
}

func run() error {
	flags := flag.NewFlagSet("cert-manager-controller", flag.ContinueOnError)
	klog.InitFlags(flags)
	kubeconfig := flags.String("kubeconfig", "", "kubeconfig of the API server")
	configFile := flags.String("config", "", "the controller's ControllerConfiguration file")
	clusterResourceNamespace := flags.String("cluster-resource-namespace", "", "namespace of the ClusterIssuers' Secrets")
	leaderElectionNamespace := flags.String("leader-election-namespace", "", "namespace of the leader election Lease")
	solverImage := flags.String("acme-http01-solver-image", "", "image of the ACME HTTP-01 solver pods")
	maxChallenges := flags.Int("max-concurrent-challenges", -1, "ACME challenges processed at once")
	if err := flags.Parse(os.Args[1:]); err != nil {
		return err
	}
	if flags.NArg() > 0 {
		return fmt.Errorf("unexpected arguments %v", flags.Args())
	}

	var data []byte
	if *configFile != "" {
		var err error
		if data, err = os.ReadFile(*configFile); err != nil {
			return err
		}
	}
	config, err := loadConfiguration(data)
	if err != nil {
		return fmt.Errorf("%s: %w", *configFile, err)
	}
	// The flags given override the file, as upstream's options do.
	if *clusterResourceNamespace != "" {
		config.clusterResourceNamespace = *clusterResourceNamespace
	}
	if *leaderElectionNamespace != "" {
		config.leaderElectionNamespace = *leaderElectionNamespace
	}
	solver := defaultSolverImage
	if *solverImage != "" {
		solver = *solverImage
	}
	if *maxChallenges >= 0 {
		config.maxConcurrentChallenges = *maxChallenges
	}
	controllers, err := enabledControllers(config.controllers, config.gatewayAPI)
	if err != nil {
		return err
	}

	ctx, cancel := signal.NotifyContext(context.Background(), syscall.SIGINT, syscall.SIGTERM)
	defer cancel()

	options := controllerpkg.ContextOptions{
		Kubeconfig:         *kubeconfig,
		KubernetesAPIQPS:   config.qps,
		KubernetesAPIBurst: config.burst,
		IssuerOptions: controllerpkg.IssuerOptions{
			ClusterResourceNamespace:        config.clusterResourceNamespace,
			ClusterIssuerAmbientCredentials: true,
		},
		ACMEOptions: controllerpkg.ACMEOptions{
			HTTP01SolverImage:                 solver,
			HTTP01SolverResourceRequestCPU:    resource.MustParse("10m"),
			HTTP01SolverResourceRequestMemory: resource.MustParse("64Mi"),
			HTTP01SolverResourceLimitsCPU:     resource.MustParse("100m"),
			HTTP01SolverResourceLimitsMemory:  resource.MustParse("64Mi"),
			ACMEHTTP01SolverRunAsNonRoot:      true,
			DNS01CheckAuthoritative:           true,
			DNS01CheckRetryPeriod:             10 * time.Second,
		},
		IngressShimOptions: controllerpkg.IngressShimOptions{
			DefaultIssuerKind:                 "Issuer",
			DefaultIssuerGroup:                "cert-manager.io",
			DefaultAutoCertificateAnnotations: []string{"kubernetes.io/tls-acme"},
		},
		CertificateOptions: controllerpkg.CertificateOptions{
			CopiedAnnotationPrefixes:                 []string{"*", "-kubectl.kubernetes.io/", "-fluxcd.io/", "-argocd.argoproj.io/"},
			CertificateRequestMinimumBackoffDuration: time.Hour,
			CertificateRequestMaximumBackoffDuration: 32 * time.Hour,
		},
		SchedulerOptions: controllerpkg.SchedulerOptions{MaxConcurrentChallenges: config.maxConcurrentChallenges},
		ConfigOptions:    controllerpkg.ConfigOptions{EnableGatewayAPI: config.gatewayAPI},
	}

	start := func(ctx context.Context) error {
		factory, err := controllerpkg.NewContextFactory(ctx, options)
		if err != nil {
			return err
		}
		group, ctx := errgroup.WithContext(ctx)
		for _, name := range controllers {
			controller, err := controllerpkg.Known()[name](factory)
			if err != nil {
				return fmt.Errorf("controller %s: %w", name, err)
			}
			group.Go(func() error { return controller.Run(config.workers, ctx) })
		}
		shared, err := factory.Build()
		if err != nil {
			return err
		}
		shared.KubeSharedInformerFactory.Start(ctx.Done())
		shared.SharedInformerFactory.Start(ctx.Done())
		shared.HTTP01ResourceMetadataInformersFactory.Start(ctx.Done())
		if config.gatewayAPI {
			shared.GWShared.Start(ctx.Done())
		}
		klog.Infof("cert-manager-controller: running %d controllers: %s", len(controllers), strings.Join(controllers, ", "))
		return group.Wait()
	}

	if !config.leaderElection {
		return start(ctx)
	}
	// One replica, but the same Lease upstream takes, in the namespace the chart names.
	restConfig, err := clientcmd.BuildConfigFromFlags("", *kubeconfig)
	if err != nil {
		return err
	}
	client, err := kubernetes.NewForConfig(restConfig)
	if err != nil {
		return err
	}
	hostname, _ := os.Hostname()
	lock, err := resourcelock.New(resourcelock.LeasesResourceLock, config.leaderElectionNamespace, "cert-manager-controller", client.CoreV1(), client.CoordinationV1(),
		resourcelock.ResourceLockConfig{Identity: hostname + "-e2e"})
	if err != nil {
		return err
	}
	result := make(chan error, 1)
	leaderelection.RunOrDie(ctx, leaderelection.LeaderElectionConfig{
		Lock:            lock,
		LeaseDuration:   60 * time.Second,
		RenewDeadline:   40 * time.Second,
		RetryPeriod:     15 * time.Second,
		ReleaseOnCancel: true,
		Callbacks: leaderelection.LeaderCallbacks{
			OnStartedLeading: func(ctx context.Context) { result <- start(ctx) },
			OnStoppedLeading: func() {},
		},
	})
	select {
	case err := <-result:
		return err
	case <-time.After(time.Second):
		return ctx.Err()
	}
}

// The release this build is of: toolchain/build.sh sets it (-X main.release) from the one
// version it pins, so the solver image default below names the release's own, as upstream's.
var release = "unset"

// The ACME HTTP-01 solver image upstream defaults to: the release's own.
var defaultSolverImage = "quay.io/jetstack/cert-manager-acmesolver:" + release

// settings: what this main honours of a ControllerConfiguration, with upstream's defaults
// (internal/apis/config/controller/v1alpha1/defaults.go and
// internal/apis/config/shared/v1alpha1/defaults.go of the pinned release; the defaulting
// package itself is not importable here: it imports the Venafi issuer, whose module the
// proxy does not serve). Everything else runs at upstream's default, written in `options`.
type settings struct {
	qps                      float32
	burst                    int
	workers                  int
	clusterResourceNamespace string
	controllers              []string
	leaderElection           bool
	leaderElectionNamespace  string
	maxConcurrentChallenges  int
	gatewayAPI               bool
}

// loadConfiguration decodes a ControllerConfiguration file strictly into cert-manager's own
// v1alpha1 type, and refuses one that sets a field this main does not honour.
func loadConfiguration(data []byte) (settings, error) {
	config := settings{qps: 20, burst: 50, workers: 5, clusterResourceNamespace: "kube-system", controllers: []string{"*"},
		leaderElection: true, leaderElectionNamespace: "kube-system", maxConcurrentChallenges: 60}
	if len(data) == 0 {
		return config, nil
	}
	var file v1alpha1.ControllerConfiguration
	if err := yaml.UnmarshalStrict(data, &file); err != nil {
		return config, err
	}
	if file.APIVersion != "controller.config.cert-manager.io/v1alpha1" || file.Kind != "ControllerConfiguration" {
		return config, fmt.Errorf("apiVersion/kind %s/%s: want controller.config.cert-manager.io/v1alpha1 ControllerConfiguration", file.APIVersion, file.Kind)
	}
	if file.KubernetesAPIQPS != nil {
		config.qps = *file.KubernetesAPIQPS
	}
	if file.KubernetesAPIBurst != nil {
		config.burst = int(*file.KubernetesAPIBurst)
	}
	if file.NumberOfConcurrentWorkers != nil {
		config.workers = int(*file.NumberOfConcurrentWorkers)
	}
	if file.ClusterResourceNamespace != "" {
		config.clusterResourceNamespace = file.ClusterResourceNamespace
	}
	if len(file.Controllers) > 0 {
		config.controllers = file.Controllers
	}
	if file.LeaderElectionConfig.Enabled != nil {
		config.leaderElection = *file.LeaderElectionConfig.Enabled
	}
	if file.LeaderElectionConfig.Namespace != "" {
		config.leaderElectionNamespace = file.LeaderElectionConfig.Namespace
	}
	if file.MaxConcurrentChallenges != nil {
		config.maxConcurrentChallenges = int(*file.MaxConcurrentChallenges)
	}
	//nolint:staticcheck // The deprecated field still turns the Gateway API on upstream.
	if file.EnableGatewayAPI != nil {
		config.gatewayAPI = *file.EnableGatewayAPI
	}
	if file.GatewayAPIConfig.Enabled != nil {
		config.gatewayAPI = *file.GatewayAPIConfig.Enabled
	}
	rest := file
	rest.TypeMeta = v1alpha1.ControllerConfiguration{}.TypeMeta
	rest.KubernetesAPIQPS, rest.KubernetesAPIBurst, rest.NumberOfConcurrentWorkers, rest.MaxConcurrentChallenges = nil, nil, nil, nil
	rest.ClusterResourceNamespace, rest.Controllers = "", nil
	rest.LeaderElectionConfig.Enabled, rest.LeaderElectionConfig.Namespace = nil, ""
	rest.EnableGatewayAPI, rest.GatewayAPIConfig.Enabled = nil, nil //nolint:staticcheck
	if !reflect.DeepEqual(rest, v1alpha1.ControllerConfiguration{}) {
		honoured, _ := yaml.Marshal(rest)
		return config, fmt.Errorf("sets fields this e2e build does not honour (only kubernetesAPIQPS, kubernetesAPIBurst, numberOfConcurrentWorkers, clusterResourceNamespace, controllers, leaderElectionConfig.enabled/namespace, maxConcurrentChallenges, gatewayAPI.enabled): %s", honoured)
	}
	return config, nil
}
